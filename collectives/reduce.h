// Reduction loops for every type and operator. Half types go through float32 arithmetic.
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft {

// dst[i] = a[i] (op) b[i] for count elements; dst may be a or b.
using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t count);

// weftAvg reduces as weftSum; finishAverage() divides afterwards. nullptr for invalid input.
ReduceFn reduceFunction(weftDataType_t type, weftRedOp_t op);

// buf[i] /= divisor, for the result of an average (integers truncate toward zero).
void finishAverage(void* buf, size_t count, weftDataType_t type, int divisor);

}  // namespace weft
