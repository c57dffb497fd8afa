#include "src/base/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace weft {
namespace {

std::string vstrprintf(const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (n <= 0) return {};
  std::string out(static_cast<size_t>(n), '\0');
  vsnprintf(out.data(), out.size() + 1, format, args);
  return out;
}

}  // namespace

const std::string& Status::message() const {
  static const std::string kNone;
  return rep_ ? rep_->message : kNone;
}

Status Status::withContext(const std::string& context) const {
  if (ok()) return {};
  return Status(rep_->code, context + ": " + rep_->message);
}

Status errorf(weftResult_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::string msg = vstrprintf(format, args);
  va_end(args);
  return Status(code, std::move(msg));
}

Status systemError(const char* what, int err) {
  return errorf(weftSystemError, "%s failed: %s (errno %d)", what, strerror(err), err);
}

std::string strprintf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::string out = vstrprintf(format, args);
  va_end(args);
  return out;
}

Status abortedStatus() {
  return Status(weftInvalidUsage, "aborted by weftCommAbort in this process");
}

}  // namespace weft
