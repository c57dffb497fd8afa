#include "topology/cpu_ranks.h"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <tuple>

namespace weft::topo {

int currentNumaNode(const System& s) {
  std::vector<int> cpus = s.nodesOf(NodeKind::kCpu);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    int found = -1;
    bool single = true, any = false;
    for (int c = 0; c < CPU_SETSIZE && single; ++c) {
      if (!CPU_ISSET(c, &mask)) continue;
      any = true;
      int numa = -1;
      for (int node : cpus) {
        if (s.nodes[node].cpu.cpus.contains(c)) numa = s.nodes[node].cpu.numaId;
      }
      if (numa < 0 || (found >= 0 && numa != found)) single = false;
      found = numa;
    }
    if (any && single && found >= 0) return found;
  }
  int now = sched_getcpu();
  for (int node : cpus) {
    if (now >= 0 && s.nodes[node].cpu.cpus.contains(now)) return s.nodes[node].cpu.numaId;
  }
  return -1;
}

int packageOfNuma(const System& s, int numa) {
  int cpu = s.findCpu(numa);
  if (cpu >= 0 && s.nodes[cpu].cpu.packageId >= 0) return s.nodes[cpu].cpu.packageId;
  return -1;
}

std::vector<int> orderByLocality(const std::vector<RankLocality>& ranks) {
  std::vector<int> order(ranks.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int>(i);
  auto key = [&](int r) {
    const RankLocality& l = ranks[static_cast<size_t>(r)];
    if (l.numaNode < 0) return std::make_tuple(INT_MAX, INT_MAX, r);
    // Unknown package: the NUMA node is its own group, after the known packages.
    int pkgKey = l.package >= 0 ? l.package : (1 << 20) + l.numaNode;
    return std::make_tuple(pkgKey, static_cast<int>(l.numaNode), r);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  return order;
}

std::vector<int> orderCpuRanks(const System& s, const std::vector<int>& numaOfRank) {
  std::vector<RankLocality> ranks;
  ranks.reserve(numaOfRank.size());
  for (int numa : numaOfRank)
    ranks.push_back(localityOfNuma(s, numa));
  return orderByLocality(ranks);
}

uint32_t packLocality(RankLocality l) {
  return (static_cast<uint32_t>(static_cast<uint16_t>(l.numaNode)) << 16) |
         static_cast<uint16_t>(l.package);
}

RankLocality unpackLocality(uint32_t packed) {
  RankLocality l;
  l.numaNode = static_cast<int16_t>(packed >> 16);
  l.package = static_cast<int16_t>(packed & 0xffff);
  return l;
}

RankLocality localityOfNuma(const System& s, int numa) {
  RankLocality l;
  if (numa < 0 || numa > INT16_MAX) return l;
  l.numaNode = static_cast<int16_t>(numa);
  int pkg = packageOfNuma(s, numa);
  if (pkg >= 0 && pkg <= INT16_MAX) l.package = static_cast<int16_t>(pkg);
  return l;
}

}  // namespace weft::topo
