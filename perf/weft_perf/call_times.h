// Per-call times and their tail: the median, the 99th percentile and the slowest call, so that
// stalls a mean over many calls hides show up (--percentiles).
#pragma once

#include <vector>

namespace weft::perf {

struct CallTimes {
  double p50 = 0;  // seconds
  double p99 = 0;
  double max = 0;
};

// Nearest-rank percentiles of `seconds` (one entry a call; empty gives zeros).
CallTimes callTimes(std::vector<double> seconds);

}  // namespace weft::perf
