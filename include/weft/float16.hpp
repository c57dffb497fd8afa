// The 16-bit float formats Weft carries (weftFloat16, weftBfloat16) and float32, converted both
// ways with rounding to nearest even: header-only, for the library and for its users alike.
// loadFloat and storeFloat take one element of any of the three by its weftDataType_t.
#pragma once

#include <cstdint>
#include <cstring>

#include "weft/weft.h"

namespace weft {

// IEEE 754 binary16.
inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalise it for float32.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ffu;
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits >= 0x7f800000u) {  // inf or nan; keep nan quiet
    return static_cast<uint16_t>(sign | 0x7c00u | (absBits > 0x7f800000u ? 0x200u : 0u));
  }
  if (absBits >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absBits < 0x38800000u) {
    // Result is subnormal or zero: shift the mantissa with its hidden bit into place.
    if (absBits < 0x33000000u) return sign;  // below half the smallest subnormal
    uint32_t exponent = absBits >> 23;
    uint32_t mantissa = (absBits & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent;  // 14..24
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t rounded = absBits + 0xfffu + ((absBits >> 13) & 1u);  // round to nearest even
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

// bfloat16: the top half of a float32.
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

// One element of weftFloat32, weftBfloat16 or weftFloat16 as a float, and back.
inline float loadFloat(weftDataType_t type, const void* element) {
  uint16_t bits = 0;
  float f = 0;
  switch (type) {
    case weftBfloat16:
      memcpy(&bits, element, sizeof(bits));
      return bf16ToFloat(bits);
    case weftFloat16:
      memcpy(&bits, element, sizeof(bits));
      return halfToFloat(bits);
    default:
      memcpy(&f, element, sizeof(f));
      return f;
  }
}

inline void storeFloat(float value, weftDataType_t type, void* element) {
  uint16_t bits = 0;
  switch (type) {
    case weftBfloat16:
      bits = floatToBf16(value);
      memcpy(element, &bits, sizeof(bits));
      return;
    case weftFloat16:
      bits = floatToHalf(value);
      memcpy(element, &bits, sizeof(bits));
      return;
    default:
      memcpy(element, &value, sizeof(value));
  }
}

}  // namespace weft
