// How ranks split a vector for reduction work: rank r's slice, cut at cache lines so that no two
// ranks write the same line.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

namespace weft {

// Rank r's slice of `count` elements: [first, first + count).
inline std::pair<size_t, size_t> lineSlice(size_t count, size_t elemSize, int nranks, int r) {
  constexpr size_t kLine = 64;
  const size_t perLine = std::max<size_t>(1, kLine / elemSize);
  const size_t lines = (count + perLine - 1) / perLine;
  const auto n = static_cast<size_t>(nranks);
  const size_t first = std::min(count, lines * static_cast<size_t>(r) / n * perLine);
  const size_t end = std::min(count, lines * static_cast<size_t>(r + 1) / n * perLine);
  return {first, end - first};
}

}  // namespace weft
