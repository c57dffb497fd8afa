#include "perf/weft_perf/types.h"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace weft::perf {

const std::vector<TypeInfo>& allTypes() {
  static const std::vector<TypeInfo> types = {
      {weftInt8, "int8", 1, false},     {weftUint8, "uint8", 1, false},
      {weftInt32, "int32", 4, false},   {weftUint32, "uint32", 4, false},
      {weftInt64, "int64", 8, false},   {weftUint64, "uint64", 8, false},
      {weftFloat16, "half", 2, true},   {weftFloat32, "float", 4, true},
      {weftFloat64, "double", 8, true}, {weftBfloat16, "bfloat16", 2, true},
  };
  return types;
}

const std::vector<OpInfo>& allOps() {
  static const std::vector<OpInfo> ops = {
      {weftSum, "sum"}, {weftProd, "prod"}, {weftMax, "max"}, {weftMin, "min"}, {weftAvg, "avg"}};
  return ops;
}

namespace {

struct Alias {
  std::string_view name;
  weftDataType_t type;
};

// weft.h's names and the usual short ones.
constexpr Alias kAliases[] = {
    {"char", weftInt8},       {"int", weftInt32},       {"float16", weftFloat16},
    {"float32", weftFloat32}, {"float64", weftFloat64}, {"fp16", weftFloat16},
    {"fp32", weftFloat32},    {"fp64", weftFloat64},    {"bf16", weftBfloat16},
};

}  // namespace

std::optional<TypeInfo> typeFromName(std::string_view name) {
  for (const TypeInfo& t : allTypes()) {
    if (name == t.name) return t;
  }
  for (const Alias& a : kAliases) {
    if (name == a.name) return typeInfo(a.type);
  }
  return std::nullopt;
}

std::optional<OpInfo> opFromName(std::string_view name) {
  for (const OpInfo& o : allOps()) {
    if (name == o.name) return o;
  }
  return std::nullopt;
}

std::string typeNames() {
  std::string names;
  for (const TypeInfo& t : allTypes()) {
    names += std::string(t.name) + " ";
  }
  names += "(also";
  for (const Alias& a : kAliases) {
    names += " " + std::string(a.name);
  }
  return names + ")";
}

std::string opNames() {
  std::string names;
  for (const OpInfo& o : allOps()) {
    names += std::string(names.empty() ? "" : " ") + o.name;
  }
  return names;
}

const TypeInfo& typeInfo(weftDataType_t type) {
  for (const TypeInfo& t : allTypes()) {
    if (t.type == type) return t;
  }
  throw std::invalid_argument("unknown weftDataType_t " + std::to_string(type));
}

uint16_t floatToHalf(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00);  // NaN, inf
  if (a >= 0x477ff000u) return sign | 0x7c00;  // 65520 and above round to inf
  if (a < 0x38800000u) {                       // below 2^-14: subnormal half
    if (a < 0x33000000u) return sign;          // at most 2^-25: rounds to zero
    uint32_t shift = 126 - (a >> 23);          // in units of 2^-24
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1))) ++r;
    return sign | static_cast<uint16_t>(r);
  }
  uint32_t v = a - (112u << 23);  // exponent bias 127 -> 15
  uint32_t r = v >> 13, rem = v & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) ++r;  // a carry moves into the exponent
  return sign | static_cast<uint16_t>(r);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
  if (e == 0) {
    float v = std::ldexp(static_cast<float>(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t floatToBf16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

float bf16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

}  // namespace weft::perf
