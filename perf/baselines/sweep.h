// The measurement loop of weft-perf over another library (Open MPI, Gloo), so that their numbers
// compare with weft's: the same flags (weft-perf's parser), sizes, buffer layout, bandwidth
// formulas and validation, out of place only, float32 sum.
//
// Rank 0 prints one machine-readable line per size, after '#' comment lines:
//   # library mpi collective all_reduce ranks 2 type float32 op sum iters 20 warmup 5
//   # size_bytes count time_us algbw_GBps busbw_GBps wrong
//   1048576 262144 163.12 6.428 6.428 0
// With --percentiles each line ends with p50_us p99_us max_us, of each call's slowest rank.
// --busy runs weft-perf's compute threads beside the calls.
// size_bytes is weft-perf's size column, time_us the mean time per call combined over the ranks
// as -a says (as weft-perf: 1 the average, 3 the slowest rank, 2 the fastest, 0 rank 0's), busbw
// algbw times weft-perf's factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all
// (n-1)/n; broadcast, reduce 1) and wrong the elements that failed the check (-1: not checked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/options.h"

namespace weft::perf {

// One library's side of the loop. Calls are collective: every rank makes the same ones.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // One blocking float32-sum call with weft's arguments: count is the per-call element count
  // weft-perf passes (collCounts().paramCount); root matters to broadcast and reduce.
  virtual void run(Coll coll, const float* send, float* recv, size_t count, int root) = 0;
  virtual void barrier() = 0;
  // Element by element; every rank gets the result.
  virtual void maxOverRanks(std::vector<double>& values) = 0;
  virtual void sumOverRanks(std::vector<double>& values) = 0;
};

// Checks that the options are ones a baseline runs (float32, sum, one root, no -m); returns an
// error text or "".
const char* unsupportedOption(const Options& options);

// Warms up, then measures every size and prints its line on rank 0. Returns the number of
// sizes whose check found wrong elements.
int runSweep(const Options& options, Backend& backend, const char* library);

}  // namespace weft::perf
