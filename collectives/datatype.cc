#include "collectives/datatype.h"

#include "weft/weft.hpp"

namespace weft {

bool validType(weftDataType_t type) {
  return static_cast<int>(type) >= 0 && static_cast<int>(type) < weftNumTypes;
}

bool validOp(weftRedOp_t op) {
  return static_cast<int>(op) >= 0 && static_cast<int>(op) < weftNumOps;
}

size_t typeSize(weftDataType_t type) {
  return sizeOf(type);  // the public C++ API's (weft/weft.hpp)
}

const char* typeName(weftDataType_t type) {
  switch (type) {
    case weftInt8:
      return "int8";
    case weftUint8:
      return "uint8";
    case weftInt32:
      return "int32";
    case weftUint32:
      return "uint32";
    case weftInt64:
      return "int64";
    case weftUint64:
      return "uint64";
    case weftFloat16:
      return "float16";
    case weftFloat32:
      return "float32";
    case weftFloat64:
      return "float64";
    case weftBfloat16:
      return "bfloat16";
    default:
      return "invalid type";
  }
}

const char* opName(weftRedOp_t op) {
  switch (op) {
    case weftSum:
      return "sum";
    case weftProd:
      return "prod";
    case weftMax:
      return "max";
    case weftMin:
      return "min";
    case weftAvg:
      return "avg";
    default:
      return "invalid op";
  }
}

}  // namespace weft
