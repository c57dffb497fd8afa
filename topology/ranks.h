// Which devices a host's ranks use, for search and for weft-topo: N ranks on the first N GPUs,
// or, when there are fewer GPUs than ranks (or none), CPU ranks spread over the NUMA nodes.
#pragma once

#include <string>
#include <vector>

#include "src/base/status.h"
#include "topology/system.h"

namespace weft::topo {

enum class RankDevice { kAuto, kGpu, kCpu };

struct RankSet {
  bool cpu = false;             // CPU ranks rather than GPUs
  std::vector<int> nodes;       // per local rank: its GPU node, or the CPU node of its NUMA node
  std::vector<int> numaOfRank;  // CPU ranks: the NUMA node id of each
  std::string note;             // how the ranks were placed, for the reader
  std::string label(const System& system, int rank) const;  // "GPU3" / "rank 5 (NUMA 1)"
};

Status chooseRanks(const System& system, int ranksPerHost, RankDevice device, RankSet* out);

}  // namespace weft::topo
