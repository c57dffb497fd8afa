// Progressable: one rank's part of an operation in flight, which a runner moves forward with
// progress() calls and waits on while it is stuck. The executor (schedules over channels) and
// the direct collectives (shared slots) are the two kinds.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace weft {

class Progressable {
 public:
  virtual ~Progressable() = default;
  // Moves whatever can move now; *progressed says whether anything did.
  virtual Status progress(bool* progressed) = 0;
  virtual bool done() const = 0;
  // What it still waits for, for timeout messages.
  virtual std::string describeWait() const = 0;
  // Peers it still waits on.
  virtual std::vector<int> pendingPeers() const = 0;
  // (peer, is a receive) for what could move but for the peer: what a blocked runner should
  // wait on.
  virtual const std::vector<std::pair<int, bool>>& pendingIo() = 0;
};

}  // namespace weft
