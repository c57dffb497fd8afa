#include "topology/tree_search.h"

#include <algorithm>
#include <cmath>

#include "topology/bandwidth.h"
#include "topology/channel_model.h"
#include "topology/cpu_ranks.h"
#include "topology/locality.h"

namespace weft::topo {
namespace {

constexpr double kEpsilon = 1e-6;
constexpr long kBudget = 200000;

int lowBit(int x) {
  return x & -x;
}

// In-order binary tree over positions 1..n: a node's level is its lowest set bit; node i with
// low bit b has children i - b/2 and the largest i + b' (b' < b, a power of two) within n.
void build(int i, int n, std::vector<int>* parent, int p) {
  (*parent)[static_cast<size_t>(i)] = p;
  int b = lowBit(i);
  if (b == 1) return;
  build(i - b / 2, n, parent, i);
  for (int c = b / 2; c >= 1; c /= 2) {
    if (i + c <= n) {
      build(i + c, n, parent, i);
      break;
    }
  }
}

HostTree treeFromPositions(int hosts, int shift) {
  HostTree t;
  t.parent.assign(static_cast<size_t>(hosts), -1);
  t.children.assign(static_cast<size_t>(hosts), {});
  if (hosts == 1) return t;
  std::vector<int> posParent(static_cast<size_t>(hosts) + 1, -1);
  int root = 1;
  while (root * 2 <= hosts)
    root *= 2;
  build(root, hosts, &posParent, 0);
  auto host = [&](int pos) { return (pos - 1 + shift) % hosts; };
  t.root = host(root);
  for (int pos = 1; pos <= hosts; ++pos) {
    int pp = posParent[static_cast<size_t>(pos)];
    int h = host(pos);
    t.parent[static_cast<size_t>(h)] = pp == 0 ? -1 : host(pp);
    if (pp != 0) t.children[static_cast<size_t>(host(pp))].push_back(h);
  }
  return t;
}

}  // namespace

std::vector<HostTree> doubleBinaryTree(int hosts) {
  if (hosts <= 1) return {treeFromPositions(1, 0)};
  return {treeFromPositions(hosts, 0), treeFromPositions(hosts, 1)};
}

namespace {

class ChainSearch {
 public:
  ChainSearch(const System& s, const HopTable& hops, int n) : s_(s), hops_(hops), n_(n), full_(s) {}

  // The chain from `head` through every rank with the best worst hop class (NVLink before PCIe
  // before the CPU interconnect), then the widest narrowest hop (both directions count, as a
  // tree sends up and down).
  std::vector<int> best(int head) {
    bestClass_ = PathClass::kNone;
    bestBw_ = -1;
    bestChain_.clear();
    budget_ = kBudget;
    std::vector<int> chain{head};
    std::vector<char> used(static_cast<size_t>(n_), 0);
    used[static_cast<size_t>(head)] = 1;
    dfs(&chain, &used, PathClass::kLoc, 1e300);
    return bestChain_.empty() ? chain : bestChain_;
  }

 private:
  double hopBw(int a, int b) const {
    return std::min(full_.remaining(hops_.between(a, b)), full_.remaining(hops_.between(b, a)));
  }

  // True when (cls, bw) cannot beat the best chain found.
  bool beaten(PathClass cls, double bw) const {
    if (cls != bestClass_) return cls > bestClass_;
    return bw <= bestBw_ + kEpsilon;
  }

  void dfs(std::vector<int>* chain, std::vector<char>* used, PathClass cls, double bw) {
    if (--budget_ < 0 || beaten(cls, bw)) return;
    if (static_cast<int>(chain->size()) == n_) {
      bestClass_ = cls;
      bestBw_ = bw;
      bestChain_ = *chain;
      return;
    }
    int cur = chain->back();
    struct Next {
      PathClass cls;
      double bw;
      int rank;
    };
    std::vector<Next> next;
    for (int r = 0; r < n_; ++r) {
      const Hop& h = hops_.between(cur, r);
      if ((*used)[static_cast<size_t>(r)] || !h.exists) continue;
      next.push_back({h.cls, hopBw(cur, r), r});
    }
    std::stable_sort(next.begin(), next.end(), [](const Next& a, const Next& b) {
      if (a.cls != b.cls) return a.cls < b.cls;
      return a.bw > b.bw;
    });
    for (const Next& x : next) {
      chain->push_back(x.rank);
      (*used)[static_cast<size_t>(x.rank)] = 1;
      dfs(chain, used, worse(cls, x.cls), std::min(bw, x.bw));
      chain->pop_back();
      (*used)[static_cast<size_t>(x.rank)] = 0;
    }
  }

  const System& s_;
  const HopTable& hops_;
  int n_;
  Capacity full_;  // an idle machine
  PathClass bestClass_ = PathClass::kNone;
  double bestBw_ = -1;
  std::vector<int> bestChain_;
  long budget_ = 0;
};

}  // namespace

Status searchTrees(const System& s, const Paths& paths, const RankSet& ranks, int hosts,
                   const ChannelOptions& options, TreePlan* out) {
  (void)options;
  *out = TreePlan();
  out->ranks = ranks;
  out->hosts = hosts;
  int n = static_cast<int>(ranks.nodes.size());
  if (n == 0) return errorf(weftInvalidArgument, "no ranks");
  if (hosts < 1 || hosts > 65536) return errorf(weftInvalidArgument, "hosts must be 1 to 65536");
  std::vector<int> nics = s.nics();
  if (hosts > 1 && nics.empty()) {
    return errorf(weftInvalidArgument, "%d hosts need a NIC, and the system has none", hosts);
  }
  HopTable hops(s, paths, ranks);
  std::vector<int> nicOf = assignNics(s, paths, ranks.nodes);
  std::vector<HostTree> shapes = doubleBinaryTree(hosts);
  std::vector<int> cpuOrder;
  if (ranks.cpu) cpuOrder = orderCpuRanks(s, ranks.numaOfRank);
  // Tree t uses NIC t (among the NICs some rank is closest to), spreading the trees.
  std::vector<int> usable;
  for (int nic : nics) {
    if (std::find(nicOf.begin(), nicOf.end(), nic) != nicOf.end()) usable.push_back(nic);
  }
  ChainSearch chains(s, hops, n);
  for (size_t t = 0; t < shapes.size(); ++t) {
    Tree tree;
    tree.hosts = shapes[t];
    if (!usable.empty()) tree.nic = usable[t % usable.size()];
    int head = 0;
    if (tree.nic >= 0) {
      for (int r = 0; r < n; ++r) {
        if (nicOf[static_cast<size_t>(r)] == tree.nic) {
          head = r;
          break;
        }
      }
    }
    if (ranks.cpu) {
      tree.chain = cpuOrder;
      auto it = std::find(tree.chain.begin(), tree.chain.end(), head);
      std::rotate(tree.chain.begin(), it, tree.chain.end());
    } else {
      tree.chain = chains.best(head);
    }
    // Bottleneck: every chain hop both ways, and the head's way to and from the NIC.
    std::vector<Hop> used;
    for (size_t i = 0; i + 1 < tree.chain.size(); ++i) {
      used.push_back(hops.between(tree.chain[i], tree.chain[i + 1]));
      used.push_back(hops.between(tree.chain[i + 1], tree.chain[i]));
    }
    if (hosts > 1 && tree.nic >= 0) {
      used.push_back(hops.fromNet(tree.nic, tree.chain.front()));
      used.push_back(hops.toNet(tree.chain.front(), tree.nic));
    }
    std::vector<const Hop*> ptrs;
    for (const Hop& h : used) {
      if (!h.exists) return errorf(weftInvalidArgument, "no path joins two ranks of the chain");
      ptrs.push_back(&h);
    }
    Bottleneck b = channelBottleneck(s, ptrs);
    tree.bottleneck = b.bw;
    tree.bottleneckLink = b.what;
    std::vector<PathClass> classes;
    for (size_t i = 0; i + 1 < tree.chain.size(); ++i) {
      classes.push_back(hops.between(tree.chain[i], tree.chain[i + 1]).cls);
    }
    tree.why = "chain " + describeHops(classes);
    if (ranks.cpu) tree.why += ", ranks in socket and NUMA order";
    if (hosts > 1 && tree.nic >= 0) {
      tree.why +=
          "; head " + ranks.label(s, tree.chain.front()) + " is next to " +
          s.nodes[static_cast<size_t>(tree.nic)].name + " (" +
          toString(paths.get(ranks.nodes[static_cast<size_t>(tree.chain.front())], tree.nic).cls) +
          ")";
    }
    tree.why += "; bottleneck " + b.what;
    out->trees.push_back(tree);
  }
  return okStatus();
}

}  // namespace weft::topo
