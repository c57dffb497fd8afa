// PeerProcess: tells whether a peer process on this host has exited. Uses a pidfd where the kernel
// has them (it also sees zombies and never confuses a reused pid), kill(pid, 0) otherwise.
#pragma once

#include <sys/types.h>

namespace weft::shm {

class PeerProcess {
 public:
  PeerProcess() = default;
  explicit PeerProcess(pid_t pid);
  ~PeerProcess();
  PeerProcess(PeerProcess&& other) noexcept;
  PeerProcess& operator=(PeerProcess&& other) noexcept;
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  pid_t pid() const { return pid_; }
  // A syscall or two: for slow liveness checks, not the fast path.
  bool exited() const;

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool goneAtOpen_ = false;  // pidfd_open said ESRCH: it had exited already
};

}  // namespace weft::shm
