// Command line of weft-perf: nccl-tests' flags and defaults.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/types.h"

namespace weft::perf {

// How the per-rank times of one measurement become the reported one (nccl-tests' -a).
enum class TimeAcrossRanks { kRank0 = 0, kAverage = 1, kMin = 2, kMax = 3 };

struct Options {
  Coll coll = Coll::kAllReduce;
  size_t minBytes = 32u << 20;
  size_t maxBytes = 32u << 20;
  size_t stepBytes = 1u << 20;
  size_t stepFactor = 1;  // > 1: multiply sizes by it instead of adding stepBytes
  int iters = 20;
  int warmupIters = 5;
  int aggIters = 1;  // calls per iteration, grouped with weftGroupStart/End
  int check = 1;     // validation runs per measurement
  std::vector<TypeInfo> types = {typeInfo(weftFloat32)};
  std::vector<OpInfo> ops = {{weftSum, "sum"}};
  int root = 0;                // -1: every rank in turn
  bool blocking = false;       // true: NULL stream; false: a weft CPU stream
  bool sharedBuffers = false;  // buffers from weftMemAlloc (-R 1), as nccl-tests' -R
  TimeAcrossRanks timeAcrossRanks = TimeAcrossRanks::kAverage;
  int threads = 1;                 // ranks per process, each a thread (-t)
  int runCycles = 1;               // sweeps over the sizes; 0 repeats them until stopped (-N)
  int timeoutSeconds = 0;          // > 0: a call that waits longer fails the run (-T)
  bool reportCpuTime = false;      // time until the calls returned, not until they completed (-C)
  std::string outputFile;          // JSON results (-J); empty for none
  std::optional<double> minBusBw;  // GB/s: a lower average bus bandwidth fails the run
  int busy = 0;                    // compute threads per rank for the whole run (--busy)
  bool percentiles = false;        // time each call; report p50, p99, max (--percentiles)
};

// The environment variable that sets Options::minBusBw when --min_bw does not.
constexpr const char* kMinBusBwVariable = "WEFT_TESTS_MIN_BW";

// Either options to run with, or an exit code and a text to print (help or an error).
struct ParseResult {
  std::optional<Options> options;
  int exitCode = 0;
  std::string message;  // to stdout when exitCode is 0, else to stderr
};

// argv[0] may itself name the collective (a link called all_reduce_perf); otherwise the
// first positional argument does. minBusBwFromEnv is WEFT_TESTS_MIN_BW's value, if set.
ParseResult parseOptions(int argc, const char* const* argv, const char* minBusBwFromEnv);

// "64", "1.5K", "32M", "1G" (powers of 1024, either case), as nccl-tests' -b and -e.
std::optional<size_t> parseSize(std::string_view text);

// The sizes measured, from minBytes up to maxBytes.
std::vector<size_t> sizeList(const Options& options);

}  // namespace weft::perf
