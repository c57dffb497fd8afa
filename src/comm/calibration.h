// Calibration: the cost model's link latency and bandwidth, measured on the communicator's own
// links at init instead of taken from constants.
#pragma once

#include <vector>

#include "collectives/cost_model.h"
#include "src/base/status.h"

namespace weft {

class Communicator;

// Ring exchanges (each rank sends to the next and receives from the previous, each step waiting
// for the one before) round each of `rings` at once; each rank is in one ring at most, and a
// ring of one rank measures nothing. Many of 8 bytes give the latency of one hop, a few of 1 MiB
// the bandwidth. Every rank takes the slowest figures of all, so all price alike. `base`
// supplies what is not measured (local copy speed), and all of it where no ring has two ranks.
Status calibrateRings(Communicator& comm, const std::vector<std::vector<int>>& rings,
                      const LinkModel& base, LinkModel* out);

}  // namespace weft
