// Memory that the ranks on one host can map (transports/shareable_memory.h).
#include "src/api/api_util.h"
#include "transports/shareable_memory.h"

using weft::Status;

extern "C" {

weftResult_t weftMemAlloc(void** ptr, size_t size) {
  if (ptr == nullptr) return weft::report(Status(weftInvalidArgument, "weftMemAlloc: ptr is NULL"));
  return weft::report(weft::allocateShareable(size, ptr));
}

weftResult_t weftMemFree(void* ptr) {
  if (ptr == nullptr) return weftSuccess;  // as free(NULL)
  return weft::report(weft::freeShareable(ptr));
}

}  // extern "C"
