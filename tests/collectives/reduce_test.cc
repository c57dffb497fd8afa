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

// Long enough for the vector paths (F16C for float16, AVX2 clones elsewhere), with a tail.
TEST(Reduce, HalfTypesLongVectors) {
  const size_t n = 1027;
  std::vector<uint16_t> a(n);
  std::vector<uint16_t> b(n);
  for (size_t i = 0; i < n; ++i) {
    // Finite halves of both signs and many exponents, by their bits.
    a[i] = static_cast<uint16_t>((i * 2654435761u) % 0x7c00u) | ((i % 3 == 0) ? 0x8000 : 0);
    b[i] = static_cast<uint16_t>((i * 40503u + 7) % 0x7c00u) | ((i % 5 == 0) ? 0x8000 : 0);
  }
  for (weftRedOp_t op : {weftSum, weftProd, weftMax, weftMin}) {
    SCOPED_TRACE(opName(op));
    std::vector<uint16_t> out(n);
    reduceFunction(weftFloat16, op)(out.data(), a.data(), b.data(), n);
    for (size_t i = 0; i < n; ++i) {
      double x = halfValue(a[i]);
      double y = halfValue(b[i]);
      double e = op == weftSum    ? x + y
                 : op == weftProd ? x * y
                 : op == weftMax  ? std::max(x, y)
                                  : std::min(x, y);
      double got = halfValue(out[i]);
      if (std::fabs(e) > 65504) {
        ASSERT_TRUE(std::isinf(got)) << i;
        continue;
      }
      // Rounded once to the nearest half: within half a unit in the last place (subnormals
      // have a fixed unit of 2^-24).
      int exp = 0;
      std::frexp(e, &exp);
      double ulp = std::ldexp(1.0, std::max(exp - 11, -24));
      ASSERT_LE(std::fabs(got - e), ulp / 2) << i << ": " << x << " op " << y;
    }
  }
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
