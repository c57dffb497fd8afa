// What a channel (ring or chain) uses: the directed links of the paths between its ranks and the
// network ports of its NICs, and how much bandwidth each still has.
#pragma once

#include <string>
#include <vector>

#include "topology/paths.h"
#include "topology/ranks.h"
#include "topology/system.h"

namespace weft::topo {

// One step of a channel. Directed links are numbered 2*link + (0 from link.a, 1 from link.b);
// wires are NIC nodes whose network port the step uses inbound or outbound.
struct Hop {
  bool exists = false;
  PathClass cls = PathClass::kNone;
  std::vector<int> dlinks;
  int wireIn = -1;   // NIC receiving from the network
  int wireOut = -1;  // NIC sending to the network
};

// Steps between ranks, and between ranks and NICs.
class HopTable {
 public:
  HopTable(const System& system, const Paths& paths, const RankSet& ranks);

  const Hop& between(int a, int b) const { return ranks_[idx(a, b)]; }
  // From the network into a NIC and on to a rank; from a rank to a NIC and out.
  Hop fromNet(int nic, int rank) const;
  Hop toNet(int rank, int nic) const;

  int size() const { return n_; }

 private:
  size_t idx(int a, int b) const {
    return static_cast<size_t>(a) * static_cast<size_t>(n_) + static_cast<size_t>(b);
  }
  Hop make(int from, int to) const;

  const System& system_;
  const Paths& paths_;
  const RankSet& set_;
  int n_;
  std::vector<Hop> ranks_;
};

// Remaining bandwidth of every directed link and NIC port.
class Capacity {
 public:
  explicit Capacity(const System& system);

  // Takes `bw` on every link and port of the hop; all or nothing.
  bool take(const Hop& hop, double bw);
  void give(const Hop& hop, double bw);
  // The least remaining bandwidth along a hop.
  double remaining(const Hop& hop) const;

  double link(int dlink) const { return link_[static_cast<size_t>(dlink)]; }
  double wireIn(int nic) const { return in_[static_cast<size_t>(nic)]; }
  double wireOut(int nic) const { return out_[static_cast<size_t>(nic)]; }

 private:
  std::vector<double> link_;
  std::vector<double> in_, out_;
};

// What limits a channel on an otherwise idle machine: every link and port it uses, counted as
// many times as it is used, and the one that gives the least bandwidth.
struct Bottleneck {
  double bw = 0;
  std::string what;  // "GPU0 <-> NVSwitch NVLink3 x12 (240.0 GB/s)" (+ ", used twice")
};
Bottleneck channelBottleneck(const System& system, const std::vector<const Hop*>& hops);

}  // namespace weft::topo
