// Rings and trees on the data files: every ring visits every rank once, with the best bottleneck
// the file allows; across hosts rings enter and leave by the NIC next to the GPU there.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "tests/topology/test_util.h"
#include "topology/cpu_ranks.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/locality.h"
#include "topology/ring_search.h"
#include "topology/tree_search.h"

namespace weft::topo {
namespace {

struct Planned {
  System system;
  RingPlan plan;
};

Planned rings(const std::string& file, int ranks, int hosts = 1,
              RankDevice device = RankDevice::kAuto) {
  Planned p;
  p.system = test::load(file);
  Paths paths(p.system);
  RankSet set;
  Status s = chooseRanks(p.system, ranks, device, &set);
  EXPECT_TRUE(s.ok()) << s.message();
  s = searchRings(p.system, paths, set, hosts, ChannelOptions(), &p.plan);
  EXPECT_TRUE(s.ok()) << s.message();
  return p;
}

// Every ring is a permutation of the ranks.
void expectCoverage(const RingPlan& plan) {
  ASSERT_FALSE(plan.rings.empty());
  size_t n = plan.ranks.nodes.size();
  for (const Ring& r : plan.rings) {
    std::vector<int> order = r.order;
    std::sort(order.begin(), order.end());
    std::vector<int> all(n);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(order, all);
    EXPECT_GT(r.bw, 0);
    EXPECT_LE(r.bw, r.bottleneck + 1e-9);
    EXPECT_FALSE(r.why.empty());
  }
}

double total(const RingPlan& plan) {
  double t = 0;
  for (const Ring& r : plan.rings)
    t += r.bw;
  return t;
}

bool allHops(const Ring& r, std::initializer_list<PathClass> allowed) {
  return std::all_of(r.hops.begin(), r.hops.end(), [&](PathClass c) {
    return std::find(allowed.begin(), allowed.end(), c) != allowed.end();
  });
}

TEST(Rings, NvswitchBoxUsesNvlinkAtFullBandwidth) {
  Planned p = rings("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml", 8);
  expectCoverage(p.plan);
  EXPECT_DOUBLE_EQ(p.plan.best, 240.0);
  EXPECT_EQ(p.plan.bestClass, PathClass::kNvl);
  for (const Ring& r : p.plan.rings) {
    EXPECT_TRUE(allHops(r, {PathClass::kNvl}));
    EXPECT_DOUBLE_EQ(r.bottleneck, 240.0);  // 12 NVLink3 to the switches
    EXPECT_NE(r.why.find("NVSwitch"), std::string::npos);
  }
  // The channels together use all of each GPU's NVLink bandwidth.
  EXPECT_NEAR(total(p.plan), 240.0, 1e-6);
  EXPECT_GE(p.plan.rings.size(), 2u);
}

TEST(Rings, Dgx1FollowsNvlinkEdgesOnly) {
  Planned p = rings("nvidia-dgx1-v100-4xedr.nvsmi.txt", 8);
  expectCoverage(p.plan);
  EXPECT_DOUBLE_EQ(p.plan.best, 40.0);  // a ring of NV2 edges exists
  for (const Ring& r : p.plan.rings) {
    EXPECT_TRUE(allHops(r, {PathClass::kNvl})) << describeHops(r.hops);
    EXPECT_NE(r.why.find("NVLink edges only"), std::string::npos);
    for (size_t i = 0; i < r.order.size(); ++i) {
      int a = p.plan.ranks.nodes[r.order[i]];
      int b = p.plan.ranks.nodes[r.order[(i + 1) % r.order.size()]];
      EXPECT_GT(nvlinkCount(p.system, a, b), 0);
    }
  }
  // Six NVLinks of 20 GB/s per GPU, all used.
  EXPECT_NEAR(total(p.plan), 120.0, 1e-6);
}

TEST(Rings, PcieBoxKeepsNeighboursUnderOneSwitch) {
  Planned p = rings("rccl-model-8x-gfx906-pcie-2nic.nccl.xml", 8);
  expectCoverage(p.plan);
  // Limited by a PCIe Gen3 x16 switch uplink, not by anything the ring could avoid.
  EXPECT_DOUBLE_EQ(p.plan.best, 12.0);
  for (const Ring& r : p.plan.rings) {
    EXPECT_DOUBLE_EQ(r.bottleneck, 12.0);
    EXPECT_NE(r.bottleneckLink.find("PCIe Gen3 x16"), std::string::npos) << r.bottleneckLink;
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kPhb), 2);  // cross once each way
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kPxb), 6);
  }
}

TEST(Rings, PcieBoxesAreBoundByPcie) {
  // One A100 per NUMA node: the GPUs' PCIe links (Gen3 x16 by default) bound the ring, not the
  // 24 GB/s Infinity Fabric between the NUMA nodes.
  Planned ncv4 = rings("azure-ncv4-a100x4-pcie.nccl.xml", 4);
  expectCoverage(ncv4.plan);
  EXPECT_DOUBLE_EQ(ncv4.plan.best, 12.0);
  for (const Ring& r : ncv4.plan.rings)
    EXPECT_NE(r.bottleneckLink.find("PCIe"), std::string::npos);
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  Planned hp = rings("hp-sl390s-g7-2s-m2070x3-qdr.hwloc.xml", 3);
  expectCoverage(hp.plan);
  EXPECT_DOUBLE_EQ(hp.plan.best, 3.0);  // the M2070s' PCIe links
  for (const Ring& r : hp.plan.rings)
    EXPECT_NE(r.bottleneckLink.find("PCIe"), std::string::npos);
}

TEST(Rings, PartialNvswitchFilesPairGpusOfASwitch) {
  Planned p = rings("aws-p4d.24xlarge-a100x8-efa4.nccl.xml", 8);
  expectCoverage(p.plan);
  EXPECT_DOUBLE_EQ(p.plan.best, 10.0);  // Cascade Lake UPI between the sockets
  for (const Ring& r : p.plan.rings) {
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kPix), 4);
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kSys), 2);
  }
  Planned ndv4 = rings("azure-ndv4-a100x8-hdr200x8.nccl.xml", 8);
  expectCoverage(ndv4.plan);
  EXPECT_DOUBLE_EQ(ndv4.plan.best, 16.0);  // Rome Infinity Fabric
  for (const Ring& r : ndv4.plan.rings) {
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kPix), 4);
  }
}

// Rings that must cross between the sockets do so once each way, so the link between the
// CPUs bounds them. The bandwidths, by hand from the files and NCCL's tables in bandwidth.cc:
// - ndv2: Skylake (family 6, model 85 = 0x55): UPI 10 GB/s; GPUs on 16 GT/s x16 (Gen4, 24 GB/s)
//   straight under the CPUs.
// - ndv5: Sapphire Rapids (model 143 = 0x8F): UPI 22 GB/s; GPUs and switch uplinks 32 GT/s x16
//   (Gen5, 48 GB/s).
// - Minsky: POWER (ppc64le): X-Bus 32 GB/s; each GPU has 40 GB/s of NVLink1 to its socket in the
//   NVLinkBandwidth matrix, 2 links of 18 GB/s = 36 GB/s in the model, and PCIe Gen3 x16 (12).
void expectSocketBound(const Planned& p, double bw, const std::string& link) {
  expectCoverage(p.plan);
  EXPECT_DOUBLE_EQ(p.plan.best, bw);
  EXPECT_EQ(p.plan.bestClass, PathClass::kSys);
  EXPECT_NEAR(total(p.plan), bw, 1e-6);
  for (const Ring& r : p.plan.rings) {
    EXPECT_DOUBLE_EQ(r.bottleneck, bw);
    EXPECT_NE(r.bottleneckLink.find("CPU0 <-> CPU1 " + link), std::string::npos)
        << r.bottleneckLink;
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kSys), 2) << r.why;
  }
}

TEST(Rings, AzureNdv2BoundByUpi) {
  Planned p = rings("azure-ndv2-v100x8-edr1.nccl.xml", 8);
  EXPECT_EQ(p.plan.ranks.nodes, p.system.gpus());
  expectSocketBound(p, 10.0, "UPI");
  for (const Ring& r : p.plan.rings)  // no switch: the other hops go through a CPU
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kPhb), 6) << r.why;
}

TEST(Rings, AzureNdv5OneHostBoundByUpi) {
  Planned p = rings("azure-ndv5-h100x8-ndr400x8.nccl.xml", 8);
  EXPECT_EQ(p.plan.ranks.nodes, p.system.gpus());
  expectSocketBound(p, 22.0, "UPI");
}

TEST(Rings, IbmMinskyBoundByXBus) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  Planned p = rings("ibm-power8-minsky-p100x4-nvlink.hwloc.xml", 4);
  expectSocketBound(p, 32.0, "X-Bus");
  for (const Ring& r : p.plan.rings)
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kNvl), 2) << r.why;
}

// p5 lists no GPU (its comment says they are left out): CPU ranks, four per NUMA node, crossing
// the AMD socket link (the file gives no CPU family: NCCL's AMD default, 16 GB/s) once each way.
TEST(Rings, AwsP5WithoutGpusPlansCpuRanks) {
  Planned p = rings("aws-p5.48xlarge-h100x8-efa32.nccl.xml", 8);
  ASSERT_TRUE(p.plan.ranks.cpu);
  EXPECT_EQ(p.plan.ranks.numaOfRank, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  expectCoverage(p.plan);
  EXPECT_DOUBLE_EQ(p.plan.best, 16.0);
  for (const Ring& r : p.plan.rings) {
    EXPECT_EQ(r.order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_DOUBLE_EQ(r.bottleneck, 16.0);
    EXPECT_NE(r.bottleneckLink.find("CPU0 <-> CPU1 Infinity Fabric"), std::string::npos)
        << r.bottleneckLink;
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kSys), 2) << r.why;
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kLoc), 6) << r.why;
  }
  EXPECT_NEAR(total(p.plan), 16.0, 1e-6);  // the channels share the link
}

TEST(Rings, FewerRanksThanGpus) {
  Planned p = rings("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml", 3);
  expectCoverage(p.plan);
  EXPECT_EQ(p.plan.ranks.nodes.size(), 3u);
  Planned one = rings("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml", 1);
  expectCoverage(one.plan);
}

// More ranks per host than GPUs: one rank per GPU (as NCCL runs), all of the GPUs, with a note
// saying so; not a silent switch to CPU ranks.
TEST(Rings, MoreRanksThanGpusUseEachGpuOnce) {
  struct Case {
    const char* file;
    int gpus;
  };
  for (Case c : {Case{"azure-ncv4-a100x4-pcie.nccl.xml", 4},
                 Case{"ibm-power8-minsky-p100x4-nvlink.hwloc.xml", 4},
                 Case{"hp-sl390s-g7-2s-m2070x3-qdr.hwloc.xml", 3}}) {
    SCOPED_TRACE(c.file);
    if (std::string(c.file).find(".hwloc.") != std::string::npos && !hwlocAvailable()) continue;
    Planned p = rings(c.file, 8);
    expectCoverage(p.plan);
    EXPECT_FALSE(p.plan.ranks.cpu);
    EXPECT_EQ(p.plan.ranks.nodes, p.system.gpus());
    EXPECT_EQ(p.plan.ranks.asked, 8);
    std::string note = p.plan.ranks.note;
    EXPECT_NE(note.find(std::to_string(c.gpus) + " GPU rank(s)"), std::string::npos) << note;
    EXPECT_NE(note.find("8 ranks per host asked for"), std::string::npos) << note;
    EXPECT_NE(note.find("one rank per GPU"), std::string::npos) << note;
  }
  // Minsky: the GPU pairs are NVLinked, so two of the four hops are NVLink.
  if (hwlocAvailable()) {
    Planned minsky = rings("ibm-power8-minsky-p100x4-nvlink.hwloc.xml", 8);
    for (const Ring& r : minsky.plan.rings)
      EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kNvl), 2) << r.why;
  }
  // CPU ranks when asked for.
  Planned cpu = rings("azure-ncv4-a100x4-pcie.nccl.xml", 8, 1, RankDevice::kCpu);
  EXPECT_TRUE(cpu.plan.ranks.cpu);
  EXPECT_EQ(cpu.plan.ranks.nodes.size(), 8u);
}

TEST(Rings, AcrossHostsEachRingUsesTheNicNextToItsEnds) {
  for (const char* file :
       {"alibaba-hgx-a100x8-cx6bond200x4.nccl.xml", "nvidia-dgx1-v100-4xedr.nvsmi.txt",
        "azure-ndv5-h100x8-ndr400x8.nccl.xml"}) {
    SCOPED_TRACE(file);
    Planned p = rings(file, 8, 4);
    expectCoverage(p.plan);
    Paths paths(p.system);
    std::vector<int> nicOf = assignNics(p.system, paths, p.plan.ranks.nodes);
    std::set<int> in, out;
    for (const Ring& r : p.plan.rings) {
      EXPECT_EQ(r.nicIn, nicOf[r.order.front()]);
      EXPECT_EQ(r.nicOut, nicOf[r.order.back()]);
      EXPECT_EQ(r.hops.back(), PathClass::kNet);
      in.insert(r.nicIn);
      out.insert(r.nicOut);
    }
    // Every NIC some GPU is closest to carries a ring in, and one out.
    std::set<int> wanted(nicOf.begin(), nicOf.end());
    EXPECT_EQ(in, wanted);
    EXPECT_EQ(out, wanted);
  }
}

// Files with a NIC beside every GPU or GPU pair: the rings enter and leave each host by the NIC
// closest to the GPU at that end, and with at least as many channels as NICs every NIC takes a
// ring in and a ring out (the exits once all went by one or two NICs).
TEST(Rings, AcrossHostsRingsEnterAndLeaveByEveryNic) {
  for (const char* file :
       {"azure-ndv5-h100x8-ndr400x8.nccl.xml", "azure-ndv4-a100x8-hdr200x8.nccl.xml",
        "aws-p4d.24xlarge-a100x8-efa4.nccl.xml"}) {
    for (int hosts : {2, 4}) {
      SCOPED_TRACE(std::string(file) + " hosts " + std::to_string(hosts));
      Planned p = rings(file, 8, hosts);
      expectCoverage(p.plan);
      Paths paths(p.system);
      std::vector<int> nics = p.system.nics();
      ASSERT_GE(p.plan.rings.size(), nics.size());
      std::map<int, int> in, out;
      for (const Ring& r : p.plan.rings) {
        ++in[r.nicIn];
        ++out[r.nicOut];
        std::vector<int> first = closestNics(p.system, paths, p.plan.ranks.nodes[r.order.front()]);
        std::vector<int> last = closestNics(p.system, paths, p.plan.ranks.nodes[r.order.back()]);
        EXPECT_NE(std::find(first.begin(), first.end(), r.nicIn), first.end());
        EXPECT_NE(std::find(last.begin(), last.end(), r.nicOut), last.end());
      }
      for (int nic : nics) {
        EXPECT_GE(in[nic], 1) << p.system.nodes[nic].name << " takes no ring in";
        EXPECT_GE(out[nic], 1) << p.system.nodes[nic].name << " sends no ring out";
      }
      // Spread evenly: no NIC carries two rings more than another, either way.
      auto spread = [](const std::map<int, int>& m) {
        auto [lo, hi] = std::minmax_element(m.begin(), m.end(),
                                            [](auto& a, auto& b) { return a.second < b.second; });
        return hi->second - lo->second;
      };
      EXPECT_LE(spread(in), 1);
      EXPECT_LE(spread(out), 1);
    }
  }
  // ndv5: one NIC per GPU, so each ring leaves by the NIC of its last GPU, across the socket
  // from where it entered (one crossing per host).
  Planned p = rings("azure-ndv5-h100x8-ndr400x8.nccl.xml", 8, 2);
  for (const Ring& r : p.plan.rings) {
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kSys), 1) << r.why;
    EXPECT_NE(p.system.cpuOf(r.nicIn), p.system.cpuOf(r.nicOut)) << r.why;
  }
}

// ndv4 across hosts, by hand: every channel enters and leaves each GPU once, and each GPU hangs on
// one 16 GT/s x16 link (Gen4, 24 GB/s each way), so the channels together carry at most 24 GB/s,
// whatever order they visit the switches in (the four 24 GB/s switch uplinks alone would allow
// 32: a chain through the four switches uses six of their eight directions). The search reaches
// that bound.
TEST(Rings, Ndv4AcrossHostsReachesTheGpuLinkBound) {
  Planned p = rings("azure-ndv4-a100x8-hdr200x8.nccl.xml", 8, 2);
  expectCoverage(p.plan);
  EXPECT_NEAR(total(p.plan), 24.0, 1e-6);
  for (int g : p.system.gpus())
    EXPECT_DOUBLE_EQ(p.system.links[p.system.nodes[g].links.front()].bw, 24.0);
}

TEST(Rings, CpuRanksGroupBySocket) {
  Planned p = rings("azure-ndv4-a100x8-hdr200x8.nccl.xml", 8, 1, RankDevice::kCpu);
  expectCoverage(p.plan);
  EXPECT_TRUE(p.plan.ranks.cpu);
  for (const Ring& r : p.plan.rings) {
    // Ranks in blocks of two per NUMA node: 4 crossings, 4 local hops.
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kSys), 4);
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kLoc), 4);
  }
  Planned none = rings("aws-g5.48xlarge-a10gx8-pcie.nccl.xml", 8);  // no GPU known: CPU ranks
  EXPECT_TRUE(none.plan.ranks.cpu);
  expectCoverage(none.plan);
}

// CPU ranks across hosts: each channel starts one rank further into each NUMA node's block, so
// the channels enter and leave by different NICs: the usNICs, which NUMA nodes prefer.
TEST(Rings, CpuRanksAcrossHostsSpreadOverNics) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  Planned p = rings("cisco-ucs-2s-cpuonly-usnic.hwloc.xml", 8, 2);
  expectCoverage(p.plan);
  ASSERT_EQ(p.plan.rings.size(), 2u);
  std::set<std::string> in, out;
  for (const Ring& r : p.plan.rings) {
    in.insert(p.system.nodes[r.nicIn].name);
    out.insert(p.system.nodes[r.nicOut].name);
    EXPECT_EQ(std::count(r.hops.begin(), r.hops.end(), PathClass::kSys), 1) << r.why;
    // Both leave by usnic_2, so they share its port.
    EXPECT_DOUBLE_EQ(r.bw * 2, r.bottleneck);
  }
  EXPECT_EQ(in, (std::set<std::string>{"usnic_0", "usnic_1"}));
  EXPECT_EQ(out, (std::set<std::string>{"usnic_2"}));
}

// The explanation names what the hops go through, and never counts "0 of N" of anything.
TEST(Rings, WhySaysWhatTheHopsGoThrough) {
  Planned ndv5 = rings("azure-ndv5-h100x8-ndr400x8.nccl.xml", 8);
  EXPECT_NE(ndv5.plan.rings[0].why.find("no two neighbours share a PCIe switch"), std::string::npos)
      << ndv5.plan.rings[0].why;
  Planned ncv4 = rings("azure-ncv4-a100x4-pcie.nccl.xml", 4);
  EXPECT_NE(ncv4.plan.rings[0].why.find("no PCIe switch in this system"), std::string::npos)
      << ncv4.plan.rings[0].why;
  Planned p4d = rings("aws-p4d.24xlarge-a100x8-efa4.nccl.xml", 8);
  EXPECT_NE(p4d.plan.rings[0].why.find("4 of 8 hops stay below a PCIe switch"), std::string::npos)
      << p4d.plan.rings[0].why;
  for (const std::string& f : test::dataFiles()) {
    if (f.find(".hwloc.") != std::string::npos && !hwlocAvailable()) continue;
    for (int hosts : {1, 2}) {
      System s = test::load(f);
      if (hosts > 1 && s.nics().empty()) continue;
      Planned p = rings(f, 8, hosts);
      for (const Ring& r : p.plan.rings)
        EXPECT_EQ(r.why.find(" 0 of "), std::string::npos) << f << ": " << r.why;
    }
  }
}

TEST(Rings, RefusesWhatCannotBePlanned) {
  System s = test::load("aws-g5.48xlarge-a10gx8-pcie.nccl.xml");
  RankSet set;
  EXPECT_FALSE(chooseRanks(s, 2, RankDevice::kGpu, &set).ok());
  EXPECT_FALSE(chooseRanks(s, 0, RankDevice::kAuto, &set).ok());
  ASSERT_TRUE(chooseRanks(s, 2, RankDevice::kCpu, &set).ok());
  Paths paths(s);
  RingPlan plan;
  Status st = searchRings(s, paths, set, 2, ChannelOptions(), &plan);  // no NIC to leave by
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("need a NIC"), std::string::npos);
}

TEST(Trees, DoubleBinaryTreeMakesEveryHostALeafOnce) {
  for (int hosts : {2, 3, 4, 5, 8, 13, 16}) {
    SCOPED_TRACE(hosts);
    std::vector<HostTree> trees = doubleBinaryTree(hosts);
    ASSERT_EQ(trees.size(), 2u);
    std::vector<int> leafIn(hosts, 0);
    for (const HostTree& t : trees) {
      int roots = 0;
      for (int h = 0; h < hosts; ++h) {
        roots += t.parent[h] < 0;
        EXPECT_LE(t.children[h].size(), 2u);
        if (t.children[h].empty()) ++leafIn[h];
        // Every host reaches the root.
        int x = h, steps = 0;
        while (t.parent[x] >= 0 && steps++ < hosts)
          x = t.parent[x];
        EXPECT_EQ(x, t.root);
      }
      EXPECT_EQ(roots, 1);
    }
    int neverLeaf = 0;
    for (int h = 0; h < hosts; ++h)
      neverLeaf += leafIn[h] == 0;
    EXPECT_EQ(neverLeaf, 0);
  }
  EXPECT_EQ(doubleBinaryTree(1).size(), 1u);
}

TEST(Trees, ChainsStartNextToTheNic) {
  System s = test::load("nvidia-dgx1-v100-4xedr.nvsmi.txt");
  Paths paths(s);
  RankSet set;
  ASSERT_TRUE(chooseRanks(s, 8, RankDevice::kAuto, &set).ok());
  TreePlan plan;
  ASSERT_TRUE(searchTrees(s, paths, set, 4, ChannelOptions(), &plan).ok());
  ASSERT_EQ(plan.trees.size(), 2u);
  EXPECT_NE(plan.trees[0].nic, plan.trees[1].nic);
  for (const Tree& t : plan.trees) {
    EXPECT_EQ(t.chain.size(), 8u);
    EXPECT_EQ(std::set<int>(t.chain.begin(), t.chain.end()).size(), 8u);
    EXPECT_EQ(pcieClass(s, set.nodes[t.chain.front()], t.nic), PathClass::kPix);
    for (size_t i = 0; i + 1 < t.chain.size(); ++i) {
      EXPECT_GT(nvlinkCount(s, set.nodes[t.chain[i]], set.nodes[t.chain[i + 1]]), 0);
    }
  }
}

TEST(CpuRanks, NeighboursShareNumaNodeAndSocket) {
  System s = test::load("azure-ndv4-a100x8-hdr200x8.nccl.xml");
  std::vector<int> numa = {3, 0, 1, 0, 2, 3, 1, -1, 2};
  std::vector<int> order = orderCpuRanks(s, numa);
  EXPECT_EQ(order, (std::vector<int>{1, 3, 2, 6, 4, 8, 0, 5, 7}));
  // With packages known, a socket's NUMA nodes stay together.
  for (int c : s.nodesOf(NodeKind::kCpu))
    s.nodes[c].cpu.packageId = s.nodes[c].cpu.numaId % 2;
  order = orderCpuRanks(s, {0, 1, 2, 3});
  EXPECT_EQ(order, (std::vector<int>{0, 2, 1, 3}));
  RankLocality l = localityOfNuma(s, 3);
  EXPECT_EQ(l.numaNode, 3);
  EXPECT_EQ(l.package, 1);
}

}  // namespace
}  // namespace weft::topo
