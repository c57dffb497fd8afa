#include "collectives/datatype.h"

#include "weft/weft.hpp"

namespace weft {

bool validType(weftDataType_t type) {
  return static_cast<int>(type) >= 0 && static_cast<int>(type) < weftNumTypes;
}

bool validOp(weftRedOp_t op) {
  return static_cast<int>(op) >= 0 && static_cast<int>(op) < weftNumOps;
}

size_t typeSize(weftDataType_t type) {
  return sizeOf(type);  // the public C++ API's (weft/weft.hpp)
}

const char* typeName(weftDataType_t type) {
  switch (type) {
    case weftInt8:
      return "int8";
    case weftUint8:
      return "uint8";
    case weftInt32:
      return "int32";
    case weftUint32:
      return "uint32";
    case weftInt64:
      return "int64";
    case weftUint64:
      return "uint64";
    case weftFloat16:
      return "float16";
    case weftFloat32:
      return "float32";
    case weftFloat64:
      return "float64";
    case weftBfloat16:
      return "bfloat16";
    default:
      return "invalid type";
  }
}

const char* opName(weftRedOp_t op) {
  switch (op) {
    case weftSum:
      return "sum";
    case weftProd:
      return "prod";
    case weftMax:
      return "max";
    case weftMin:
      return "min";
    case weftAvg:
      return "avg";
    default:
      return "invalid op";
  }
}

float halfToFloat(uint16_t h) {
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

uint16_t floatToHalf(float f) {
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

}  // namespace weft
