#include "src/comm/rank_placement.h"

#include <algorithm>
#include <mutex>

namespace weft {

Status localSystem(const topo::System** out) {
  static std::once_flag once;
  static Status loaded;
  static topo::System* system = nullptr;
  std::call_once(once, [] {
    system = new topo::System();  // kept for the life of the process
    loaded = topo::loadLocalSystem(system);
  });
  if (!loaded.ok()) return loaded.withContext("loading this host's topology");
  *out = system;
  return okStatus();
}

Status localLocality(uint32_t* out) {
  const topo::System* system = nullptr;
  WEFT_RETURN_IF_ERROR(localSystem(&system));
  *out = topo::packLocality(topo::localityOfNuma(*system, topo::currentNumaNode(*system)));
  return okStatus();
}

RankPlacement placeRanks(const std::vector<RankInfo>& ranks) {
  RankPlacement p;
  std::vector<uint64_t> hosts;
  for (size_t r = 0; r < ranks.size(); ++r) {
    auto it = std::find(hosts.begin(), hosts.end(), ranks[r].hostHash);
    size_t host = static_cast<size_t>(it - hosts.begin());
    if (it == hosts.end()) {
      hosts.push_back(ranks[r].hostHash);
      p.hostGroups.hosts.emplace_back();
    }
    p.hostGroups.hosts[host].push_back(static_cast<int>(r));
  }
  for (std::vector<int>& members : p.hostGroups.hosts) {
    std::vector<topo::RankLocality> where;
    where.reserve(members.size());
    for (int r : members)
      where.push_back(topo::unpackLocality(ranks[static_cast<size_t>(r)].locality));
    std::vector<int> ordered;
    ordered.reserve(members.size());
    for (int i : topo::orderByLocality(where))
      ordered.push_back(members[static_cast<size_t>(i)]);
    members = ordered;
    p.ringOrder.insert(p.ringOrder.end(), members.begin(), members.end());
  }
  return p;
}

topo::NicChoice rankNic(const topo::System& system, const std::vector<RankInfo>& ranks, int rank) {
  const RankInfo& me = ranks[static_cast<size_t>(rank)];
  const int numa = topo::unpackLocality(me.locality).numaNode;
  int localIndex = 0;  // among this host's ranks on the same NUMA node
  for (int r = 0; r < rank; ++r) {
    const RankInfo& o = ranks[static_cast<size_t>(r)];
    if (o.hostHash == me.hostHash && topo::unpackLocality(o.locality).numaNode == numa) {
      ++localIndex;
    }
  }
  return topo::chooseNicForNuma(system, numa, localIndex);
}

SockAddr nicListenAddress(const topo::NicChoice& nic, const SockAddr& current) {
  if (nic.interface.empty()) return current;
  std::vector<NetInterface> found;
  std::string family = current.family() == AF_INET6 ? "AF_INET6" : "AF_INET";
  if (!findInterfaces("=" + nic.interface, family, &found).ok() || found.empty()) return current;
  SockAddr a = found.front().address;
  a.setPort(0);
  return a;
}

LinkModel capByNics(LinkModel model, const std::vector<double>& nicGBps) {
  for (double gbps : nicGBps) {
    if (gbps > 0) model.bandwidthGBps = std::min(model.bandwidthGBps, gbps);
  }
  return model;
}

}  // namespace weft
