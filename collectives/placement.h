// Placing ranks on an algorithm's positions. Algorithms number their positions 0..n-1 and ring
// neighbours are consecutive; the communicator knows a better order (ranks of one host together,
// and within a host by socket and NUMA node, from topology/). A placed schedule runs the
// algorithm on positions and maps peers back to ranks, and blocks that belong to a rank
// (all-gather's output, reduce-scatter's input) to that rank's block.
//
// Across hosts, all-reduce and broadcast may also run in tiers: reduce inside each host to a
// leader, all-reduce among leaders, broadcast inside each host (for broadcast: across leaders
// from the root, then inside hosts). Each tier is an ordinary schedule over a subset of the
// ranks; the executor orders the tiers by the memory they share.
#pragma once

#include <vector>

#include "collectives/algorithms.h"
#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

// order[p] is the rank at position p (a permutation of 0..n-1); empty means identity.
Status buildPlacedSchedule(Algo algo, const CollArgs& args, const AlgoParams& params,
                           const std::vector<int>& order, Schedule* out);

// The ranks of each host, each list in ring order; a host's first rank is its leader.
struct HostGroups {
  std::vector<std::vector<int>> hosts;
};

// Algorithms for the tiers: inside hosts (reduce, then broadcast) and among leaders.
struct TierAlgos {
  Algo intraReduce = Algo::kTree;
  Algo inter = Algo::kRing;
  Algo intraBroadcast = Algo::kTree;
};

// All-reduce or broadcast of args.rank in tiers. Needs at least two hosts.
Status buildTieredSchedule(const CollArgs& args, const AlgoParams& params, const HostGroups& groups,
                           const TierAlgos& algos, Schedule* out);

}  // namespace weft
