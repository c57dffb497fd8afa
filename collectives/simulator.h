// The schedule simulator: runs one schedule per virtual rank, all in this thread, over loopback
// links, with the same executor that runs on real transports. Tiny link capacities shake out
// schedules that only work while messages fit in flight.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/executor.h"
#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

struct SimOptions {
  size_t linkCapacity = 1u << 12;  // bytes in flight per direction, a power of two
  size_t paceBytes = 0;            // Link::paceBytes of every link
};

// buffers[r] are rank r's buffers as its schedule addresses them. A schedule that cannot finish
// (a deadlock) gives weftInternalError naming what each rank waits for.
Status simulate(const std::vector<Schedule>& schedules,
                const std::vector<std::vector<BufferView>>& buffers, ReduceFn reduce,
                const SimOptions& options = {});

}  // namespace weft
