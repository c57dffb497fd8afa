#include "python/torch_backend/dtypes.h"

namespace weft::torch_backend {

weftDataType_t weftTypeOf(at::ScalarType type) {
  switch (type) {
    case at::kChar:
      return weftInt8;
    case at::kByte:
      return weftUint8;
    case at::kInt:
      return weftInt32;
    case at::kLong:
      return weftInt64;
    case at::kHalf:
      return weftFloat16;
    case at::kFloat:
      return weftFloat32;
    case at::kDouble:
      return weftFloat64;
    case at::kBFloat16:
      return weftBfloat16;
    default:
      TORCH_CHECK(false, "weft: tensors of type ", c10::toString(type),
                  " are not supported (int8, uint8, int32, int64, float16, bfloat16, float32 and "
                  "float64 are)");
  }
}

weftRedOp_t weftOpOf(const c10d::ReduceOp& op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return weftSum;
    case c10d::ReduceOp::PRODUCT:
      return weftProd;
    case c10d::ReduceOp::MIN:
      return weftMin;
    case c10d::ReduceOp::MAX:
      return weftMax;
    case c10d::ReduceOp::AVG:
      return weftAvg;
    default:
      TORCH_CHECK(false, "weft: reduce operator ", static_cast<int>(op.op_),
                  " is not supported (SUM, PRODUCT, MIN, MAX and AVG are)");
  }
}

}  // namespace weft::torch_backend
