#include "topology/paths.h"

#include <algorithm>

#include "topology/bandwidth.h"

namespace weft::topo {
namespace {

constexpr double kEpsilon = 1e-9;

bool isSourceKind(NodeKind kind) {
  return kind == NodeKind::kCpu || kind == NodeKind::kGpu || kind == NodeKind::kNic ||
         kind == NodeKind::kNet || kind == NodeKind::kPciDevice;
}

bool isRootSide(NodeKind kind) {
  return kind == NodeKind::kCpu || kind == NodeKind::kHostBridge;
}

PathClass stepClass(const System& s, int source, int prev, int u, const Link& link, int v) {
  NodeKind ku = s.nodes[u].kind, kv = s.nodes[v].kind;
  switch (link.kind) {
    case LinkKind::kNvlink:
      return (ku == NodeKind::kGpu && u != source) ? PathClass::kNvb : PathClass::kNvl;
    case LinkKind::kCpuInterconnect:
      return PathClass::kSys;
    case LinkKind::kNetwork:
    case LinkKind::kLocal:
      return PathClass::kLoc;
    case LinkKind::kPcie:
      if (ku == NodeKind::kCpu && kv == NodeKind::kHostBridge && prev >= 0 &&
          s.nodes[prev].kind == NodeKind::kHostBridge) {
        return PathClass::kNode;
      }
      if (isRootSide(ku) || isRootSide(kv)) return PathClass::kPhb;
      if (ku == NodeKind::kPciSwitch && kv == NodeKind::kPciSwitch) return PathClass::kPxb;
      return PathClass::kPix;
  }
  return PathClass::kSys;
}

}  // namespace

Paths::Paths(const System& system) : system_(&system), row_(system.nodes.size(), -1) {
  for (size_t i = 0; i < system.nodes.size(); ++i) {
    if (!isSourceKind(system.nodes[i].kind)) continue;
    row_[i] = static_cast<int>(rows_.size());
    rows_.emplace_back();
    computeFrom(static_cast<int>(i), &rows_.back());
  }
}

const Path& Paths::get(int from, int to) const {
  static const Path kNone;
  if (from < 0 || to < 0 || from >= static_cast<int>(row_.size()) || row_[from] < 0) return kNone;
  const std::vector<Path>& row = rows_[row_[from]];
  if (to >= static_cast<int>(row.size())) return kNone;
  return row[to];
}

void Paths::computeFrom(int source, std::vector<Path>* out) const {
  const System& s = *system_;
  size_t n = s.nodes.size();
  std::vector<int> dist(n, -1), prevLink(n, -1);
  std::vector<double> bw(n, 0);
  std::vector<PathClass> cls(n, PathClass::kNone);
  dist[source] = 0;
  bw[source] = kLocalBw;
  cls[source] = PathClass::kLoc;
  std::vector<int> frontier{source};
  bool sourceIsGpu = s.nodes[source].kind == NodeKind::kGpu;
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int u : frontier) {
      const Node& nu = s.nodes[u];
      int prev = prevLink[u] >= 0 ? s.links[prevLink[u]].other(u) : -1;
      if (u != source) {
        if (nu.kind == NodeKind::kNet || nu.kind == NodeKind::kPciDevice) continue;
      }
      for (int l : nu.links) {
        const Link& link = s.links[l];
        int v = link.other(u);
        if (dist[v] >= 0 && dist[v] <= dist[u]) continue;
        if (u != source && nu.kind == NodeKind::kGpu) {
          // Through a GPU: NVLink in and out, one GPU in the middle, GPU to GPU.
          if (!sourceIsGpu || dist[u] != 1 || link.kind != LinkKind::kNvlink ||
              s.links[prevLink[u]].kind != LinkKind::kNvlink || s.nodes[v].kind != NodeKind::kGpu) {
            continue;
          }
        }
        if (u != source && nu.kind == NodeKind::kNic) {
          bool fromPort = prev >= 0 && s.nodes[prev].kind == NodeKind::kNet;
          bool toPort = s.nodes[v].kind == NodeKind::kNet && s.nodes[v].parent == u;
          if (!fromPort && !toPort) continue;
          if (fromPort && toPort) continue;
        }
        double newBw = std::min(bw[u], link.bw);
        PathClass newCls = worse(cls[u], stepClass(s, source, prev, u, link, v));
        if (dist[v] < 0) {
          dist[v] = dist[u] + 1;
          next.push_back(v);
        } else if (!(newBw > bw[v] + kEpsilon || (newBw > bw[v] - kEpsilon && newCls < cls[v]))) {
          continue;
        }
        bw[v] = newBw;
        cls[v] = newCls;
        prevLink[v] = l;
      }
    }
    frontier = std::move(next);
  }
  out->assign(n, Path());
  for (size_t v = 0; v < n; ++v) {
    if (dist[v] < 0) continue;
    Path& p = (*out)[v];
    p.cls = cls[v];
    p.bw = bw[v];
    int cur = static_cast<int>(v);
    p.nodes.push_back(cur);
    while (cur != source) {
      int l = prevLink[cur];
      p.links.push_back(l);
      cur = s.links[l].other(cur);
      p.nodes.push_back(cur);
    }
    std::reverse(p.nodes.begin(), p.nodes.end());
    std::reverse(p.links.begin(), p.links.end());
  }
}

namespace {

// The device that stands for `node` in the PCIe tree (a NIC for its ports).
int treeNode(const System& s, int node) {
  if (node >= 0 && s.nodes[node].kind == NodeKind::kNet) return s.nodes[node].parent;
  return node;
}

std::vector<int> ancestors(const System& s, int node) {
  std::vector<int> chain;
  int steps = 0;
  while (node >= 0 && steps++ < 1000) {
    chain.push_back(node);
    node = s.nodes[node].parent;
  }
  return chain;
}

}  // namespace

PathClass pcieClass(const System& s, int a, int b) {
  a = treeNode(s, a);
  b = treeNode(s, b);
  if (a < 0 || b < 0) return PathClass::kNone;
  if (a == b) return PathClass::kLoc;
  int cpuA = s.cpuOf(a), cpuB = s.cpuOf(b);
  if (cpuA < 0 || cpuB < 0 || cpuA != cpuB) return PathClass::kSys;
  std::vector<int> up = ancestors(s, a), down = ancestors(s, b);
  int lca = -1;
  size_t ia = 0, ib = 0;
  for (ia = 0; ia < up.size() && lca < 0; ++ia) {
    for (ib = 0; ib < down.size(); ++ib) {
      if (up[ia] == down[ib]) {
        lca = up[ia];
        break;
      }
    }
  }
  if (lca < 0) return PathClass::kSys;
  --ia;  // index of lca in up; ib is its index in down
  NodeKind k = s.nodes[lca].kind;
  if (k == NodeKind::kPciSwitch || k == NodeKind::kGpu || k == NodeKind::kNic ||
      k == NodeKind::kPciDevice) {
    // Switches strictly between the two devices: 1 means PIX.
    int switches = 0;
    for (size_t i = 1; i <= ia; ++i)
      switches += s.nodes[up[i]].kind == NodeKind::kPciSwitch;
    for (size_t i = 1; i < ib; ++i)
      switches += s.nodes[down[i]].kind == NodeKind::kPciSwitch;
    return switches <= 1 ? PathClass::kPix : PathClass::kPxb;
  }
  if (k == NodeKind::kHostBridge) return PathClass::kPhb;
  bool bridgeA = false, bridgeB = false;
  for (size_t i = 0; i < ia; ++i)
    bridgeA |= s.nodes[up[i]].kind == NodeKind::kHostBridge;
  for (size_t i = 0; i < ib; ++i)
    bridgeB |= s.nodes[down[i]].kind == NodeKind::kHostBridge;
  return bridgeA && bridgeB ? PathClass::kNode : PathClass::kPhb;
}

int nvlinkCount(const System& s, int a, int b) {
  if (a == b) return 0;
  int direct = s.linkBetween(a, b, LinkKind::kNvlink);
  if (direct >= 0) return s.links[direct].nvlinks;
  int best = 0;
  for (int l : s.nodes[a].links) {
    const Link& la = s.links[l];
    int sw = la.other(a);
    if (la.kind != LinkKind::kNvlink || s.nodes[sw].kind != NodeKind::kNvSwitch) continue;
    int lb = s.linkBetween(b, sw, LinkKind::kNvlink);
    if (lb >= 0) best = std::max(best, std::min(la.nvlinks, s.links[lb].nvlinks));
  }
  return best;
}

}  // namespace weft::topo
