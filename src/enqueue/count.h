// Counting: files each finished operation's calls, sizes and traffic in its communicator's
// statistics (src/comm/traffic_stats.h, weftCommGetStats).
#pragma once

#include <span>

#include "src/enqueue/op.h"

namespace weft {

void countCollective(Communicator& comm, const Op& op);
// A group's sends and receives (or one receive from any source), which ran as one phase.
void countPointToPoint(Communicator& comm, std::span<const Op> ops);

}  // namespace weft
