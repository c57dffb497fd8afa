// Status: the error type every internal layer returns; the C API turns it into weftResult_t
// plus a message for weftGetLastError.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "weft/weft.h"

namespace weft {

// Success carries nothing, so the ok path (every call's many returns) costs a null pointer; an
// error's code and message live on the heap.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(weftResult_t code, std::string message)
      : rep_(code == weftSuccess ? nullptr : std::make_unique<Rep>(Rep{code, std::move(message)})) {
  }
  Status(const Status& other) : rep_(copyOf(other)) {}
  Status(Status&& other) noexcept = default;
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = copyOf(other);
    return *this;
  }
  Status& operator=(Status&& other) noexcept = default;
  ~Status() = default;

  bool ok() const { return rep_ == nullptr; }
  weftResult_t code() const { return rep_ ? rep_->code : weftSuccess; }
  const std::string& message() const;

  // Prefixes the message with context, keeping the code: "while X: <message>".
  Status withContext(const std::string& context) const;

 private:
  struct Rep {
    weftResult_t code;
    std::string message;
  };
  static std::unique_ptr<Rep> copyOf(const Status& s) {
    return s.rep_ ? std::make_unique<Rep>(*s.rep_) : nullptr;
  }
  std::unique_ptr<Rep> rep_;
};

inline Status okStatus() {
  return {};
}

// printf-style constructors for error statuses.
Status errorf(weftResult_t code, const char* format, ...) __attribute__((format(printf, 2, 3)));
// A weftSystemError naming the failed call and errno's text.
Status systemError(const char* what, int err);
// What every call ended by weftCommAbort reports, whatever it was waiting on.
Status abortedStatus();

// printf into a std::string.
std::string strprintf(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace weft

#define WEFT_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::weft::Status weft_status_ = (expr);        \
    if (!weft_status_.ok()) return weft_status_; \
  } while (0)
