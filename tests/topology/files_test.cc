// Every file of data/ loads, and shows the facts read by hand from it (see data/SOURCES.md):
// device counts, which GPU is closest to which NIC, the path class of chosen pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/topology/test_util.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/locality.h"
#include "topology/paths.h"

namespace weft::topo {
namespace {

using test::find;
using test::load;

struct Counts {
  int cpus, gpus, nics, switches;
};

void expectCounts(const System& s, Counts c) {
  EXPECT_EQ(s.count(NodeKind::kCpu), c.cpus);
  EXPECT_EQ(s.count(NodeKind::kGpu), c.gpus);
  EXPECT_EQ(s.count(NodeKind::kNic), c.nics);
  EXPECT_EQ(s.count(NodeKind::kPciSwitch), c.switches);
}

// nvidia-smi's class of two devices named by name or bus id.
std::string pcie(const System& s, const std::string& a, const std::string& b) {
  int x = find(s, a), y = find(s, b);
  EXPECT_GE(x, 0) << a;
  EXPECT_GE(y, 0) << b;
  return x < 0 || y < 0 ? "?" : toString(pcieClass(s, x, y));
}

// The class of the path NCCL's model routes between them.
std::string route(const System& s, const std::string& a, const std::string& b) {
  Paths paths(s);
  return toString(paths.get(find(s, a), find(s, b)).cls);
}

// The NICs (names) closest to a device.
std::vector<std::string> closest(const System& s, const std::string& device) {
  Paths paths(s);
  std::vector<std::string> out;
  for (int nic : closestNics(s, paths, find(s, device)))
    out.push_back(s.nodes[nic].name);
  return out;
}

std::vector<std::string> v(std::initializer_list<const char*> names) {
  return std::vector<std::string>(names.begin(), names.end());
}

int numaOf(const System& s, const std::string& device) {
  return s.nodes[s.cpuOf(find(s, device))].cpu.numaId;
}

bool needsHwloc(const std::string& file) {
  return file.find(".hwloc.") != std::string::npos;
}

class EveryFile : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryFile, Loads) {
  if (needsHwloc(GetParam()) && !hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  System s = load(GetParam());
  ASSERT_GT(s.count(NodeKind::kCpu), 0);
  EXPECT_FALSE(s.format.empty());
  // Every device hangs from a CPU; every link joins two existing nodes.
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    NodeKind k = s.nodes[i].kind;
    if (k == NodeKind::kCpu || k == NodeKind::kNvSwitch) continue;
    EXPECT_GE(s.cpuOf(static_cast<int>(i)), 0) << s.label(static_cast<int>(i));
  }
  for (const Link& l : s.links) {
    EXPECT_GT(l.bw, 0);
    EXPECT_NE(l.a, l.b);
  }
}

INSTANTIATE_TEST_SUITE_P(Data, EveryFile, ::testing::ValuesIn(test::dataFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(Files, AllThirteenArePresent) {
  EXPECT_EQ(test::dataFiles().size(), 13u);
}

TEST(Files, AlibabaHgxA100) {
  System s = load("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml");
  expectCounts(s, {2, 8, 5, 20});
  EXPECT_EQ(s.count(NodeKind::kNvSwitch), 1);
  int nvs = s.nodesOf(NodeKind::kNvSwitch).front();
  EXPECT_EQ(s.nodes[nvs].members.size(), 6u);  // c0..c5
  for (int g : s.gpus()) {
    int l = s.linkBetween(g, nvs, LinkKind::kNvlink);
    ASSERT_GE(l, 0);
    EXPECT_EQ(s.links[l].nvlinks, 12);  // 6 switches x 2
    EXPECT_DOUBLE_EQ(s.links[l].bw, 240.0);
    EXPECT_EQ(s.nodes[g].gpu.sm, 80);
  }
  for (int net : s.nodesOf(NodeKind::kNet))
    EXPECT_EQ(s.nodes[net].net.speedMbps, 200000);
  EXPECT_EQ(s.nodes[find(s, "GPU0")].pci.busId, "0000:13:00.0");
  EXPECT_EQ(s.nodes[find(s, "GPU7")].pci.busId, "0000:b3:00.0");
  EXPECT_EQ(numaOf(s, "GPU3"), 0);
  EXPECT_EQ(numaOf(s, "GPU4"), 1);
  // Each bond_1..4 shares a switch tree with two GPUs; bond_0 is the front-end NIC.
  EXPECT_EQ(closest(s, "GPU0"), v({"mlx5_bond_1"}));
  EXPECT_EQ(closest(s, "GPU1"), v({"mlx5_bond_1"}));
  EXPECT_EQ(closest(s, "GPU3"), v({"mlx5_bond_2"}));
  EXPECT_EQ(closest(s, "GPU5"), v({"mlx5_bond_3"}));
  EXPECT_EQ(closest(s, "GPU6"), v({"mlx5_bond_4"}));
  EXPECT_EQ(pcie(s, "GPU0", "mlx5_bond_1"), "PXB");
  EXPECT_EQ(pcie(s, "GPU0", "mlx5_bond_0"), "PHB");
  EXPECT_EQ(pcie(s, "GPU0", "mlx5_bond_3"), "SYS");
  EXPECT_EQ(pcie(s, "GPU0", "GPU1"), "PXB");
  EXPECT_EQ(pcie(s, "GPU0", "GPU4"), "SYS");
  EXPECT_EQ(route(s, "GPU0", "GPU4"), "NVL");  // through the NVSwitch
  EXPECT_EQ(nvlinkCount(s, find(s, "GPU0"), find(s, "GPU7")), 12);
}

TEST(Files, AwsG5PartialWithoutClasses) {
  System s = load("aws-g5.48xlarge-a10gx8-pcie.nccl.xml");
  expectCounts(s, {2, 0, 0, 0});
  EXPECT_EQ(s.count(NodeKind::kPciDevice), 9);
  EXPECT_EQ(numaOf(s, "0000:00:16.0"), 0);
  EXPECT_EQ(numaOf(s, "0000:00:15.0"), 1);  // the probable EFA, on NUMA 1
  EXPECT_EQ(pcie(s, "0000:00:16.0", "0000:00:19.0"), "PHB");
  EXPECT_EQ(pcie(s, "0000:00:16.0", "0000:00:1a.0"), "SYS");
  EXPECT_FALSE(s.notes.empty());
}

TEST(Files, AwsP4dPartial) {
  System s = load("aws-p4d.24xlarge-a100x8-efa4.nccl.xml");
  expectCounts(s, {2, 8, 4, 4});
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.cpus.toList(), "0-23,48-71");
  EXPECT_EQ(s.nodes[find(s, "GPU0")].pci.busId, "0000:10:1c.0");
  EXPECT_FALSE(s.nodes[find(s, "GPU0")].gpu.described);
  // Two GPUs and one EFA per switch.
  EXPECT_EQ(pcie(s, "0000:10:1c.0", "0000:10:1d.0"), "PIX");
  EXPECT_EQ(pcie(s, "0000:10:1c.0", "0000:10:1b.0"), "PIX");
  EXPECT_EQ(pcie(s, "0000:10:1c.0", "0000:20:1c.0"), "PHB");
  EXPECT_EQ(pcie(s, "0000:10:1c.0", "0000:90:1c.0"), "SYS");
  Paths paths(s);
  int nic = closestNics(s, paths, find(s, "0000:a0:1d.0")).front();
  EXPECT_EQ(s.nodes[nic].pci.busId, "0000:a0:1b.0");
  EXPECT_EQ(s.count(NodeKind::kNvSwitch), 0);  // not in a partial file
}

TEST(Files, AwsP5ManyNicEndpoints) {
  System s = load("aws-p5.48xlarge-h100x8-efa32.nccl.xml");
  expectCounts(s, {2, 0, 0, 8});
  EXPECT_EQ(s.count(NodeKind::kPciDevice), 32);
  for (int sw : s.nodesOf(NodeKind::kPciSwitch)) {
    int under = 0;
    for (const Node& n : s.nodes)
      under += n.parent == sw;
    EXPECT_EQ(under, 4) << s.nodes[sw].pci.busId;
  }
  EXPECT_EQ(pcie(s, "0000:4f:00.0", "0000:52:00.0"), "PIX");
  EXPECT_EQ(pcie(s, "0000:4f:00.0", "0000:60:00.0"), "PHB");
  EXPECT_EQ(pcie(s, "0000:4f:00.0", "0000:93:00.0"), "SYS");
}

TEST(Files, AzureNcv4OneGpuPerNuma) {
  System s = load("azure-ncv4-a100x4-pcie.nccl.xml");
  expectCounts(s, {4, 4, 1, 0});
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(numaOf(s, "GPU" + std::to_string(i)), i);
  // The self-NVLinks are ignored, so there is no NVLink at all.
  for (const Link& l : s.links)
    EXPECT_NE(l.kind, LinkKind::kNvlink);
  EXPECT_EQ(
      std::count_if(s.notes.begin(), s.notes.end(),
                    [](const std::string& n) { return n.find("to itself") != std::string::npos; }),
      4);
  EXPECT_EQ(closest(s, "GPU0"), v({"eth0"}));
  EXPECT_EQ(pcie(s, "GPU0", "eth0"), "PHB");
  EXPECT_EQ(pcie(s, "GPU1", "eth0"), "SYS");
  EXPECT_EQ(pcie(s, "GPU0", "GPU1"), "SYS");
  int nic = find(s, "eth0");
  EXPECT_TRUE(s.nodes[nic].isVirtual);
  EXPECT_EQ(s.nodes[s.netsOf(nic).front()].net.speedMbps, 100000);
}

TEST(Files, AzureNdv2DgxSkeleton) {
  System s = load("azure-ndv2-v100x8-edr1.nccl.xml");
  expectCounts(s, {2, 8, 1, 0});
  EXPECT_EQ(pcie(s, "0001:00:00.0", "0002:00:00.0"), "PHB");
  EXPECT_EQ(pcie(s, "0001:00:00.0", "0005:00:00.0"), "SYS");
  EXPECT_EQ(pcie(s, "0001:00:00.0", "0101:00:00.0"), "PHB");
  EXPECT_EQ(pcie(s, "0005:00:00.0", "0101:00:00.0"), "SYS");
  EXPECT_EQ(numaOf(s, "0101:00:00.0"), 0);
}

TEST(Files, AzureNdv4TwoGpusTwoNicsPerSwitch) {
  System s = load("azure-ndv4-a100x8-hdr200x8.nccl.xml");
  expectCounts(s, {4, 8, 8, 4});
  EXPECT_EQ(numaOf(s, "0003:00:00.0"), 0);
  EXPECT_EQ(numaOf(s, "0001:00:00.0"), 1);
  EXPECT_EQ(pcie(s, "0003:00:00.0", "0004:00:00.0"), "PIX");
  EXPECT_EQ(pcie(s, "0003:00:00.0", "0103:00:00.0"), "PIX");
  EXPECT_EQ(pcie(s, "0003:00:00.0", "0101:00:00.0"), "SYS");
  Paths paths(s);
  std::set<std::string> near;
  for (int nic : closestNics(s, paths, find(s, "0003:00:00.0")))
    near.insert(s.nodes[nic].pci.busId);
  EXPECT_EQ(near, (std::set<std::string>{"0103:00:00.0", "0104:00:00.0"}));
  // Spread: the eight GPUs get eight different NICs, each one under its own switch.
  std::vector<int> nics = assignNics(s, paths, s.gpus());
  EXPECT_EQ(std::set<int>(nics.begin(), nics.end()).size(), 8u);
  for (size_t g = 0; g < nics.size(); ++g) {
    EXPECT_EQ(pcieClass(s, s.gpus()[g], nics[g]), PathClass::kPix);
  }
}

TEST(Files, AzureNdv5OneGpuOneNicPerSwitch) {
  System s = load("azure-ndv5-h100x8-ndr400x8.nccl.xml");
  expectCounts(s, {2, 8, 8, 8});
  EXPECT_EQ(pcie(s, "0001:00:00.0", "0101:00:00.0"), "PIX");
  EXPECT_EQ(pcie(s, "0008:00:00.0", "0104:00:00.0"), "PIX");
  EXPECT_EQ(pcie(s, "0001:00:00.0", "0002:00:00.0"), "PHB");
  EXPECT_EQ(pcie(s, "0001:00:00.0", "0009:00:00.0"), "SYS");
  int l = s.links[s.nodes[find(s, "0001:00:00.0")].links.front()].pcieWidth;
  EXPECT_EQ(l, 16);
  Paths paths(s);
  int nic = closestNics(s, paths, find(s, "000c:00:00.0")).front();
  EXPECT_EQ(s.nodes[nic].pci.busId, "0108:00:00.0");
}

TEST(Files, RcclEightGpuPcieTrees) {
  System s = load("rccl-model-8x-gfx906-pcie-2nic.nccl.xml");
  expectCounts(s, {1, 8, 2, 10});
  EXPECT_EQ(s.nodes[find(s, "GPU0")].pci.busId, "0000:1d:00.0");
  EXPECT_EQ(s.nodes[find(s, "GPU0")].pci.classCode, "0x038000");
  EXPECT_EQ(pcie(s, "GPU0", "GPU1"), "PXB");
  EXPECT_EQ(pcie(s, "GPU0", "GPU4"), "PHB");
  EXPECT_EQ(pcie(s, "GPU0", "mlx5_0"), "PXB");
  EXPECT_EQ(pcie(s, "GPU4", "mlx5_0"), "PHB");
  EXPECT_EQ(closest(s, "GPU3"), v({"mlx5_0"}));
  EXPECT_EQ(closest(s, "GPU7"), v({"mlx5_1"}));
  EXPECT_EQ(s.nodes[s.netsOf(find(s, "mlx5_1")).front()].net.guid, "0xb8599f030007053a");
}

TEST(Files, NvidiaDgx1Matrix) {
  System s = load("nvidia-dgx1-v100-4xedr.nvsmi.txt");
  expectCounts(s, {2, 8, 4, 4});
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.cpus.toList(), "0-19,40-59");
  EXPECT_EQ(numaOf(s, "GPU5"), 1);
  EXPECT_EQ(nvlinkCount(s, find(s, "GPU0"), find(s, "GPU3")), 2);
  EXPECT_EQ(nvlinkCount(s, find(s, "GPU0"), find(s, "GPU1")), 1);
  EXPECT_EQ(nvlinkCount(s, find(s, "GPU0"), find(s, "GPU5")), 0);
  EXPECT_EQ(route(s, "GPU0", "GPU5"), "NVB");  // through one GPU over NVLink
  EXPECT_EQ(pcie(s, "GPU0", "GPU5"), "SYS");
  EXPECT_EQ(closest(s, "GPU0"), v({"mlx5_0"}));
  EXPECT_EQ(closest(s, "GPU2"), v({"mlx5_1"}));
  EXPECT_EQ(closest(s, "GPU5"), v({"mlx5_2"}));
  EXPECT_EQ(closest(s, "GPU7"), v({"mlx5_3"}));
  EXPECT_EQ(pcie(s, "mlx5_0", "GPU2"), "PHB");
  int nvlinks = 0;
  for (const Link& l : s.links)
    nvlinks += l.kind == LinkKind::kNvlink ? l.nvlinks : 0;
  EXPECT_EQ(nvlinks, 24);  // 6 per GPU, counted once per pair
}

TEST(Files, CiscoCpuOnly) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  System s = load("cisco-ucs-2s-cpuonly-usnic.hwloc.xml");
  expectCounts(s, {2, 0, 6, 4});
  EXPECT_EQ(s.count(NodeKind::kHostBridge), 2);
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.cpus.toList(), "0-7");
  EXPECT_EQ(s.nodes[s.findCpu(1)].cpu.packageId, 1);
  EXPECT_EQ(s.nodes[s.findCpu(1)].cpu.cores, 8);
  EXPECT_EQ(numaOf(s, "usnic_2"), 1);
  EXPECT_EQ(numaOf(s, "usnic_0"), 0);
  EXPECT_EQ(s.nodes[s.netsOf(find(s, "usnic_0")).front()].net.ifname, "eth4");
  EXPECT_EQ(pcie(s, "usnic_0", "usnic_1"), "PIX");
  EXPECT_EQ(pcie(s, "eth0", "usnic_0"), "PHB");
  EXPECT_EQ(pcie(s, "eth0", "eth7"), "SYS");
  // Unbound virtual functions (no OS device) are not NICs.
  EXPECT_LT(find(s, "0000:0b:00.1"), 0);
}

// Which NIC a NUMA node's ranks use: an RDMA-capable one (usNIC here) before plain Ethernet on
// the same NUMA node, but never one across the sockets before a local one.
TEST(Files, CiscoNumaNodesPreferUsnic) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  System s = load("cisco-ucs-2s-cpuonly-usnic.hwloc.xml");
  for (const char* n : {"usnic_0", "usnic_1", "usnic_2"})
    EXPECT_TRUE(isRdmaNic(s, find(s, n))) << n;
  for (const char* n : {"eth0", "eth1", "eth7"})  // I350 ports; a VIC port without usNIC
    EXPECT_FALSE(isRdmaNic(s, find(s, n))) << n;
  // The I350s are closer to CPU0 (fewer hops, no VIC switches), yet the usNICs win.
  EXPECT_EQ(closest(s, "CPU0"), v({"usnic_0", "usnic_1"}));
  EXPECT_EQ(closest(s, "CPU1"), v({"usnic_2"}));
  Paths paths(s);
  std::vector<int> order = nicsByCloseness(s, paths, find(s, "CPU0"));
  ASSERT_EQ(order.size(), 6u);
  EXPECT_EQ(s.nodes[order[2]].name, "eth0");  // then the local plain NICs, then the far ones
  EXPECT_EQ(s.nodes[order[3]].name, "eth1");
  // Without its usNIC, NUMA 1 keeps its own two VIC ports rather than NUMA 0's usNICs.
  for (int net : s.netsOf(find(s, "usnic_2")))
    s.nodes[net].net.rdmaDevice.clear();
  EXPECT_EQ(closest(s, "CPU1"), v({"usnic_2", "eth7"}));
}

// Other files: InfiniBand classes, EFA and GPUDirect ports count as RDMA; a virtual eth0 not.
TEST(Files, RdmaNicsOfTheOtherFiles) {
  System ndv4 = load("azure-ndv4-a100x8-hdr200x8.nccl.xml");  // bare 0x020700 endpoints
  for (int nic : ndv4.nics())
    EXPECT_TRUE(isRdmaNic(ndv4, nic));
  System p4d = load("aws-p4d.24xlarge-a100x8-efa4.nccl.xml");  // EFA, class 0x020000
  for (int nic : p4d.nics())
    EXPECT_TRUE(isRdmaNic(p4d, nic));
  System hgx = load("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml");  // <net gdr="1">
  for (int nic : hgx.nics())
    EXPECT_TRUE(isRdmaNic(hgx, nic));
  System ncv4 = load("azure-ncv4-a100x4-pcie.nccl.xml");  // <net name="eth0" gdr="0">
  EXPECT_FALSE(isRdmaNic(ncv4, find(ncv4, "eth0")));
  if (!hwlocAvailable()) return;
  System hp = load("hp-sl390s-g7-2s-m2070x3-qdr.hwloc.xml");
  EXPECT_TRUE(isRdmaNic(hp, find(hp, "mlx4_0")));
  EXPECT_FALSE(isRdmaNic(hp, find(hp, "eth0")));
  // Every NIC is on socket 0: from socket 1 the InfiniBand port, the only RDMA one, wins.
  EXPECT_EQ(closest(hp, "CPU1"), v({"mlx4_0"}));
  EXPECT_EQ(closest(hp, "GPU1"), v({"mlx4_0"}));
}

TEST(Files, HpTwoSocketsThreeGpus) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  System s = load("hp-sl390s-g7-2s-m2070x3-qdr.hwloc.xml");
  expectCounts(s, {2, 3, 3, 0});
  EXPECT_EQ(s.count(NodeKind::kHostBridge), 2);
  EXPECT_EQ(s.nodes[find(s, "GPU0")].pci.busId, "0000:06:00.0");
  EXPECT_EQ(numaOf(s, "GPU0"), 0);
  EXPECT_EQ(numaOf(s, "GPU1"), 1);
  EXPECT_EQ(numaOf(s, "GPU2"), 1);
  EXPECT_LT(find(s, "0000:01:03.0"), 0);  // the ES1000 VGA is not a compute GPU
  EXPECT_EQ(closest(s, "GPU0"), v({"mlx4_0"}));
  EXPECT_EQ(pcie(s, "GPU0", "mlx4_0"), "PHB");
  EXPECT_EQ(pcie(s, "GPU1", "mlx4_0"), "SYS");
  EXPECT_EQ(pcie(s, "GPU1", "GPU2"), "PHB");
  EXPECT_EQ(pcie(s, "GPU0", "GPU1"), "SYS");
  for (int nic : s.nics())
    EXPECT_EQ(s.nodes[s.cpuOf(nic)].cpu.numaId, 0);
  EXPECT_EQ(s.nodes[s.netsOf(find(s, "mlx4_0")).front()].net.ifname, "eth2");
}

TEST(Files, IbmMinskyCpuGpuNvlink) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  System s = load("ibm-power8-minsky-p100x4-nvlink.hwloc.xml");
  expectCounts(s, {2, 4, 0, 0});
  EXPECT_EQ(s.nodes[find(s, "GPU0")].gpu.model, "Tesla P100-SXM2-16GB");
  EXPECT_EQ(s.nodes[find(s, "GPU0")].gpu.sm, 60);
  EXPECT_EQ(nvlinkCount(s, find(s, "GPU0"), find(s, "GPU1")), 2);  // 40 GB/s = 2 NVLink1
  EXPECT_EQ(nvlinkCount(s, find(s, "GPU2"), find(s, "GPU3")), 2);
  EXPECT_EQ(nvlinkCount(s, find(s, "GPU0"), find(s, "GPU2")), 0);
  int g0 = find(s, "GPU0");
  int cpuLink = s.linkBetween(g0, s.findCpu(0), LinkKind::kNvlink);
  ASSERT_GE(cpuLink, 0);
  EXPECT_EQ(s.links[cpuLink].nvlinks, 2);
  EXPECT_EQ(route(s, "GPU0", "GPU1"), "NVL");
  EXPECT_EQ(route(s, "GPU0", "GPU2"), "SYS");
  EXPECT_DOUBLE_EQ(
      s.links[s.linkBetween(s.findCpu(0), s.findCpu(1), LinkKind::kCpuInterconnect)].bw, 32.0);
}

}  // namespace
}  // namespace weft::topo
