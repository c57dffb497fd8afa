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
}

HelloGate::Read HelloGate::readSome(Pending& p) const {
  while (p.got < helloBytes_) {
    ssize_t n = ::recv(p.socket.fd(), p.hello.data() + p.got, helloBytes_ - p.got, 0);
    if (n > 0) {
      p.got += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      return Read::kPartial;
    }
    return Read::kGone;  // closed, or an error
  }
  return Read::kWhole;
}

Status HelloGate::acceptSome() {
  for (size_t accepted = 0; accepted < kMaxPendingHellos; ++accepted) {
    Pending p;
    WEFT_RETURN_IF_ERROR(acceptNow(listener_, &p.socket, &p.from));
    if (!p.socket.valid()) return okStatus();
    setNoDelay(p.socket.fd());
    p.hello.resize(helloBytes_);
    p.expires = Deadline::after(kHelloTimeoutMs);
    if (readSome(p) == Read::kWhole) {
      whole_.push_back(std::move(p));
      continue;
    }
    pending_.push_back(std::move(p));
    while (pending_.size() > kMaxPendingHellos) {
      // The oldest goes, unless what it sent since makes its hello whole.
      if (readSome(pending_.front()) == Read::kWhole) {
        whole_.push_back(std::move(pending_.front()));
        pending_.pop_front();
      } else {
        drop(0, "too many connections waited for their hello");
      }
    }
  }
  return okStatus();
}

Status HelloGate::next(Deadline deadline, const AbortFlag* abort, Socket* socket, SockAddr* from,
                       void* hello) {
  std::vector<pollfd> fds;
  for (;;) {
    if (abort != nullptr && abort->load()) return abortedStatus();
    // Read what has arrived; hand over the first whole hello.
    for (size_t i = 0; i < pending_.size();) {
      const Read r = readSome(pending_[i]);
      if (r == Read::kWhole) {
        whole_.push_back(std::move(pending_[i]));
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (r == Read::kGone) {
        drop(i, "closed before its hello was whole");
      } else if (pending_[i].expires.expired()) {
        drop(i, "its hello did not come in time");
      } else {
        ++i;
      }
    }
    if (!whole_.empty()) {
      Pending& p = whole_.front();
      *socket = std::move(p.socket);
      *from = p.from;
      std::copy(p.hello.begin(), p.hello.end(), static_cast<char*>(hello));
      whole_.pop_front();
      return okStatus();
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
    if ((fds[0].revents & POLLIN) != 0) WEFT_RETURN_IF_ERROR(acceptSome());
  }
}

}  // namespace weft
