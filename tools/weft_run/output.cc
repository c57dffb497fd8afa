#include "tools/weft_run/output.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace weft::run {

bool LinePrefixer::feed(std::string_view bytes) {
  bool ok = true;
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      pending_.append(bytes);
      if (pending_.size() >= kMaxLine) {
        ok = emit(pending_) && ok;
        pending_.clear();
      }
      return ok;
    }
    if (pending_.empty()) {
      ok = emit(bytes.substr(0, nl)) && ok;
    } else {
      pending_.append(bytes.substr(0, nl));
      ok = emit(pending_) && ok;
      pending_.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
  return ok;
}

bool LinePrefixer::finish() {
  if (pending_.empty()) return true;
  bool ok = emit(pending_);
  pending_.clear();
  return ok;
}

bool LinePrefixer::emit(std::string_view text) {
  line_.assign(prefix_);
  line_.append(text);
  line_.push_back('\n');
  return sink_(line_);
}

LinePrefixer::Sink fdSink(int fd) {
  return [fd](std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::write(fd, data.data(), data.size());
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
      } else if (n < 0 && errno == EAGAIN) {
        // Our stdout may be a non-blocking pipe we inherited: wait until it drains.
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, 1000);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        return false;
      }
    }
    return true;
  };
}

std::string rankPrefix(int rank, bool enabled) {
  return enabled ? "[" + std::to_string(rank) + "] " : std::string();
}

}  // namespace weft::run
