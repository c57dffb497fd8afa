// Which devices a host's ranks use, for search and for weft-topo: one rank per GPU, on the
// first N GPUs (all of them, with a note, when N is larger: NCCL never puts two ranks on a GPU),
// or, when the system has no GPU or CPU ranks are asked for, CPU ranks spread over the NUMA nodes.
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
  int asked = 0;                // ranks per host asked for (nodes has fewer when GPUs ran out)
  std::string label(const System& system, int rank) const;  // "GPU3" / "rank 5 (NUMA 1)"
};

Status chooseRanks(const System& system, int ranksPerHost, RankDevice device, RankSet* out);

// Ranks per host when none are asked for: one per GPU, or one per NUMA node when the system has
// no GPU or CPU ranks are asked for; at least 1.
int defaultRanksPerHost(const System& system, RankDevice device);

}  // namespace weft::topo
