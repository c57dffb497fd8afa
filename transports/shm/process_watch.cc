#include "transports/shm/process_watch.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace weft::shm {
namespace {

int openPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

PeerProcess::PeerProcess(pid_t pid) : pid_(pid) {
  pidfd_ = openPidfd(pid);
  goneAtOpen_ = pidfd_ < 0 && errno == ESRCH;
}

PeerProcess::~PeerProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

PeerProcess::PeerProcess(PeerProcess&& other) noexcept
    : pid_(other.pid_), pidfd_(std::exchange(other.pidfd_, -1)), goneAtOpen_(other.goneAtOpen_) {}

PeerProcess& PeerProcess::operator=(PeerProcess&& other) noexcept {
  if (this != &other) {
    if (pidfd_ >= 0) ::close(pidfd_);
    pid_ = other.pid_;
    pidfd_ = std::exchange(other.pidfd_, -1);
    goneAtOpen_ = other.goneAtOpen_;
  }
  return *this;
}

bool PeerProcess::exited() const {
  if (goneAtOpen_) return true;
  if (pidfd_ >= 0) {
    // A pidfd polls readable once the process has exited, zombie or reaped.
    pollfd p{pidfd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }
  return pid_ > 0 && kill(pid_, 0) != 0 && errno == ESRCH;
}

}  // namespace weft::shm
