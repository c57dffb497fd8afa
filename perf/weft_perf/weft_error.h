// A failed weft call, as an exception that names the call and weft's own explanation.
#pragma once

#include <stdexcept>

#include "weft/weft.h"

namespace weft::perf {

class WeftError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws WeftError unless result is weftSuccess; the message is this thread's last error on
// comm (which may be NULL).
void checkWeft(weftResult_t result, const char* call, weftComm_t comm);

}  // namespace weft::perf
