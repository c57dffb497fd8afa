#include "perf/weft_perf/weft_error.h"

#include <string>

namespace weft::perf {

void checkWeft(weftResult_t result, const char* call, weftComm_t comm) {
  if (result == weftSuccess) return;
  throw WeftError(std::string(call) + " failed: " + weftGetErrorString(result) + ": " +
                  weftGetLastError(comm));
}

}  // namespace weft::perf
