// What torch's element types and reduction operators are in Weft's terms: a clear error naming
// the type or operator where Weft has none.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "weft/weft.h"

namespace weft::torch_backend {

// Throws (c10::Error, a RuntimeError in Python) for a type Weft cannot move or reduce.
weftDataType_t weftTypeOf(at::ScalarType type);
// Throws for an operator Weft does not reduce with (bitwise ones, PREMUL_SUM).
weftRedOp_t weftOpOf(const c10d::ReduceOp& op);

}  // namespace weft::torch_backend
