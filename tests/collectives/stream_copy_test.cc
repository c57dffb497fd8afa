// streamCopy against a byte loop: starts of source and destination across a line, lengths around
// the 16-byte store and the 64-byte block, and a large copy.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collectives/stream_copy.h"

namespace weft {
namespace {

uint8_t pattern(size_t i) {
  return static_cast<uint8_t>(i * 131 + 7);
}

// Copies `bytes` from src + srcOff to dst + dstOff and checks the copy and the bytes around it.
void check(size_t srcOff, size_t dstOff, size_t bytes) {
  std::vector<uint8_t> src(bytes + 128), dst(bytes + 128, 0xEE);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = pattern(i);
  streamCopy(dst.data() + dstOff, src.data() + srcOff, bytes);
  for (size_t i = 0; i < dst.size(); ++i) {
    const bool inside = i >= dstOff && i < dstOff + bytes;
    const uint8_t want = inside ? pattern(i - dstOff + srcOff) : 0xEE;
    ASSERT_EQ(dst[i], want) << "src+" << srcOff << " dst+" << dstOff << " bytes " << bytes << " at "
                            << i;
  }
}

TEST(StreamCopy, AlignmentsAndLengths) {
  for (size_t srcOff = 0; srcOff < 64; srcOff += 5) {
    for (size_t dstOff = 0; dstOff < 64; ++dstOff) {
      for (size_t bytes : {0, 1, 15, 16, 17, 63, 64, 65, 79, 80, 81, 127, 128, 129, 1000})
        check(srcOff, dstOff, bytes);
    }
  }
}

TEST(StreamCopy, Large) {
  check(3, 17, (size_t{8} << 20) + 77);
  check(0, 0, size_t{8} << 20);
}

}  // namespace
}  // namespace weft
