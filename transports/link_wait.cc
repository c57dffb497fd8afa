#include "transports/link_wait.h"

#include <time.h>

namespace weft {

bool LinkWait::wait(const std::vector<std::pair<Link*, bool>>& io,
                    const std::function<bool()>& recheck) {
  fds_.clear();
  Doorbell* bell = nullptr;
  bool everyWaitRings = true;
  for (const auto& [link, forRead] : io) {
    Doorbell* b = link == nullptr ? nullptr : link->doorbell();
    int fd = link == nullptr ? -1 : link->pollFd(forRead);
    if (fd >= 0) fds_.push_back({fd, static_cast<short>(forRead ? POLLIN : POLLOUT), 0});
    if (b != nullptr && bell == nullptr) bell = b;
    everyWaitRings = everyWaitRings && (b != nullptr && b == bell);
  }
  if (!fds_.empty()) {
    // Sockets wake us; shm peers, if any, are looked at every millisecond.
    poll(fds_.data(), fds_.size(), bell != nullptr ? 1 : 20);
    return false;
  }
  if (bell != nullptr && everyWaitRings) {
    uint32_t armed = bell->arm();
    bool moved = recheck();
    if (!moved) bell->wait(armed, 20'000);
    bell->disarm();
    return moved;
  }
  struct timespec ts = {0, 50'000};
  nanosleep(&ts, nullptr);
  return false;
}

}  // namespace weft
