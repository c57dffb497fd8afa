// Runner: drives planned phases to completion on the calling thread (a blocking call, a group's
// end, or a stream's worker), for one or several communicators at once. Idle waits back off;
// a wait without progress for longer than the communicator's timeout, an abort, or a peer that
// is gone ends the operation with an error that says who waited for whom in what.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "src/base/status.h"
#include "src/enqueue/op.h"

namespace weft {

// One communicator's part of a launch.
struct CommWork {
  Communicator* comm = nullptr;
  uint64_t ticket = 0;          // its place in the communicator's issue order
  std::vector<Op> collectives;  // run one after another, in order
  std::vector<Op> p2p;          // run together, after the collectives
  // Instead of ops: a host call that runs in the work's turn (a window's put or wait,
  // submitTask); alone in its list.
  std::function<Status()> task;
};

// Returns the first error; every communicator's turn is ended either way.
Status runWorks(std::vector<CommWork>& works);
// One collective on the calling thread, taking the communicator's next turn: the latency path of
// a blocking call outside a group, which needs no work list.
Status runCollective(const Op& op);

}  // namespace weft
