// Ring search: the channels a host's ranks form, each a ring that visits every rank once.
//
// 1. The best ring: the largest bottleneck any ring can have on an idle machine, and the best
//    path class (NVL before PIX before SYS ...) that reaches it. Later rings may not use a worse
//    class, so a DGX-1 keeps to NVLink edges and a PCIe box keeps neighbours under one switch.
// 2. Channels: for a channel speed S (the best bottleneck, capped at what one channel can drive,
//    divided by 1, 2, 3 ...), rings are found one by one, each taking S from every link it uses,
//    until none fits. The speed giving the most bandwidth in all (speed x rings) wins; on a tie
//    the faster speed, unless only a slower one gives `minChannels` rings or, across hosts,
//    spreads the rings over more NICs.
// 3. Across hosts each ring is a chain per host: it enters through a NIC, visits every rank and
//    leaves through the NIC closest to its last GPU; each ring starts at the least used NIC so
//    the rings spread over all of them.
// CPU ranks are ordered by orderCpuRanks; their rings follow that order.
#pragma once

#include <string>
#include <vector>

#include "src/base/status.h"
#include "topology/paths.h"
#include "topology/ranks.h"
#include "topology/system.h"

namespace weft::topo {

struct ChannelOptions {
  int maxChannels = 16;
  int minChannels = 2;
  double channelCap = 40.0;  // GB/s one channel (one CUDA block or CPU thread) can drive
};

struct Ring {
  std::vector<int> order;       // local ranks in ring order (the same on every host)
  double bw = 0;                // GB/s this channel is given
  double bottleneck = 0;        // GB/s of the ring alone on an idle machine
  std::string bottleneckLink;   // what limits it
  std::vector<PathClass> hops;  // class of each hop, in order (inter-host hops are NET)
  int nicIn = -1, nicOut = -1;  // across hosts: the NICs the ring enters and leaves by
  std::string why;
};

struct RingPlan {
  RankSet ranks;
  int hosts = 1;
  std::vector<Ring> rings;
  std::vector<int> nicOfRank;  // the NIC each local rank would use, by locality (-1: none)
  double best = 0;             // the best bottleneck any ring has (step 1)
  PathClass bestClass = PathClass::kLoc;
  std::string summary;
};

Status searchRings(const System& system, const Paths& paths, const RankSet& ranks, int hosts,
                   const ChannelOptions& options, RingPlan* out);

// "8 NVL" / "6 PIX, 2 SYS": counts of hop classes, best first.
std::string describeHops(const std::vector<PathClass>& hops);

}  // namespace weft::topo
