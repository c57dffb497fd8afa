// Element types and reduction operators: sizes, names, and the 16-bit float formats, which are
// reduced through float32 arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "weft/weft.h"

namespace weft {

bool validType(weftDataType_t type);
bool validOp(weftRedOp_t op);
size_t typeSize(weftDataType_t type);
const char* typeName(weftDataType_t type);  // "float32", ...
const char* opName(weftRedOp_t op);         // "sum", ...

// IEEE 754 binary16, rounding to nearest even.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
// bfloat16: the top half of a float32, rounding to nearest even.
inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}
// Branch-free, so loops over it vectorise.
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  uint32_t quietNan = (bits >> 16) | 0x40u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quietNan : rounded);
}

}  // namespace weft
