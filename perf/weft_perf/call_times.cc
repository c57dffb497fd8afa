#include "perf/weft_perf/call_times.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace weft::perf {
namespace {

// The smallest value that at least `fraction` of the calls do not exceed.
double nearestRank(const std::vector<double>& sorted, double fraction) {
  const size_t rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

CallTimes callTimes(std::vector<double> seconds) {
  if (seconds.empty()) return {};
  std::sort(seconds.begin(), seconds.end());
  return {nearestRank(seconds, 0.5), nearestRank(seconds, 0.99), seconds.back()};
}

}  // namespace weft::perf
