// The int32 inputs of the in-process tests of the shared-memory paths, and their sums, computed
// with plain loops; buffers on the heap, or in weftMemAlloc memory while
// test::weftMemAllocInForce() is true as they are made (mapped).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tests/api/weft_mem_allocator.h"

namespace weft::test {

using RankBuf = std::vector<int32_t, WeftMemAllocator<int32_t>>;

// Rank r's input element i: different on every rank, of both signs.
inline int32_t input(int r, size_t i) {
  return static_cast<int32_t>((r + 1) * 1000 + static_cast<int>(i % 997)) * (r % 2 ? -1 : 1);
}

// Elements [from, from + count) of rank r's input.
inline RankBuf inputs(int r, size_t count, size_t from = 0) {
  RankBuf v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = input(r, from + i);
  return v;
}

// Element i summed over ranks 0..n-1.
inline int32_t sumAt(int n, size_t i) {
  int64_t s = 0;
  for (int r = 0; r < n; ++r)
    s += input(r, i);
  return static_cast<int32_t>(s);
}

}  // namespace weft::test
