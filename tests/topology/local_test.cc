// This machine, discovery from a fake sysfs tree, and the interface the communicator calls.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "tests/topology/test_util.h"
#include "topology/discovery.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/paths.h"
#include "topology/topo.h"

namespace weft::topo {
namespace {

namespace fs = std::filesystem;

TEST(ThisMachine, DiscoveryFindsCpusNumaNodesAndInterfaces) {
  System s;
  Status st = loadSystemFrom("", &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_NE(s.format.find("discovery"), std::string::npos);
  // NUMA nodes with CPUs, as sysfs lists them.
  Sysfs sysfs;
  int numaWithCpus = 0, cpus = 0;
  for (const SysfsNuma& n : sysfs.numaNodes()) {
    numaWithCpus += !n.cpus.empty();
    cpus += n.cpus.count();
  }
  EXPECT_EQ(s.count(NodeKind::kCpu), numaWithCpus);
  int modelled = 0;
  for (int c : s.nodesOf(NodeKind::kCpu))
    modelled += s.nodes[c].cpu.cpus.count();
  EXPECT_EQ(modelled, cpus);
  EXPECT_GE(modelled, 1);
  // Every interface backed by a PCI network device is a port of a NIC.
  for (const SysfsNet& n : sysfs.netInterfaces()) {
    if (n.busId.empty()) continue;
    bool found = false;
    for (int net : s.nodesOf(NodeKind::kNet)) {
      found |= s.nodes[net].net.ifname == n.name || s.nodes[net].name == n.name;
    }
    EXPECT_TRUE(found) << n.name;
  }
  int numa = currentNumaNode(s);
  std::set<int> ids;
  for (int c : s.nodesOf(NodeKind::kCpu))
    ids.insert(s.nodes[c].cpu.numaId);
  EXPECT_TRUE(ids.count(numa)) << numa;
  // The rest of the interface works on it too.
  std::vector<int> order = orderCpuRanks(s, {numa, numa});
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  (void)nicForNuma(s, numa, 0);
}

TEST(ThisMachine, WithoutHwlocSysfsAloneDescribesIt) {
  Sysfs sysfs;
  System s;
  ASSERT_TRUE(systemFromSysfs(sysfs, "this machine", &s).ok());
  EXPECT_GE(s.count(NodeKind::kCpu), 1);
  enrichFromSysfs(&s, sysfs);
  EXPECT_GE(s.count(NodeKind::kCpu), 1);
}

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path();
    put("/proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
        "model name\t: Fake Xeon\n\nprocessor\t: 1\n");
    put("/proc/arch", "x86_64\n");
    put("/sys/devices/system/node/node0/cpulist", "0-3\n");
    put("/sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1048576 kB\n");
    put("/sys/devices/system/node/node1/cpulist", "4-7\n");
    put("/sys/devices/system/node/node2/cpulist", "\n");  // memory only
    for (int c = 0; c < 8; ++c) {
      std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/";
      put(base + "topology/physical_package_id", c < 4 ? "0\n" : "1\n");
      put(base + "topology/core_id", std::to_string(c % 4) + "\n");
      put(base + "cache/index3/level", "3\n");
      put(base + "cache/index3/size", "32768K\n");
      put(base + "cache/index3/shared_cpu_list", c < 4 ? "0-3\n" : "4-7\n");
    }
    std::string rp = "/sys/devices/pci0000:00/0000:00:01.0";
    std::string usp = rp + "/0000:01:00.0";
    device(rp, "0x060400", "0x8086", "16.0 GT/s PCIe", "16", "0");
    device(usp, "0x060400", "0x1000", "16.0 GT/s PCIe", "16", "0");
    device(usp + "/0000:02:00.0", "0x060400", "0x1000", "16.0 GT/s PCIe", "16", "0");
    device(usp + "/0000:02:01.0", "0x060400", "0x1000", "16.0 GT/s PCIe", "16", "0");
    device(usp + "/0000:02:00.0/0000:03:00.0", "0x030200", "0x10de", "32.0 GT/s PCIe", "16", "0");
    device(usp + "/0000:02:01.0/0000:04:00.0", "0x020000", "0x15b3", "16.0 GT/s PCIe", "16", "0");
    device("/sys/devices/pci0000:80/0000:80:01.0", "0x060400", "0x8086", "8.0 GT/s PCIe", "8", "1");
    device("/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", "0x010802", "0x144d",
           "8.0 GT/s PCIe", "4", "1");  // an NVMe drive: neither GPU nor NIC
    for (const char* bus : {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:02:01.0",
                            "0000:03:00.0", "0000:04:00.0", "0000:80:01.0", "0000:81:00.0"}) {
      link("/sys/bus/pci/devices/" + std::string(bus), find(bus));
    }
    put("/sys/class/net/eth0/speed", "100000\n");
    put("/sys/class/net/eth0/type", "1\n");
    put("/sys/class/net/eth0/operstate", "up\n");
    link("/sys/class/net/eth0/device", find("0000:04:00.0"));
    put("/sys/class/net/veth7/type", "1\n");
    put("/sys/class/net/veth7/operstate", "up\n");
    put("/sys/class/net/veth7/speed", "10000\n");
    put("/sys/class/net/lo/type", "772\n");
    put("/sys/class/net/lo/operstate", "unknown\n");
    put("/sys/class/net/down0/type", "1\n");
    put("/sys/class/net/down0/operstate", "down\n");
  }

  void put(const std::string& path, const std::string& text) { dir_.file(path.substr(1), text); }
  void link(const std::string& at, const std::string& target) {
    fs::create_directories(fs::path(root_ + at).parent_path());
    fs::create_symlink(root_ + target, root_ + at);
  }
  void device(const std::string& dir, const char* cls, const char* vendor, const char* speed,
              const char* width, const char* numa) {
    put(dir + "/class", std::string(cls) + "\n");
    put(dir + "/vendor", std::string(vendor) + "\n");
    put(dir + "/device", "0x1234\n");
    put(dir + "/max_link_speed", std::string(speed) + "\n");
    put(dir + "/max_link_width", std::string(width) + "\n");
    put(dir + "/numa_node", std::string(numa) + "\n");
    dirs_.push_back(dir);
  }
  std::string find(const std::string& bus) const {
    for (const std::string& d : dirs_) {
      if (d.size() >= bus.size() && d.compare(d.size() - bus.size(), bus.size(), bus) == 0)
        return d;
    }
    return "";
  }

  test::TempDir dir_;
  std::string root_;
  std::vector<std::string> dirs_;
};

TEST_F(FakeSysfs, BuildsTheModelNcclWould) {
  Sysfs sysfs(root_);
  System s;
  ASSERT_TRUE(systemFromSysfs(sysfs, "fake", &s).ok());
  enrichFromSysfs(&s, sysfs);
  s.finalize();
  EXPECT_EQ(s.count(NodeKind::kCpu), 2);  // node2 has no CPU
  int cpu1 = s.findCpu(1);
  ASSERT_GE(cpu1, 0);
  EXPECT_EQ(s.nodes[cpu1].cpu.packageId, 1);
  EXPECT_EQ(s.nodes[cpu1].cpu.cores, 4);
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.l3Bytes, 32u << 20);
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.memoryBytes, 1ull << 30);
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.vendor, "GenuineIntel");
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.modelId, 143);
  // The switch is its upstream port; the root and downstream ports are folded away.
  EXPECT_EQ(s.count(NodeKind::kPciSwitch), 1);
  int sw = s.findBusId("0000:01:00.0");
  ASSERT_GE(sw, 0);
  EXPECT_EQ(s.nodes[sw].kind, NodeKind::kPciSwitch);
  int gpu = s.findBusId("0000:03:00.0");
  int nic = s.findBusId("0000:04:00.0");
  ASSERT_GE(gpu, 0);
  ASSERT_GE(nic, 0);
  EXPECT_EQ(s.nodes[gpu].kind, NodeKind::kGpu);
  EXPECT_EQ(s.nodes[gpu].parent, sw);
  EXPECT_EQ(s.nodes[nic].name, "eth0");
  EXPECT_EQ(pcieClass(s, gpu, nic), PathClass::kPix);
  EXPECT_LT(s.findBusId("0000:81:00.0"), 0);  // the drive is left out
  // The GPU's link: the slower of its own and its port's maximum (Gen4 x16).
  const Link& up = s.links[s.linkBetween(gpu, sw, LinkKind::kPcie)];
  EXPECT_DOUBLE_EQ(up.bw, 24.0);
  EXPECT_EQ(up.pcieWidth, 16);
  EXPECT_EQ(s.nodes[s.findNet("eth0")].net.speedMbps, 100000);
  // An interface with no PCI device that is up is a virtual NIC; loopback and down ones are not.
  int veth = s.findNet("veth7");
  ASSERT_GE(veth, 0);
  EXPECT_TRUE(s.nodes[s.nodes[veth].parent].isVirtual);
  EXPECT_LT(s.findNet("lo"), 0);
  EXPECT_LT(s.findNet("down0"), 0);
  EXPECT_EQ(nicForNuma(s, 0, 0), "eth0");
  EXPECT_EQ(nicForGpu(s, 0, 0), "eth0");
}

TEST(Interface, LoadsFilesInsteadOfDiscovering) {
  System s;
  ASSERT_TRUE(loadSystemFrom(test::dataPath("aws-p4d.24xlarge-a100x8-efa4.nccl.xml"), &s).ok());
  EXPECT_EQ(s.count(NodeKind::kGpu), 8);
  Status bad = loadSystemFrom(test::dataPath("SOURCES.md"), &s);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("SOURCES.md"), std::string::npos);
}

TEST(Interface, NicChoicesSpreadOverEquallyCloseNics) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  System s = test::load("cisco-ucs-2s-cpuonly-usnic.hwloc.xml");
  // NUMA 0: the two usNIC VICs (interfaces eth4, eth5), not the plain I350 ports eth0/eth1.
  EXPECT_EQ(nicForNuma(s, 0, 0), "eth4");
  EXPECT_EQ(nicForNuma(s, 0, 1), "eth5");
  EXPECT_EQ(nicForNuma(s, 0, 2), "eth4");
  // NUMA 1: usnic_2 (eth6) is its only RDMA-capable NIC; eth7 has no usNIC.
  EXPECT_EQ(nicForNuma(s, 1, 0), "eth6");
  EXPECT_EQ(nicForNuma(s, 1, 1), "eth6");
}

TEST(Interface, NicForGpu) {
  System s = test::load("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml");
  EXPECT_EQ(nicForGpu(s, 0), "mlx5_bond_1");
  EXPECT_EQ(nicForGpu(s, 7), "mlx5_bond_4");
  EXPECT_EQ(nicForGpu(s, 8), "");
  System none = test::load("aws-g5.48xlarge-a10gx8-pcie.nccl.xml");
  EXPECT_EQ(nicForNuma(none, 0), "");
  EXPECT_EQ(currentNumaNode(none), -1);  // the file gives no CPU lists
}

}  // namespace
}  // namespace weft::topo
