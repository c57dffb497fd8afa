// The reduction loops and the 16-bit float conversions, against references written here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "collectives/datatype.h"
#include "collectives/reduce.h"

namespace weft {
namespace {

// binary16 decoded by definition, without the library.
double halfValue(uint16_t h) {
  int sign = (h >> 15) ? -1 : 1;
  int exp = (h >> 10) & 31;
  int frac = h & 1023;
  if (exp == 0) return sign * std::ldexp(frac, -24);
  if (exp == 31) return frac ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + frac, exp - 25);
}

TEST(HalfConversion, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    double expected = halfValue(static_cast<uint16_t>(h));
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), expected) << "half 0x" << std::hex << h;
    ASSERT_EQ(floatToHalf(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(HalfConversion, RoundsToNearestEven) {
  // Between 1 and the next half (1 + 2^-10): the midpoint goes to the even one (1).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(floatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);      // half the smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);      // above it
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24) * 3), 0x0003);  // subnormal, exact
}

TEST(Bf16Conversion, RoundTripAndRounding) {
  for (uint32_t b = 0; b < 65536; b += 7) {
    float f = bf16ToFloat(static_cast<uint16_t>(b));
    uint32_t bits;
    memcpy(&bits, &f, 4);
    EXPECT_EQ(bits >> 16, b);
    if (!std::isnan(f)) {
      EXPECT_EQ(floatToBf16(f), b);
    }
  }
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
}

template <typename T>
std::vector<T> series(size_t n, int seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<T>(static_cast<int>((i * 37 + seed) % 19) - 9);
  return v;
}

// Checks dst = a (op) b for one plain type, every operator, in all three aliasing forms.
template <typename T>
void checkPlain(weftDataType_t type) {
  const size_t n = 1027;  // not a multiple of any vector width
  for (weftRedOp_t op : {weftSum, weftProd, weftMax, weftMin, weftAvg}) {
    SCOPED_TRACE(std::string(typeName(type)) + " " + opName(op));
    ReduceFn fn = reduceFunction(type, op);
    ASSERT_NE(fn, nullptr);
    auto a = series<T>(n, 1);
    auto b = series<T>(n, 5);
    std::vector<T> expected(n);
    for (size_t i = 0; i < n; ++i) {
      long double x = a[i];
      long double y = b[i];
      long double r = op == weftProd  ? x * y
                      : op == weftMax ? std::max(x, y)
                      : op == weftMin ? std::min(x, y)
                                      : x + y;
      expected[i] = static_cast<T>(r);
    }
    std::vector<T> out(n);
    fn(out.data(), a.data(), b.data(), n);
    EXPECT_EQ(out, expected);
    std::vector<T> inA = a;
    fn(inA.data(), inA.data(), b.data(), n);
    EXPECT_EQ(inA, expected);
    std::vector<T> inB = b;
    fn(inB.data(), a.data(), inB.data(), n);
    EXPECT_EQ(inB, expected);
  }
}

TEST(Reduce, PlainTypes) {
  checkPlain<int8_t>(weftInt8);
  checkPlain<int32_t>(weftInt32);
  checkPlain<int64_t>(weftInt64);
  checkPlain<float>(weftFloat32);
  checkPlain<double>(weftFloat64);
}

TEST(Reduce, UnsignedTypesAndWrapping) {
  std::vector<uint8_t> a = {250, 3, 0, 128};
  std::vector<uint8_t> b = {10, 7, 0, 2};
  std::vector<uint8_t> out(4);
  reduceFunction(weftUint8, weftSum)(out.data(), a.data(), b.data(), 4);
  EXPECT_EQ(out, (std::vector<uint8_t>{4, 10, 0, 130}));
  reduceFunction(weftUint8, weftProd)(out.data(), a.data(), b.data(), 4);
  EXPECT_EQ(out, (std::vector<uint8_t>{196, 21, 0, 0}));
  // Signed overflow wraps like the hardware instead of being undefined.
  std::vector<int32_t> x = {INT32_MAX, INT32_MIN};
  std::vector<int32_t> y = {1, -1};
  std::vector<int32_t> z(2);
  reduceFunction(weftInt32, weftSum)(z.data(), x.data(), y.data(), 2);
  EXPECT_EQ(z, (std::vector<int32_t>{INT32_MIN, INT32_MAX}));
  std::vector<uint64_t> u = {UINT64_MAX, 5};
  std::vector<uint64_t> w = {3, 9};
  std::vector<uint64_t> m(2);
  reduceFunction(weftUint64, weftMax)(m.data(), u.data(), w.data(), 2);
  EXPECT_EQ(m, (std::vector<uint64_t>{UINT64_MAX, 9}));
}

TEST(Reduce, HalfTypesThroughFloat) {
  // 1 + 2^-11 is not a half; in float32 arithmetic 1 + (2^-11 + 2^-11) is, exactly.
  std::vector<uint16_t> a = {floatToHalf(1.0f), floatToHalf(2.5f), floatToHalf(-3.0f)};
  std::vector<uint16_t> b = {floatToHalf(0.5f), floatToHalf(0.25f), floatToHalf(7.0f)};
  std::vector<uint16_t> out(3);
  reduceFunction(weftFloat16, weftSum)(out.data(), a.data(), b.data(), 3);
  EXPECT_EQ(halfValue(out[0]), 1.5);
  EXPECT_EQ(halfValue(out[1]), 2.75);
  EXPECT_EQ(halfValue(out[2]), 4.0);
  reduceFunction(weftFloat16, weftMin)(out.data(), a.data(), b.data(), 3);
  EXPECT_EQ(halfValue(out[2]), -3.0);
  std::vector<uint16_t> c = {floatToBf16(3.0f), floatToBf16(-2.0f)};
  std::vector<uint16_t> d = {floatToBf16(4.0f), floatToBf16(8.0f)};
  std::vector<uint16_t> e(2);
  reduceFunction(weftBfloat16, weftProd)(e.data(), c.data(), d.data(), 2);
  EXPECT_EQ(bf16ToFloat(e[0]), 12.0f);
  EXPECT_EQ(bf16ToFloat(e[1]), -16.0f);
}

// A 16-bit float format, decoded here from its bits alone (independently of weft/float16.hpp).
struct HalfFormat {
  weftDataType_t type;
  int exponentBits, mantissaBits;
  double value(uint16_t bits) const {
    const int bias = (1 << (exponentBits - 1)) - 1;
    const int e = (bits >> mantissaBits) & ((1 << exponentBits) - 1);
    const double m = bits & ((1 << mantissaBits) - 1);
    if (e == (1 << exponentBits) - 1)
      return m == 0 ? ((bits & 0x8000) ? -INFINITY : INFINITY) : NAN;
    const double magnitude = e == 0 ? std::ldexp(m, 1 - bias - mantissaBits)
                                    : std::ldexp(1 + std::ldexp(m, -mantissaBits), e - bias);
    return (bits & 0x8000) != 0 ? -magnitude : magnitude;
  }
  double largest() const {
    const uint32_t topExponent = (1u << exponentBits) - 2;
    return value(static_cast<uint16_t>(topExponent << mantissaBits | ((1u << mantissaBits) - 1)));
  }
  // Half a unit in the last place at x (subnormals have a fixed unit).
  double halfUlp(double x) const {
    const int bias = (1 << (exponentBits - 1)) - 1;
    int exp = 0;
    std::frexp(x, &exp);
    return std::ldexp(0.5, std::max(exp - 1 - mantissaBits, 1 - bias - mantissaBits));
  }
  // Finite values of both signs and many exponents, by their bits.
  uint16_t finite(size_t i, uint32_t mul, uint32_t add, size_t negEvery) const {
    const uint32_t infinity = ((1u << exponentBits) - 1) << mantissaBits;
    return static_cast<uint16_t>((i * mul + add) % infinity) | (i % negEvery == 0 ? 0x8000 : 0);
  }
};
const HalfFormat kHalfFormats[] = {{weftFloat16, 5, 10}, {weftBfloat16, 8, 7}};

// Every operator of both 16-bit formats, long enough for the vector paths (F16C for float16,
// AVX2 clones elsewhere) with a tail: each result rounded once to the nearest value.
TEST(Reduce, HalfTypesLongVectors) {
  const size_t n = 1027;
  for (const HalfFormat& f : kHalfFormats) {
    std::vector<uint16_t> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = f.finite(i, 2654435761u, 0, 3);
      b[i] = f.finite(i, 40503u, 7, 5);
    }
    for (weftRedOp_t op : {weftSum, weftProd, weftMax, weftMin}) {
      SCOPED_TRACE(std::string(typeName(f.type)) + " " + opName(op));
      std::vector<uint16_t> out(n);
      reduceFunction(f.type, op)(out.data(), a.data(), b.data(), n);
      for (size_t i = 0; i < n; ++i) {
        const double x = f.value(a[i]);
        const double y = f.value(b[i]);
        const double e = op == weftSum    ? x + y
                         : op == weftProd ? x * y
                         : op == weftMax  ? std::max(x, y)
                                          : std::min(x, y);
        const double got = f.value(out[i]);
        if (std::fabs(e) > f.largest() + f.halfUlp(f.largest())) {
          ASSERT_TRUE(std::isinf(got)) << i << ": " << x << " op " << y << " = " << got;
          continue;
        }
        // Through float32 first for bfloat16, whose products may round twice.
        const double slack = f.type == weftBfloat16 ? std::ldexp(std::fabs(e), -24) : 0;
        ASSERT_LE(std::fabs(got - e), f.halfUlp(e) + slack) << i << ": " << x << " op " << y;
      }
    }
  }
}

// An average's division, for every float type: the quotient rounded once (so dividing by n - 1,
// or not at all, is caught).
TEST(Reduce, AverageDividesEveryFloatTypeByTheRankCount) {
  for (const HalfFormat& f : kHalfFormats) {
    for (int divisor : {2, 3, 5, 7, 8}) {
      SCOPED_TRACE(std::string(typeName(f.type)) + " / " + std::to_string(divisor));
      std::vector<uint16_t> v(512);
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = f.finite(i, 2654435761u, 11, 4);
      std::vector<uint16_t> out = v;
      finishAverage(out.data(), out.size(), f.type, divisor);
      for (size_t i = 0; i < v.size(); ++i) {
        const double e = f.value(v[i]) / divisor;
        ASSERT_LE(std::fabs(f.value(out[i]) - e), f.halfUlp(e) + std::ldexp(std::fabs(e), -24))
            << i << ": " << f.value(v[i]);
      }
    }
  }
  std::vector<float> x = {1.0f, -7.0f, 0.1f};
  finishAverage(x.data(), x.size(), weftFloat32, 3);
  EXPECT_EQ(x, (std::vector<float>{1.0f / 3, -7.0f / 3, 0.1f / 3}));
}

TEST(Reduce, AverageDivides) {
  std::vector<int32_t> i = {7, -7, 9};
  finishAverage(i.data(), 3, weftInt32, 2);
  EXPECT_EQ(i, (std::vector<int32_t>{3, -3, 4}));  // truncates toward zero
  std::vector<uint8_t> u = {255, 3};
  finishAverage(u.data(), 2, weftUint8, 200);  // a divisor beyond the type's range
  EXPECT_EQ(u, (std::vector<uint8_t>{1, 0}));
  std::vector<double> f = {1.0, 3.0};
  finishAverage(f.data(), 2, weftFloat64, 4);
  EXPECT_EQ(f, (std::vector<double>{0.25, 0.75}));
  std::vector<uint16_t> h = {floatToHalf(3.0f)};
  finishAverage(h.data(), 1, weftFloat16, 2);
  EXPECT_EQ(halfValue(h[0]), 1.5);
}

TEST(Reduce, RejectsInvalidTypesAndOps) {
  EXPECT_EQ(reduceFunction(static_cast<weftDataType_t>(10), weftSum), nullptr);
  EXPECT_EQ(reduceFunction(weftFloat32, static_cast<weftRedOp_t>(5)), nullptr);
  EXPECT_FALSE(validType(static_cast<weftDataType_t>(-1)));
  EXPECT_EQ(typeSize(weftBfloat16), 2u);
  EXPECT_STREQ(typeName(weftFloat16), "float16");
}

}  // namespace
}  // namespace weft
