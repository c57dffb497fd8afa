// Calibration: the cost model's link latency and bandwidth, measured on the communicator's own
// links at init instead of taken from constants.
#pragma once

#include "collectives/cost_model.h"
#include "src/base/status.h"

namespace weft {

class Communicator;

// A ring exchange in ring order (each rank sends to the next and receives from the previous,
// each step waiting for the one before): many of 8 bytes give the latency of one hop, a few of
// 1 MiB the bandwidth. Every rank takes the slowest figures of all, so all price alike.
// `base` supplies what is not measured (local copy speed).
Status calibrateLinks(Communicator& comm, const LinkModel& base, LinkModel* out);

}  // namespace weft
