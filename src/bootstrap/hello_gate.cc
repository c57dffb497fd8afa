#include "src/bootstrap/hello_gate.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "src/base/log.h"

namespace weft {
namespace {

constexpr int kPollSliceMs = 50;  // how often an abort is looked for

}  // namespace

void HelloGate::drop(size_t index, const char* why) {
  WEFT_WARN(kBootstrap, "bootstrap: dropped a connection from %s: %s",
            pending_[index].from.toString().c_str(), why);
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
  ++dropped_;
}

Status HelloGate::acceptAll() {
  for (;;) {
    SockAddr from;
    from.length = sizeof(from.storage);
    int fd = accept4(listener_.fd(), reinterpret_cast<sockaddr*>(&from.storage), &from.length,
                     SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) {
        return okStatus();
      }
      return systemError("accept", errno);
    }
    setNoDelay(fd);
    if (pending_.size() >= maxPending_) drop(0, "too many connections waited for their hello");
    Pending p;
    p.socket = Socket(fd);
    p.from = from;
    p.hello.resize(helloBytes_);
    p.expires = Deadline::after(perConnectionMs_);
    pending_.push_back(std::move(p));
  }
}

Status HelloGate::next(Deadline deadline, const AbortFlag* abort, Socket* socket, SockAddr* from,
                       void* hello) {
  std::vector<pollfd> fds;
  for (;;) {
    if (abort != nullptr && abort->load()) {
      return abortedStatus();
    }
    // Read what has arrived; hand over the first whole hello.
    for (size_t i = 0; i < pending_.size();) {
      Pending& p = pending_[i];
      ssize_t n = ::recv(p.socket.fd(), p.hello.data() + p.got, helloBytes_ - p.got, 0);
      if (n > 0) p.got += static_cast<size_t>(n);
      if (p.got == helloBytes_) {
        *socket = std::move(p.socket);
        *from = p.from;
        std::copy(p.hello.begin(), p.hello.end(), static_cast<char*>(hello));
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        return okStatus();
      }
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        drop(i, "closed before its hello was whole");
      } else if (p.expires.expired()) {
        drop(i, "its hello did not come in time");
      } else {
        ++i;
      }
    }
    if (deadline.expired()) return Status(weftTimeout, "timed out waiting for a connection");
    fds.assign(1, pollfd{listener_.fd(), POLLIN, 0});
    int waitMs = deadline.remainingMs(kPollSliceMs);
    for (const Pending& p : pending_) {
      fds.push_back(pollfd{p.socket.fd(), POLLIN, 0});
      waitMs = std::min(waitMs, p.expires.remainingMs(kPollSliceMs));
    }
    if (poll(fds.data(), fds.size(), waitMs) < 0 && errno != EINTR) {
      return systemError("poll", errno);
    }
    if ((fds[0].revents & POLLIN) != 0) WEFT_RETURN_IF_ERROR(acceptAll());
  }
}

}  // namespace weft
