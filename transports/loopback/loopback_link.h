// Loopback: two links joined in one process through heap rings. The schedule simulator runs
// virtual ranks over it; tests use it to exercise channels without sockets or shared memory.
#pragma once

#include <memory>
#include <utility>

#include "transports/link.h"

namespace weft {

// capacity: ring bytes in each direction (a power of two); small values shake out partial
// reads and writes. paceBytes: what both ends report as Link::paceBytes.
std::pair<std::unique_ptr<Link>, std::unique_ptr<Link>> makeLoopbackPair(size_t capacity,
                                                                         size_t paceBytes = 0);

}  // namespace weft
