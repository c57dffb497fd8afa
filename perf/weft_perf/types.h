// Data types and reduction operations as nccl-tests names them, and the 16-bit float formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/weft.h"

namespace weft::perf {

struct TypeInfo {
  weftDataType_t type;
  const char* name;  // as nccl-tests prints it
  size_t size;
  bool isFloat;
};

struct OpInfo {
  weftRedOp_t op;
  const char* name;
};

// In nccl-tests order, which is also the order "-d all" and "-o all" run them in.
const std::vector<TypeInfo>& allTypes();
const std::vector<OpInfo>& allOps();

// Accepts nccl-tests' names and the aliases weft.h has (int, char, float16, float32, ...).
std::optional<TypeInfo> typeFromName(std::string_view name);
std::optional<OpInfo> opFromName(std::string_view name);
// The names those accept, for help and error messages.
std::string typeNames();
std::string opNames();
const TypeInfo& typeInfo(weftDataType_t type);

// IEEE binary16 and bfloat16, rounding to nearest even.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBf16(float value);
float bf16ToFloat(uint16_t bits);

}  // namespace weft::perf
