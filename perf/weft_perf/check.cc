#include "perf/weft_perf/check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "perf/weft_perf/types.h"

namespace weft::perf {
namespace {

// The 16-bit float formats as distinct element types.
struct Half {
  uint16_t bits;
};
struct Bf16 {
  uint16_t bits;
};

template <typename T>
constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, Bf16>;

// Calls f with a value of the element type of `type`.
template <typename F>
decltype(auto) withType(weftDataType_t type, F&& f) {
  switch (type) {
    case weftInt8:
      return f(int8_t{});
    case weftUint8:
      return f(uint8_t{});
    case weftInt32:
      return f(int32_t{});
    case weftUint32:
      return f(uint32_t{});
    case weftInt64:
      return f(int64_t{});
    case weftUint64:
      return f(uint64_t{});
    case weftFloat16:
      return f(Half{});
    case weftFloat32:
      return f(float{});
    case weftFloat64:
      return f(double{});
    case weftBfloat16:
      return f(Bf16{});
    default:
      throw std::invalid_argument("unknown data type");
  }
}

template <typename T>
T fromDouble(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{floatToHalf(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, Bf16>) {
    return Bf16{floatToBf16(static_cast<float>(v))};
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return halfToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, Bf16>) {
    return bf16ToFloat(v.bits);
  } else {
    return static_cast<double>(v);
  }
}

// Integers convert modulo 2^bits (C++20), so a negative value is fine for unsigned types.
template <typename T>
T fromInt(int64_t v) {
  if constexpr (kIsFloat<T>) {
    return fromDouble<T>(static_cast<double>(v));
  } else {
    return static_cast<T>(v);
  }
}

// The largest m such that every integer in [-m, m] is exact in the type (64-bit types are
// capped so that values also stay exact as doubles).
int64_t exactLimit(weftDataType_t type) {
  switch (type) {
    case weftInt8:
      return 127;
    case weftUint8:
      return 255;
    case weftFloat16:
      return 2048;
    case weftBfloat16:
      return 256;
    case weftFloat32:
      return 1 << 24;
    default:
      return (int64_t{1} << 31) - 1;
  }
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool reduces(const CheckSpec& s) {
  return collHasOp(s.coll);
}

// inputValue's rule for one spec, worked out once per fill instead of once per element (a check
// of an 8-rank 256M all-reduce evaluates it half a billion times on each rank): rank r's value of
// element i is hash % modulus, then a table entry or less an offset, where the hash is
// mix(seed ^ mix(r ^ mix(i))) and every rank's value of an element shares mix(i).
class Inputs {
 public:
  explicit Inputs(const CheckSpec& s) : seed_(s.seed) {
    const int64_t limit = exactLimit(s.type);
    if (reduces(s) && s.op == weftProd) {
      factors_ = true;  // 1, 2 and -1: products stay powers of two, exact in every type
      modulus_ = 4;
    } else if (reduces(s) && (s.op == weftSum || s.op == weftAvg)) {
      // Small enough that the sum over all ranks stays exact and in range.
      modulus_ = static_cast<uint64_t>(std::clamp<int64_t>(limit / s.nranks, 1, 7)) + 1;
    } else {
      // min, max and data movement: spread over the exact range, so a misplaced element shows.
      const bool isUnsigned = s.type == weftUint8 || s.type == weftUint32 || s.type == weftUint64;
      modulus_ = static_cast<uint64_t>(isUnsigned ? limit + 1 : 2 * limit + 1);
      offset_ = isUnsigned ? 0 : limit;
    }
    mask_ = (modulus_ & (modulus_ - 1)) == 0 ? modulus_ - 1 : 0;
  }

  // Rank r's input at the element whose index mixes to `mixedIndex` (mix(index)).
  int64_t at(int rank, uint64_t mixedIndex) const {
    static constexpr int64_t kFactors[] = {1, 1, 2, -1};
    const uint64_t h = mix(seed_ ^ mix(static_cast<uint64_t>(rank) ^ mixedIndex));
    const uint64_t v = mask_ != 0 ? h & mask_ : h % modulus_;
    return factors_ ? kFactors[v] : static_cast<int64_t>(v) - offset_;
  }

 private:
  uint64_t seed_;
  bool factors_ = false;
  uint64_t modulus_ = 1;
  uint64_t mask_ = 0;  // modulus_ - 1 where the modulus is a power of two
  int64_t offset_ = 0;
};

// Integer reduction in the element type: wraps like the hardware would, in any order.
template <typename T>
T reduceInt(T a, T b, weftRedOp_t op) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case weftProd:
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case weftMax:
      return std::max(a, b);
    case weftMin:
      return std::min(a, b);
    default:
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // sum, avg
  }
}

// Reduction of element `index` over all ranks' inputs.
template <typename T>
T reduceAt(const CheckSpec& s, const Inputs& in, size_t index) {
  const uint64_t mixed = mix(index);
  if constexpr (kIsFloat<T>) {
    double acc = static_cast<double>(in.at(0, mixed));
    for (int r = 1; r < s.nranks; ++r) {
      double v = static_cast<double>(in.at(r, mixed));
      switch (s.op) {
        case weftProd:
          acc *= v;
          break;
        case weftMax:
          acc = std::max(acc, v);
          break;
        case weftMin:
          acc = std::min(acc, v);
          break;
        default:
          acc += v;
      }
    }
    if (s.op == weftAvg) acc /= s.nranks;
    return fromDouble<T>(acc);
  } else {
    T acc = fromInt<T>(in.at(0, mixed));
    for (int r = 1; r < s.nranks; ++r) {
      acc = reduceInt(acc, fromInt<T>(in.at(r, mixed)), s.op);
    }
    if (s.op == weftAvg) {
      if constexpr (std::is_signed_v<T>) {
        acc = static_cast<T>(static_cast<int64_t>(acc) / s.nranks);
      } else {
        acc = static_cast<T>(static_cast<uint64_t>(acc) / static_cast<uint64_t>(s.nranks));
      }
    }
    return acc;
  }
}

// Expected output element i of `rank`: which rank's input, at which index, or a reduction.
template <typename T>
T expectedAt(const CheckSpec& s, const Inputs& in, int rank, const CollCounts& c, size_t i) {
  size_t cnt = c.paramCount;
  switch (s.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
      return reduceAt<T>(s, in, i);
    case Coll::kReduceScatter:
      return reduceAt<T>(s, in, static_cast<size_t>(rank) * cnt + i);
    case Coll::kBroadcast:
      return fromInt<T>(in.at(s.root, mix(i)));
    case Coll::kAllGather:
      return fromInt<T>(in.at(static_cast<int>(i / cnt), mix(i % cnt)));
    case Coll::kAllToAll:
      return fromInt<T>(
          in.at(static_cast<int>(i / cnt), mix(static_cast<size_t>(rank) * cnt + i % cnt)));
    case Coll::kSendRecv:
      return fromInt<T>(in.at((rank - 1 + s.nranks) % s.nranks, mix(i)));
    case Coll::kSend:
      return fromInt<T>(in.at(rank - 1, mix(i)));
  }
  return T{};
}

// Relative error allowed for floating point. Sums, products, minima and maxima of the small
// integer inputs are exact in any order, so only avg (and sums too large to be exact in the
// type) may differ from the reference, by a rounding per rank at most.
template <typename T>
double tolerance(const CheckSpec& s) {
  bool inexactSum = s.op == weftSum && s.nranks > exactLimit(s.type);
  if (!reduces(s) || (s.op != weftAvg && !inexactSum)) return 0;
  double eps;
  if constexpr (std::is_same_v<T, Half>) {
    eps = 1.0 / 1024;
  } else if constexpr (std::is_same_v<T, Bf16>) {
    eps = 1.0 / 128;
  } else {
    eps = std::numeric_limits<T>::epsilon();
  }
  return eps * (s.nranks + 1);
}

template <typename T>
bool sameFloat(T got, T want, double tol) {
  double g = toDouble(got), w = toDouble(want);
  if (g == w) return true;  // also equal infinities
  if (std::isnan(g) || std::isnan(w)) return false;
  return std::fabs(g - w) <= tol * std::max(1.0, std::fabs(w));
}

}  // namespace

int64_t inputValue(const CheckSpec& s, int rank, size_t index) {
  return Inputs(s).at(rank, mix(index));
}

void fillInput(const CheckSpec& s, int rank, void* buf, size_t count) {
  const Inputs in(s);
  withType(s.type, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(buf);
    for (size_t i = 0; i < count; ++i) {
      out[i] = fromInt<T>(in.at(rank, mix(i)));
    }
  });
}

void fillPoison(weftDataType_t type, void* buf, size_t bytes) {
  std::memset(buf, typeInfo(type).isFloat ? 0xFF : 0xA5, bytes);
}

size_t expectedCount(const CheckSpec& s, int rank, const CollCounts& c) {
  if (s.coll == Coll::kReduce && rank != s.root) return 0;
  if (s.coll == Coll::kSend && sendRole(rank, s.nranks) != SendRole::kReceiver) return 0;
  return c.recvCount;
}

void fillExpected(const CheckSpec& s, int rank, const CollCounts& c, void* expected) {
  size_t n = expectedCount(s, rank, c);
  const Inputs in(s);
  withType(s.type, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(expected);
    for (size_t i = 0; i < n; ++i) {
      out[i] = expectedAt<T>(s, in, rank, c, i);
    }
  });
}

int64_t countDisturbed(const CheckSpec& s, int rank, const CollCounts& c, const void* input,
                       const void* output, bool inPlace) {
  if (inPlace) return 0;
  const size_t ts = typeInfo(s.type).size;
  std::vector<char> want(std::max(c.sendCount, c.recvCount) * ts);
  int64_t changed = 0;
  auto countChanged = [&](const void* got, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      changed += std::memcmp(static_cast<const char*>(got) + i * ts, want.data() + i * ts, ts) != 0;
    }
  };
  fillInput(s, rank, want.data(), c.sendCount);
  countChanged(input, c.sendCount);
  if (expectedCount(s, rank, c) == 0) {
    fillPoison(s.type, want.data(), c.recvCount * ts);
    countChanged(output, c.recvCount);
  }
  return changed;
}

int64_t countWrong(const CheckSpec& s, const void* got, const void* expected, size_t count) {
  return withType(s.type, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    const T* g = static_cast<const T*>(got);
    const T* w = static_cast<const T*>(expected);
    int64_t wrong = 0;
    if constexpr (kIsFloat<T>) {
      double tol = tolerance<T>(s);
      for (size_t i = 0; i < count; ++i) {
        wrong += sameFloat(g[i], w[i], tol) ? 0 : 1;
      }
    } else {
      for (size_t i = 0; i < count; ++i) {
        wrong += g[i] == w[i] ? 0 : 1;
      }
    }
    return wrong;
  });
}

}  // namespace weft::perf
