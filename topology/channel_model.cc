#include "topology/channel_model.h"

#include <algorithm>
#include <limits>
#include <map>

#include "topology/bandwidth.h"
#include "topology/locality.h"

namespace weft::topo {
namespace {

constexpr double kEpsilon = 1e-6;

}  // namespace

HopTable::HopTable(const System& system, const Paths& paths, const RankSet& ranks)
    : system_(system), paths_(paths), set_(ranks), n_(static_cast<int>(ranks.nodes.size())) {
  ranks_.resize(static_cast<size_t>(n_) * static_cast<size_t>(n_));
  for (int a = 0; a < n_; ++a) {
    for (int b = 0; b < n_; ++b) {
      if (a != b)
        ranks_[idx(a, b)] =
            make(set_.nodes[static_cast<size_t>(a)], set_.nodes[static_cast<size_t>(b)]);
    }
  }
}

Hop HopTable::make(int from, int to) const {
  Hop hop;
  if (from == to) {  // two CPU ranks on one NUMA node: memory, no link
    hop.exists = true;
    hop.cls = PathClass::kLoc;
    return hop;
  }
  const Path& p = paths_.get(from, to);
  if (!p.exists()) return hop;
  hop.exists = true;
  hop.cls = p.cls;
  for (size_t i = 0; i < p.links.size(); ++i) {
    int l = p.links[i];
    int dir = system_.links[static_cast<size_t>(l)].a == p.nodes[i] ? 0 : 1;
    hop.dlinks.push_back(2 * l + dir);
  }
  return hop;
}

Hop HopTable::fromNet(int nic, int rank) const {
  Hop hop = make(nic, set_.nodes[static_cast<size_t>(rank)]);
  hop.wireIn = nic;
  return hop;
}

Hop HopTable::toNet(int rank, int nic) const {
  Hop hop = make(set_.nodes[static_cast<size_t>(rank)], nic);
  hop.wireOut = nic;
  return hop;
}

Capacity::Capacity(const System& s)
    : link_(s.links.size() * 2), in_(s.nodes.size(), 0), out_(s.nodes.size(), 0) {
  for (size_t l = 0; l < s.links.size(); ++l)
    link_[2 * l] = link_[2 * l + 1] = s.links[l].bw;
  for (int nic : s.nics())
    in_[static_cast<size_t>(nic)] = out_[static_cast<size_t>(nic)] = nicBandwidth(s, nic);
}

bool Capacity::take(const Hop& hop, double bw) {
  if (remaining(hop) < bw - kEpsilon) return false;
  for (int d : hop.dlinks)
    link_[static_cast<size_t>(d)] -= bw;
  if (hop.wireIn >= 0) in_[static_cast<size_t>(hop.wireIn)] -= bw;
  if (hop.wireOut >= 0) out_[static_cast<size_t>(hop.wireOut)] -= bw;
  // A path may use one link twice (never in practice); check after taking.
  for (int d : hop.dlinks) {
    if (link_[static_cast<size_t>(d)] < -kEpsilon) {
      give(hop, bw);
      return false;
    }
  }
  return true;
}

void Capacity::give(const Hop& hop, double bw) {
  for (int d : hop.dlinks)
    link_[static_cast<size_t>(d)] += bw;
  if (hop.wireIn >= 0) in_[static_cast<size_t>(hop.wireIn)] += bw;
  if (hop.wireOut >= 0) out_[static_cast<size_t>(hop.wireOut)] += bw;
}

double Capacity::remaining(const Hop& hop) const {
  double r = std::numeric_limits<double>::infinity();
  for (int d : hop.dlinks)
    r = std::min(r, link_[static_cast<size_t>(d)]);
  if (hop.wireIn >= 0) r = std::min(r, in_[static_cast<size_t>(hop.wireIn)]);
  if (hop.wireOut >= 0) r = std::min(r, out_[static_cast<size_t>(hop.wireOut)]);
  return r;
}

Bottleneck channelBottleneck(const System& s, const std::vector<const Hop*>& hops) {
  std::map<int, int> links, in, out;
  for (const Hop* h : hops) {
    for (int d : h->dlinks)
      ++links[d];
    if (h->wireIn >= 0) ++in[h->wireIn];
    if (h->wireOut >= 0) ++out[h->wireOut];
  }
  Bottleneck b;
  b.bw = kLocalBw;
  b.what = "none (all ranks share memory)";
  auto times = [](int n) {
    return n == 1   ? std::string()
           : n == 2 ? std::string(", used twice")
                    : ", used " + std::to_string(n) + " times";
  };
  for (auto [d, n] : links) {
    double bw = s.links[static_cast<size_t>(d / 2)].bw / n;
    if (bw < b.bw - kEpsilon) {
      b.bw = bw;
      b.what = s.describeLink(d / 2) + times(n);
    }
  }
  for (auto* wires : {&in, &out}) {
    for (auto [nic, n] : *wires) {
      double bw = nicBandwidth(s, nic) / n;
      if (bw < b.bw - kEpsilon) {
        b.bw = bw;
        b.what = s.nodes[static_cast<size_t>(nic)].name + " network port (" +
                 formatBandwidth(nicBandwidth(s, nic)) + ")" + times(n);
      }
    }
  }
  return b;
}

}  // namespace weft::topo
