// The measurement loop of nccl-tests over weft: warm up, time iterations, validate, report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "perf/weft_perf/agreement.h"
#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/json_report.h"
#include "perf/weft_perf/options.h"
#include "perf/weft_perf/report.h"
#include "weft/weft.h"

namespace weft::perf {

struct Summary {
  int failedMeasurements = 0;  // measurements with wrong elements on some rank
  double avgBusBw = 0;
};

// One rank's part of the run, on its own thread. Ranks agree through `agreement`; rank 0
// prints the rows and, given one, writes them to `json`.
class Bench {
 public:
  struct Rank {
    weftComm_t comm;
    weftStream_t stream;  // NULL for blocking calls
    int thread;           // in its process, for the agreement
    int rank;
    int nranks;
  };
  Bench(const Options& options, const Rank& rank, Agreement& agreement, JsonReport* json);
  ~Bench();

  // Every data type, operation, root, cycle and size; rank 0 prints one row per size.
  Summary run();

 private:
  struct Case {
    TypeInfo type;
    OpInfo op;
    int root;
  };
  struct Buffer {
    bool shared;  // from weftMemAlloc
    void operator()(char* p) const;
  };
  std::unique_ptr<char, Buffer> allocate(size_t bytes) const;

  void runCase(const Case& c);
  void runSize(const Case& c, size_t bytes);
  void warmUp(const Case& c, size_t bytes);
  void setSize(const Case& c, size_t bytes);
  // How many places in the buffers successive calls of the current size take in turn.
  size_t places(const Case& c) const;
  void start(const Case& c, bool inPlace, int iter);
  void complete();
  Measurement measure(const Case& c, bool inPlace);
  struct Times {
    double completed;  // seconds a call, until the calls completed
    double returned;   // until they returned (-C)
  };
  Times acrossRanks(Times mine);
  struct Wrong {
    int64_t mine = 0;   // found by this rank
    int64_t total = 0;  // summed over the ranks
  };
  Wrong validate(const Case& c, bool inPlace);
  void print(const std::string& text) const;

  const Options& o_;
  const Rank r_;
  Agreement& agreement_;
  JsonReport* json_;
  size_t bufferBytes_;
  std::unique_ptr<char, Buffer> send_, recv_, expected_;
  CollCounts counts_;  // of the current size
  uint64_t seed_ = 0;  // validation runs so far: each gets new data
  int failed_ = 0;
  double busBwSum_ = 0;
  int results_ = 0;
  std::vector<double> perCall_;  // the current measurement's per-call seconds (--percentiles)
};

}  // namespace weft::perf
