// Where a communicator's ranks sit, from each host's topology (topology/): the ring order (a
// host's ranks together, inside a host by socket and NUMA node), the host groups that tiered
// collectives use, the NIC each rank's tcp traffic leaves by, and what those NICs allow the
// links between hosts in the cost model.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/cost_model.h"
#include "collectives/placement.h"
#include "src/base/socket.h"
#include "src/base/status.h"
#include "src/bootstrap/wire.h"
#include "topology/topo.h"

namespace weft {

// This process's host: discovered, or the file WEFT_TOPO_FILE names. Loaded once per process.
Status localSystem(const topo::System** out);

// Where this process runs on its host (NUMA node and package), packed for the all-gather.
Status localLocality(uint32_t* out);

struct RankPlacement {
  std::vector<int> ringOrder;  // ranks by host (in the order of each host's first rank), then
                               // by topo::orderByLocality inside the host
  HostGroups hostGroups;       // each host's ranks in ring order
};
RankPlacement placeRanks(const std::vector<RankInfo>& ranks);

// The NIC closest to `rank`'s NUMA node; ranks of a host on one NUMA node take equally close
// NICs in turn.
topo::NicChoice rankNic(const topo::System& system, const std::vector<RankInfo>& ranks, int rank);

// The address tcp listens on: the NIC's interface address of current's family where that
// interface exists here, else `current` (the address that reaches the root).
SockAddr nicListenAddress(const topo::NicChoice& nic, const SockAddr& current);

// `model` no faster than the slowest NIC among `nicGBps` (entries <= 0 are unknown).
LinkModel capByNics(LinkModel model, const std::vector<double>& nicGBps);

}  // namespace weft
