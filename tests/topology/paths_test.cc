// Path rules on small systems built by hand.
#include <gtest/gtest.h>

#include "topology/bandwidth.h"
#include "topology/paths.h"

namespace weft::topo {
namespace {

class Builder {
 public:
  int cpu(int numa) {
    Node n;
    n.kind = NodeKind::kCpu;
    n.cpu.numaId = numa;
    n.cpu.arch = "x86_64";
    n.cpu.vendor = "GenuineIntel";
    n.cpu.familyId = 6;
    n.cpu.modelId = 85;
    return s.addNode(n);
  }
  int node(NodeKind kind, int parent, double bw = 12) {
    Node n;
    n.kind = kind;
    n.pci.busId = kind == NodeKind::kHostBridge ? "" : busId();
    int id = s.addNode(n);
    s.attach(id, parent, LinkKind::kPcie, bw);
    return id;
  }
  int net(int nic) {
    Node n;
    n.kind = NodeKind::kNet;
    n.name = "net" + std::to_string(next_++);
    int id = s.addNode(n);
    s.attach(id, nic, LinkKind::kNetwork, 25);
    return id;
  }
  std::string busId() {
    char buf[16];
    snprintf(buf, sizeof(buf), "0000:%02x:00.0", next_++);
    return buf;
  }
  System s;
  int next_ = 1;
};

TEST(Paths, ClassesOfAPcieTree) {
  Builder b;
  int c0 = b.cpu(0), c1 = b.cpu(1);
  int hb0 = b.node(NodeKind::kHostBridge, c0, kLocalBw);
  int hb1 = b.node(NodeKind::kHostBridge, c0, kLocalBw);
  int up = b.node(NodeKind::kPciSwitch, hb0);
  int leafA = b.node(NodeKind::kPciSwitch, up);
  int leafB = b.node(NodeKind::kPciSwitch, up);
  int g0 = b.node(NodeKind::kGpu, leafA, 24);
  int g1 = b.node(NodeKind::kGpu, leafA, 24);
  int g2 = b.node(NodeKind::kGpu, leafB, 24);
  int g3 = b.node(NodeKind::kGpu, hb0, 24);
  int g4 = b.node(NodeKind::kGpu, hb1, 24);
  int g5 = b.node(NodeKind::kGpu, c1, 24);
  b.s.finalize();
  const System& s = b.s;
  Paths p(s);
  EXPECT_EQ(p.get(g0, g1).cls, PathClass::kPix);
  EXPECT_EQ(p.get(g0, g2).cls, PathClass::kPxb);
  EXPECT_EQ(p.get(g0, g3).cls, PathClass::kPhb);
  EXPECT_EQ(p.get(g0, g4).cls, PathClass::kNode);
  EXPECT_EQ(p.get(g0, g5).cls, PathClass::kSys);
  EXPECT_DOUBLE_EQ(p.get(g0, g1).bw, 24);  // both GPUs' own links
  EXPECT_DOUBLE_EQ(p.get(g0, g2).bw, 12);  // through the upstream switch
  EXPECT_DOUBLE_EQ(p.get(g0, g5).bw, 10);  // Skylake UPI
  EXPECT_EQ(p.get(g0, g1).hops(), 2);
  EXPECT_EQ(p.get(g0, g0).cls, PathClass::kLoc);
  // nvidia-smi agrees on a tree.
  EXPECT_EQ(pcieClass(s, g0, g1), PathClass::kPix);
  EXPECT_EQ(pcieClass(s, g0, g2), PathClass::kPxb);
  EXPECT_EQ(pcieClass(s, g0, g3), PathClass::kPhb);
  EXPECT_EQ(pcieClass(s, g0, g4), PathClass::kNode);
  EXPECT_EQ(pcieClass(s, g0, g5), PathClass::kSys);
  EXPECT_EQ(pcieClass(s, g0, g0), PathClass::kLoc);
  // Not a source: no path.
  EXPECT_FALSE(p.get(up, g0).exists());
}

TEST(Paths, NvlinkThroughOneGpuAtMost) {
  Builder b;
  int c = b.cpu(0);
  std::vector<int> g;
  for (int i = 0; i < 4; ++i)
    g.push_back(b.node(NodeKind::kGpu, c, 12));
  // A chain 0 - 1 - 2 - 3 of NVLinks.
  for (int i = 0; i < 3; ++i)
    b.s.addNvlinks(g[i], g[i + 1], 2, 2, 40);
  b.s.finalize();
  Paths p(b.s);
  EXPECT_EQ(p.get(g[0], g[1]).cls, PathClass::kNvl);
  EXPECT_DOUBLE_EQ(p.get(g[0], g[1]).bw, 40);
  EXPECT_EQ(p.get(g[0], g[2]).cls, PathClass::kNvb);
  EXPECT_EQ(p.get(g[0], g[2]).nodes[1], g[1]);
  // Two GPUs in the middle is not allowed: PCIe through the CPU instead.
  EXPECT_EQ(p.get(g[0], g[3]).cls, PathClass::kPhb);
  EXPECT_EQ(nvlinkCount(b.s, g[0], g[2]), 0);
}

TEST(Paths, NoRouteThroughANic) {
  Builder b;
  int c0 = b.cpu(0), c1 = b.cpu(1);
  int g0 = b.node(NodeKind::kGpu, c0);
  int nic = b.node(NodeKind::kNic, c0);
  int port = b.net(nic);
  int g1 = b.node(NodeKind::kGpu, c1);
  b.s.finalize();
  Paths p(b.s);
  EXPECT_EQ(p.get(g0, nic).cls, PathClass::kPhb);
  EXPECT_EQ(p.get(g0, port).cls, PathClass::kPhb);  // into a NIC's own port
  EXPECT_EQ(p.get(port, g1).cls, PathClass::kSys);  // out of it
  EXPECT_EQ(p.get(port, g1).nodes[1], nic);
}

TEST(Paths, NvswitchFabric) {
  Builder b;
  int c = b.cpu(0);
  Node sw;
  sw.kind = NodeKind::kNvSwitch;
  int nvs = b.s.addNode(sw);
  std::vector<int> g;
  for (int i = 0; i < 4; ++i) {
    g.push_back(b.node(NodeKind::kGpu, c, 24));
    b.s.addNvlinks(g.back(), nvs, 18, 4, 18 * 20.6);
  }
  b.s.finalize();
  Paths p(b.s);
  EXPECT_EQ(p.get(g[0], g[3]).cls, PathClass::kNvl);
  EXPECT_NEAR(p.get(g[0], g[3]).bw, 370.8, 1e-9);
  EXPECT_EQ(nvlinkCount(b.s, g[0], g[3]), 18);
}

}  // namespace
}  // namespace weft::topo
