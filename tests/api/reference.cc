#include "tests/api/reference.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace weft::test {
namespace {

// IEEE binary16 and bfloat16 from a double, written independently of the library: frexp gives
// the exponent, and the mantissa is rounded to nearest even by std::nearbyint.
uint16_t toHalf(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  v = std::fabs(v);
  if (v == 0) return sign;
  int e = 0;
  double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  int exp = e - 1 + 15;
  if (exp <= 0) {  // subnormal: units of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(v * 16777216.0)));
  }
  double frac = std::nearbyint((m * 2 - 1) * 1024);
  if (frac == 1024) {
    frac = 0;
    ++exp;
  }
  if (exp >= 31) return sign | 0x7c00;
  return static_cast<uint16_t>(sign | (exp << 10) | static_cast<int>(frac));
}

double fromHalf(uint16_t h) {
  double sign = (h & 0x8000) ? -1 : 1;
  int exp = (h >> 10) & 0x1f;
  int frac = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(frac, -24);
  if (exp == 31) return frac ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + frac, exp - 25);
}

uint16_t toBf16(double v) {
  float f = static_cast<float>(v);
  uint32_t bits;
  memcpy(&bits, &f, 4);
  uint32_t lower = bits & 0xffff;
  uint32_t upper = bits >> 16;
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1))) ++upper;
  return static_cast<uint16_t>(upper);
}

double fromBf16(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
void put(std::vector<char>& out, size_t i, T v) {
  memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}
template <typename T>
T get(const void* data, size_t i) {
  T v;
  memcpy(&v, static_cast<const char*>(data) + i * sizeof(T), sizeof(T));
  return v;
}

bool isSigned(weftDataType_t t) {
  return t == weftInt8 || t == weftInt32 || t == weftInt64;
}

}  // namespace

size_t sizeOf(weftDataType_t type) {
  switch (type) {
    case weftInt8:
    case weftUint8:
      return 1;
    case weftFloat16:
    case weftBfloat16:
      return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32:
      return 4;
    default:
      return 8;
  }
}

const char* nameOf(weftDataType_t type) {
  static const char* kNames[] = {"int8",   "uint8",   "int32",   "uint32",  "int64",
                                 "uint64", "float16", "float32", "float64", "bfloat16"};
  return kNames[type];
}

const char* nameOf(weftRedOp_t op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  return kNames[op];
}

bool isFloat(weftDataType_t t) {
  return t == weftFloat16 || t == weftFloat32 || t == weftFloat64 || t == weftBfloat16;
}

// Element i of rank r is a function of k = 7r + 13i. The remainders it needs advance by a
// constant with i, so a whole range is generated without a division per element.
std::vector<double> inputs(int rank, size_t begin, size_t count, weftRedOp_t op,
                           weftDataType_t type) {
  std::vector<double> out(count);
  const uint64_t k0 = static_cast<uint64_t>(rank) * 7 + begin * 13;
  if (op == weftProd) {
    // Mostly ones, with a few twos (and minus ones for signed types): products stay small.
    const bool negatives = isSigned(type) || isFloat(type);
    uint64_t two = (k0 + begin) % 9;         // k + i advances by 14 = 5 (mod 9)
    uint64_t minus = (k0 + 3 * begin) % 11;  // k + 3i advances by 16 = 5 (mod 11)
    for (size_t i = 0; i < count; ++i) {
      out[i] = two == 0 ? 2.0 : (negatives && minus == 0 ? -1.0 : 1.0);
      two = (two + 5) % 9;
      minus = (minus + 5) % 11;
    }
    return out;
  }
  const uint64_t period = isFloat(type) ? 33 : 17;
  const double shift = isFloat(type) ? 16 : (isSigned(type) ? 8 : 0);
  const double scale = isFloat(type) ? 0.25 : 1;  // floats: -4..4, signed -8..8, unsigned 0..16
  uint64_t m = k0 % period;
  const uint64_t step = 13 % period;
  for (size_t i = 0; i < count; ++i) {
    out[i] = (static_cast<double>(m) - shift) * scale;
    m += step;
    if (m >= period) m -= period;
  }
  return out;
}

std::vector<char> encode(weftDataType_t type, const std::vector<double>& values) {
  std::vector<char> out(values.size() * sizeOf(type));
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    switch (type) {
      case weftInt8:
        put<int8_t>(out, i, static_cast<int8_t>(v));
        break;
      case weftUint8:
        put<uint8_t>(out, i, static_cast<uint8_t>(v));
        break;
      case weftInt32:
        put<int32_t>(out, i, static_cast<int32_t>(v));
        break;
      case weftUint32:
        put<uint32_t>(out, i, static_cast<uint32_t>(v));
        break;
      case weftInt64:
        put<int64_t>(out, i, static_cast<int64_t>(v));
        break;
      case weftUint64:
        put<uint64_t>(out, i, static_cast<uint64_t>(v));
        break;
      case weftFloat16:
        put<uint16_t>(out, i, toHalf(v));
        break;
      case weftFloat32:
        put<float>(out, i, static_cast<float>(v));
        break;
      case weftFloat64:
        put<double>(out, i, v);
        break;
      case weftBfloat16:
        put<uint16_t>(out, i, toBf16(v));
        break;
      default:
        break;
    }
  }
  return out;
}

double decodeAt(weftDataType_t type, const void* data, size_t i) {
  switch (type) {
    case weftInt8:
      return get<int8_t>(data, i);
    case weftUint8:
      return get<uint8_t>(data, i);
    case weftInt32:
      return get<int32_t>(data, i);
    case weftUint32:
      return get<uint32_t>(data, i);
    case weftInt64:
      return static_cast<double>(get<int64_t>(data, i));
    case weftUint64:
      return static_cast<double>(get<uint64_t>(data, i));
    case weftFloat16:
      return fromHalf(get<uint16_t>(data, i));
    case weftFloat32:
      return get<float>(data, i);
    case weftFloat64:
      return get<double>(data, i);
    case weftBfloat16:
      return fromBf16(get<uint16_t>(data, i));
    default:
      return NAN;
  }
}

std::vector<double> reduceAcrossRanks(int nranks, size_t begin, size_t count, weftRedOp_t op,
                                      weftDataType_t type) {
  // Every rank's inputs repeat with the period of their remainders (see inputs()), so one
  // period is reduced and then repeated.
  const size_t period = op == weftProd ? 9 * 11 : (isFloat(type) ? 33 : 17);
  const size_t span = std::min(count, period);
  std::vector<double> acc = inputs(0, begin, span, op, type);
  for (int r = 1; r < nranks; ++r) {
    const std::vector<double> mine = inputs(r, begin, span, op, type);
    for (size_t i = 0; i < span; ++i) {
      double v = mine[i];
      switch (op) {
        case weftProd:
          acc[i] *= v;
          break;
        case weftMax:
          acc[i] = std::max(acc[i], v);
          break;
        case weftMin:
          acc[i] = std::min(acc[i], v);
          break;
        default:
          acc[i] += v;
          break;
      }
    }
  }
  if (op == weftAvg) {
    for (double& a : acc) {
      a /= nranks;
      if (!isFloat(type)) a = std::trunc(a);
    }
  }
  std::vector<double> out(count);
  for (size_t i = 0; i < count; ++i)
    out[i] = acc[i % period];
  return out;
}

// The inputs are multiples of 0.25 of magnitude at most 4 (products: 1, 2 and -1), so every
// partial result is exact wherever the type holds it: sums, minima, maxima and products must
// match exactly, and an average rounds once, at its division (computed through float32 for the
// 16-bit types, which may add a float32 rounding). Only sums whose magnitudes pass
// what the type holds exactly (2^p / 4: 64 for bfloat16, 512 for float16) round on the way.
double tolerance(weftDataType_t type, weftRedOp_t op, int nranks, double expected) {
  if (!isFloat(type)) return 0;
  const int bits = type == weftFloat16    ? 11
                   : type == weftBfloat16 ? 8
                   : type == weftFloat32  ? 24
                                          : 53;  // significand bits, the implicit one included
  auto halfUlp = [bits](double x) {
    int e = 0;
    std::frexp(std::max(std::fabs(x), 0.25), &e);
    return std::ldexp(0.5, e - bits);
  };
  const double magnitude = 4.0 * nranks;
  double tol = magnitude > std::ldexp(0.25, bits) ? nranks * halfUlp(magnitude) : 0;
  if (op == weftAvg) tol += halfUlp(expected) + std::ldexp(std::fabs(expected), -24);
  return tol;
}

std::string compare(weftDataType_t type, weftRedOp_t op, int nranks, const void* got,
                    const std::vector<double>& expected) {
  size_t wrong = 0;
  std::ostringstream first;
  for (size_t i = 0; i < expected.size(); ++i) {
    double g = decodeAt(type, got, i);
    double tol = tolerance(type, op, nranks, expected[i]);
    if (!(std::fabs(g - expected[i]) <= tol)) {
      if (wrong == 0) {
        first << "element " << i << " is " << g << ", expected " << expected[i] << " (tolerance "
              << tol << ")";
      }
      ++wrong;
    }
  }
  if (wrong == 0) return "";
  std::ostringstream out;
  out << wrong << " of " << expected.size() << " elements wrong (" << nameOf(type) << " "
      << nameOf(op) << "); first: " << first.str();
  return out.str();
}

}  // namespace weft::test
