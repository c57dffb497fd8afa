#include "topology/locality.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "src/base/status.h"
#include "topology/bandwidth.h"

namespace weft::topo {
namespace {

// Lower is closer: a NIC with a PCI device before a virtual interface; then one on the same NUMA
// node before one across sockets; among those, an RDMA-capable NIC before a plain one (NCCL
// prefers its IB/verbs transport to sockets wherever it can); then the path class, the bandwidth
// (rounded so float noise does not split ties) and the hops.
auto closenessKey(const System& s, const Path& p, int nic) {
  return std::make_tuple(s.nodes[static_cast<size_t>(nic)].isVirtual ? 1 : 0,
                         p.cls > PathClass::kNode ? 1 : 0, isRdmaNic(s, nic) ? 0 : 1,
                         static_cast<int>(p.cls), -std::lround(p.bw * 1000), p.hops());
}

}  // namespace

std::vector<int> nicsByCloseness(const System& s, const Paths& paths, int from) {
  std::vector<int> nics;
  for (int nic : s.nics()) {
    if (paths.get(from, nic).exists()) nics.push_back(nic);
  }
  std::stable_sort(nics.begin(), nics.end(), [&](int a, int b) {
    return closenessKey(s, paths.get(from, a), a) < closenessKey(s, paths.get(from, b), b);
  });
  return nics;
}

std::vector<int> closestNics(const System& s, const Paths& paths, int from) {
  std::vector<int> sorted = nicsByCloseness(s, paths, from);
  std::vector<int> out;
  for (int nic : sorted) {
    if (closenessKey(s, paths.get(from, nic), nic) !=
        closenessKey(s, paths.get(from, sorted.front()), sorted.front())) {
      break;
    }
    out.push_back(nic);
  }
  std::sort(out.begin(), out.end(),
            [&](int a, int b) { return s.nodes[a].ordinal < s.nodes[b].ordinal; });
  return out;
}

std::vector<int> assignNics(const System& s, const Paths& paths, const std::vector<int>& devices) {
  std::vector<int> out;
  std::vector<int> uses(s.nodes.size(), 0);
  for (int d : devices) {
    std::vector<int> ties = closestNics(s, paths, d);
    if (ties.empty()) {
      out.push_back(-1);
      continue;
    }
    int best = ties.front();
    for (int nic : ties) {
      if (uses[nic] < uses[best]) best = nic;
    }
    ++uses[best];
    out.push_back(best);
  }
  return out;
}

bool isRdmaNic(const System& s, int nic) {
  const Node& n = s.nodes[static_cast<size_t>(nic)];
  if (n.pci.classCode.rfind("0x0207", 0) == 0) return true;  // InfiniBand controller
  if (n.pci.vendor == "0x1d0f" && n.pci.device.rfind("0xefa", 0) == 0) return true;  // AWS EFA
  for (int net : s.netsOf(nic)) {
    const NetInfo& i = s.nodes[static_cast<size_t>(net)].net;
    if (!i.rdmaDevice.empty() || !i.linkLayer.empty() || i.gdr == 1) return true;
  }
  return false;
}

std::string nicInterface(const System& s, int nic) {
  if (nic < 0) return "";
  for (int net : s.netsOf(nic)) {
    if (!s.nodes[net].net.ifname.empty()) return s.nodes[net].net.ifname;
  }
  std::vector<int> nets = s.netsOf(nic);
  if (!nets.empty()) return s.nodes[nets.front()].name;
  return s.nodes[nic].name;
}

double nicBandwidth(const System& s, int nic) {
  double total = 0;
  std::vector<int> nets = s.netsOf(nic);
  for (int net : nets)
    total += netBw(s.nodes[net].net.speedMbps);
  if (!nets.empty()) return total;
  const Node& n = s.nodes[nic];
  for (int l : n.links) {
    if (s.links[l].other(nic) == n.parent) return s.links[l].bw;
  }
  return netBw(0);
}

std::string assumedNetSpeedNote(const System& s, const std::string& source) {
  int unknown = 0;
  for (int net : s.nodesOf(NodeKind::kNet))
    unknown += s.nodes[static_cast<size_t>(net)].net.speedMbps <= 0;
  if (unknown == 0) return "";
  return strprintf("%s gives no speed for %d network port(s): %d Gb/s (%s) assumed, as NCCL does",
                   source.c_str(), unknown, kDefaultNetMbps / 1000,
                   formatBandwidth(netBw(0)).c_str());
}

}  // namespace weft::topo
