// The schedule simulator: runs one schedule per virtual rank, all in this thread, over loopback
// links, with the same executor that runs on real transports. Tiny link capacities shake out
// schedules that only work while messages fit in flight.
//
// Schedules with memory steps reach each other's buffers through a memory face over the virtual
// ranks' buffers. Then the ranks start at random times and take turns a step at a time, in a
// random order each round, each running its ready steps in a random order (all from
// options.seed), and a rank's buffers hold its data only between
// its start and its end: before, and after, they hold garbage, and a peer that reads them before
// the rank started or writes them after it finished gets caught by a wrong result or by the
// simulator (weftInternalError naming the rank).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/executor.h"
#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

struct SimOptions {
  size_t linkCapacity = 1u << 12;  // bytes in flight per direction, a power of two
  size_t paceBytes = 0;            // Link::paceBytes of every link
  uint64_t seed = 1;               // schedules with memory steps: starts and interleaving
};

// buffers[r] are rank r's buffers as its schedule addresses them. A schedule that cannot finish
// (a deadlock) gives weftInternalError naming what each rank waits for.
Status simulate(const std::vector<Schedule>& schedules,
                const std::vector<std::vector<BufferView>>& buffers, ReduceFn reduce,
                const SimOptions& options = {});

}  // namespace weft
