// Ranks that run on CPUs: where this process runs, how to order a host's ranks in a ring so
// neighbours share a NUMA node and socket, and a few bytes that tell other ranks where a rank is.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/system.h"

namespace weft::topo {

// The NUMA node of the CPUs this process is bound to (when they all lie in one), else of the CPU
// it runs on now; -1 when the system does not say which CPUs a NUMA node has.
int currentNumaNode(const System& system);

// Where a rank runs, in four bytes for the bootstrap's all-gather.
struct RankLocality {
  int16_t numaNode = -1;
  int16_t package = -1;

  bool operator==(const RankLocality& o) const {
    return numaNode == o.numaNode && package == o.package;
  }
};

// The order of a host's ranks in a ring: by socket, then NUMA node, then rank, so that the ring
// crosses each socket and NUMA boundary as few times as it can. Ranks whose package is unknown
// group by NUMA node after the known packages; unknown NUMA nodes come last. Returns indices
// into `ranks`. The communicator orders each host's ranks with it.
std::vector<int> orderByLocality(const std::vector<RankLocality>& ranks);

// The same for ranks given by NUMA node id in `system` (numaOfRank[r]: local rank r's).
std::vector<int> orderCpuRanks(const System& system, const std::vector<int>& numaOfRank);
uint32_t packLocality(RankLocality locality);
RankLocality unpackLocality(uint32_t packed);
// The locality of NUMA node `numa` of the system (package from the model; -1 if unknown).
RankLocality localityOfNuma(const System& system, int numa);

// The package (socket) of a NUMA node; the NUMA node itself stands for it when unknown.
int packageOfNuma(const System& system, int numa);

}  // namespace weft::topo
