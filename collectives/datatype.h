// Element types and reduction operators: sizes and names. The 16-bit float formats are reduced
// through float32 arithmetic (weft/float16.hpp converts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "weft/float16.hpp"  // halfToFloat, floatToBf16, ...
#include "weft/weft.h"

namespace weft {

bool validType(weftDataType_t type);
bool validOp(weftRedOp_t op);
size_t typeSize(weftDataType_t type);
const char* typeName(weftDataType_t type);  // "float32", ...
const char* opName(weftRedOp_t op);         // "sum", ...

}  // namespace weft
