// Waiting for links: what a thread with nothing to do blocks on until a peer gives it
// something. Shared-memory peers ring this rank's doorbell; sockets are polled.
#pragma once

#include <poll.h>

#include <functional>
#include <utility>
#include <vector>

#include "transports/link.h"

namespace weft {

class LinkWait {
 public:
  // Blocks until one of `io`'s links (each with whether the wait is to read) may move, or a
  // short while passes. recheck() runs once the doorbell is armed, so that work arriving just
  // before the wait is not slept through; it returns whether anything moved, and then the wait
  // is skipped. Returns what recheck() returned, or false if it was not needed.
  bool wait(const std::vector<std::pair<Link*, bool>>& io, const std::function<bool()>& recheck);
  // Room for waits on up to `links` links without allocating.
  void reserve(size_t links) { fds_.reserve(links); }

 private:
  std::vector<pollfd> fds_;
};

}  // namespace weft
