// The -J file: the run's settings, one record per measured size and the summary, in JSON with
// nccl-tests' keys. Records are written as they are measured, so a run stopped early (-N 0)
// leaves every row it printed, in a document that lacks only its end.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

#include "perf/weft_perf/options.h"
#include "perf/weft_perf/report.h"

namespace weft::perf {

struct RowKey {
  size_t bytes = 0;  // the size column
  size_t count = 0;
  const char* type = "";
  const char* op = "";
  int root = -1;
};

class JsonReport {
 public:
  JsonReport() = default;
  ~JsonReport();
  JsonReport(const JsonReport&) = delete;
  JsonReport& operator=(const JsonReport&) = delete;

  // Creates or truncates `path`; false, with the reason in *error, where it cannot.
  bool open(const std::string& path, std::string* error);
  void begin(const Options& options, int nranks);
  void record(const RowKey& key, const Measurement& outOfPlace, const Measurement& inPlace);
  void end(int failedMeasurements, double avgBusBw, std::optional<double> minBusBw);

 private:
  void write(const std::string& text);

  std::FILE* file_ = nullptr;
  bool cpuTime_ = false;
  bool firstRecord_ = true;
};

}  // namespace weft::perf
