// Status: the error type every internal layer returns; the C API turns it into weftResult_t
// plus a message for weftGetLastError.
#pragma once

#include <string>
#include <utility>

#include "weft/weft.h"

namespace weft {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(weftResult_t code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == weftSuccess; }
  weftResult_t code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with context, keeping the code: "while X: <message>".
  Status withContext(const std::string& context) const;

 private:
  weftResult_t code_ = weftSuccess;
  std::string message_;
};

inline Status okStatus() {
  return {};
}

// printf-style constructors for error statuses.
Status errorf(weftResult_t code, const char* format, ...) __attribute__((format(printf, 2, 3)));
// A weftSystemError naming the failed call and errno's text.
Status systemError(const char* what, int err);

// printf into a std::string.
std::string strprintf(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace weft

#define WEFT_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::weft::Status weft_status_ = (expr);        \
    if (!weft_status_.ok()) return weft_status_; \
  } while (0)
