// The measurement loop of nccl-tests over weft: warm up, time iterations, validate, report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/options.h"
#include "weft/weft.h"

namespace weft::perf {

// A weft call failed; the message names the call and weft's own explanation.
class WeftError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void checkWeft(weftResult_t result, const char* call, weftComm_t comm);

struct Summary {
  int failedMeasurements = 0;  // measurements with wrong elements on some rank
  double avgBusBw = 0;
};

class Bench {
 public:
  // stream is NULL for blocking calls.
  Bench(const Options& options, weftComm_t comm, weftStream_t stream, int rank, int nranks);
  ~Bench();

  // Every data type, operation, root and size; rank 0 prints one row per size.
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
  void warmUp(const Case& c, size_t bytes);
  void setSize(const Case& c, size_t bytes);
  // How many places in the buffers successive calls of the current size take in turn.
  size_t places(const Case& c) const;
  void start(const Case& c, bool inPlace, int iter);
  void complete();
  void barrier();
  void measure(const Case& c, bool inPlace);
  double acrossRanks(double seconds);
  struct Wrong {
    int64_t mine = 0;   // found by this rank
    int64_t total = 0;  // summed over the ranks
  };
  Wrong validate(const Case& c, bool inPlace);
  void print(const std::string& text) const;

  const Options& o_;
  weftComm_t comm_;
  weftStream_t stream_;
  int rank_;
  int nranks_;
  size_t bufferBytes_;
  std::unique_ptr<char, Buffer> send_, recv_, expected_;
  CollCounts counts_;  // of the current size
  uint64_t seed_ = 0;  // validation runs so far: each gets new data
  int failed_ = 0;
  double busBwSum_ = 0;
  int results_ = 0;
};

}  // namespace weft::perf
