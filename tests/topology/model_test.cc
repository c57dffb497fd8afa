// The building blocks of the model: bus ids, CPU sets, bandwidths, path class names, the graph.
#include <gtest/gtest.h>

#include "topology/bandwidth.h"
#include "topology/busid.h"
#include "topology/cpu_ranks.h"
#include "topology/cpuset.h"
#include "topology/system.h"
#include "topology/types.h"

namespace weft::topo {
namespace {

TEST(BusId, Normalizes) {
  EXPECT_EQ(normalizeBusId("0000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(normalizeBusId("1a:00.1"), "0000:1a:00.1");
  EXPECT_EQ(normalizeBusId("00000000:07:00.0"), "0000:07:00.0");  // NVML's spelling
  EXPECT_EQ(normalizeBusId("ffff:ff:01.0"), "ffff:ff:01.0");
  EXPECT_FALSE(normalizeBusId(""));
  EXPECT_FALSE(normalizeBusId("0000:1a:00"));
  EXPECT_FALSE(normalizeBusId("0000:1a:20.0"));   // device > 0x1f
  EXPECT_FALSE(normalizeBusId("0000:1a:00.8"));   // function > 7
  EXPECT_FALSE(normalizeBusId("10000:1a:00.0"));  // domain > 0xffff
  EXPECT_FALSE(normalizeBusId("0000:1g:00.0"));
  EXPECT_FALSE(normalizeBusId("0000:1a:00.0x"));
}

TEST(CpuSet, ParsesTheThreeSpellings) {
  auto nccl = CpuSet::parseHexWords("00000000,000fffff");
  ASSERT_TRUE(nccl);
  EXPECT_EQ(nccl->toList(), "0-19");
  auto wide = CpuSet::parseHexWords("00000000,ffffffff,00000000,ffffffff");
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->toList(), "0-31,64-95");
  auto hw = CpuSet::parseHwloc("0x00000303,0x03030000,,0x03030303");
  ASSERT_TRUE(hw);
  EXPECT_EQ(hw->count(), 16);
  EXPECT_TRUE(hw->contains(0) && hw->contains(25) && hw->contains(104) && hw->contains(105));
  EXPECT_FALSE(hw->contains(2));
  auto list = CpuSet::parseList("0-19,40-59");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->count(), 40);
  EXPECT_EQ(list->toList(), "0-19,40-59");
  EXPECT_EQ(CpuSet::parseList("3")->toList(), "3");
  EXPECT_FALSE(CpuSet::parseList("5-2"));
  EXPECT_FALSE(CpuSet::parseList("a"));
  EXPECT_FALSE(CpuSet::parseList("1,,2"));
  EXPECT_FALSE(CpuSet::parseHexWords("xyz"));
  EXPECT_FALSE(CpuSet::parseHexWords("123456789"));  // a word has 8 digits at most
  EXPECT_FALSE(CpuSet::parseList("0-99999999"));     // absurd CPU numbers
}

TEST(CpuSet, HexWordsRoundTrip) {
  auto set = CpuSet::parseList("0-23,96-119");
  ASSERT_TRUE(set);
  auto back = CpuSet::parseHexWords(set->toHexWords());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, *set);
  EXPECT_EQ(CpuSet::parseList("0-3")->toHexWords(), "0000000f");
}

TEST(Bandwidth, PcieFollowsNccl) {
  EXPECT_DOUBLE_EQ(pcieBw(pcieRateGts("8 GT/s"), 16), 12.0);
  EXPECT_DOUBLE_EQ(pcieBw(pcieRateGts("16 GT/s"), 16), 24.0);
  EXPECT_DOUBLE_EQ(pcieBw(pcieRateGts("32.0 GT/s PCIe"), 16), 48.0);
  EXPECT_DOUBLE_EQ(pcieBw(pcieRateGts("32 GT/s PCIe/s"), 16), 48.0);
  EXPECT_DOUBLE_EQ(pcieBw(pcieRateGts(""), 0), kDefaultPcieBw);  // unknown: Gen3 x16
  EXPECT_DOUBLE_EQ(pcieBw(pcieRateGts("2.5 GT/s"), 1), 15.0 / 80);
  EXPECT_EQ(pcieGeneration(pcieRateGts("16.0 GT/s PCIe")), 4);
  EXPECT_EQ(pcieGeneration(0), 0);
}

TEST(Bandwidth, PcieFromHwlocPrefersWideSlots) {
  double rate = 0;
  int width = 0;
  ASSERT_TRUE(pcieLinkFromHwloc(15.753846, &rate, &width));
  EXPECT_EQ(pcieGeneration(rate), 3);
  EXPECT_EQ(width, 16);
  ASSERT_TRUE(pcieLinkFromHwloc(7.876923, &rate, &width));
  EXPECT_EQ(width, 8);
  EXPECT_DOUBLE_EQ(pcieBw(rate, width), 6.0);
  EXPECT_FALSE(pcieLinkFromHwloc(0, &rate, &width));
}

TEST(Bandwidth, NvlinkAndCpus) {
  EXPECT_DOUBLE_EQ(nvlinkBwPerLink(80), 20.0);
  EXPECT_DOUBLE_EQ(nvlinkBwPerLink(60), 18.0);
  EXPECT_DOUBLE_EQ(nvlinkBwPerLink(90), 20.6);
  EXPECT_DOUBLE_EQ(nvlinkBwPerLink(0), kDefaultNvlinkBw);
  EXPECT_EQ(nvlinkGeneration(70), 2);
  EXPECT_EQ(nvlinkGeneration(86), 3);
  CpuInfo skx;
  skx.arch = "x86_64";
  skx.vendor = "GenuineIntel";
  skx.familyId = 6;
  skx.modelId = 85;
  EXPECT_DOUBLE_EQ(interCpuBw(skx), 10.0);
  skx.modelId = 143;  // Sapphire Rapids
  EXPECT_DOUBLE_EQ(interCpuBw(skx), 22.0);
  CpuInfo rome;
  rome.arch = "x86_64";
  rome.vendor = "AuthenticAMD";
  rome.familyId = 23;
  EXPECT_DOUBLE_EQ(interCpuBw(rome), 16.0);
  rome.familyId = 175;  // NCCL's encoding of Zen 3
  EXPECT_DOUBLE_EQ(interCpuBw(rome), 24.0);
  CpuInfo power;
  power.arch = "ppc64";
  EXPECT_DOUBLE_EQ(interCpuBw(power), 32.0);
  EXPECT_DOUBLE_EQ(interCpuBw(CpuInfo()), kDefaultInterCpuBw);
  EXPECT_DOUBLE_EQ(netBw(200000), 25.0);
  EXPECT_DOUBLE_EQ(netBw(-1), 1.25);
  EXPECT_EQ(formatBandwidth(240), "240.0 GB/s");
  EXPECT_EQ(formatBandwidth(1.25), "1.25 GB/s");
  EXPECT_EQ(formatBandwidth(kLocalBw), "local");
}

TEST(PathClass, NamesRoundTrip) {
  for (PathClass c :
       {PathClass::kLoc, PathClass::kNvl, PathClass::kNvb, PathClass::kPix, PathClass::kPxb,
        PathClass::kPhb, PathClass::kNode, PathClass::kSys, PathClass::kNet}) {
    PathClass back;
    ASSERT_TRUE(parsePathClass(toString(c), &back));
    EXPECT_EQ(back, c);
  }
  PathClass soc;
  ASSERT_TRUE(parsePathClass("SOC", &soc));
  EXPECT_EQ(soc, PathClass::kSys);
  EXPECT_FALSE(parsePathClass("FOO", &soc));
  EXPECT_EQ(worse(PathClass::kPix, PathClass::kSys), PathClass::kSys);
  EXPECT_EQ(worse(PathClass::kNvl, PathClass::kNvb), PathClass::kNvb);
}

TEST(System, BondsNvlinksAndJoinsCpus) {
  System s;
  Node cpu;
  cpu.kind = NodeKind::kCpu;
  cpu.cpu.numaId = 0;
  int c0 = s.addNode(cpu);
  cpu.cpu.numaId = 1;
  int c1 = s.addNode(cpu);
  Node gpu;
  gpu.kind = NodeKind::kGpu;
  gpu.pci.busId = "0000:02:00.0";
  int g0 = s.addNode(gpu);
  gpu.pci.busId = "0000:01:00.0";
  int g1 = s.addNode(gpu);
  s.attach(g0, c0, LinkKind::kPcie, 12);
  s.attach(g1, c1, LinkKind::kPcie, 12);
  s.addNvlinks(g0, g1, 2, 3, 40);
  s.addNvlinks(g1, g0, 1, 3, 20);
  s.finalize();
  int nv = s.linkBetween(g0, g1, LinkKind::kNvlink);
  ASSERT_GE(nv, 0);
  EXPECT_EQ(s.links[nv].nvlinks, 3);
  EXPECT_DOUBLE_EQ(s.links[nv].bw, 60);
  EXPECT_GE(s.linkBetween(c0, c1, LinkKind::kCpuInterconnect), 0);
  // GPUs without dev indices are numbered by bus id.
  EXPECT_EQ(s.nodes[g1].name, "GPU0");
  EXPECT_EQ(s.nodes[g0].name, "GPU1");
  EXPECT_EQ(s.cpuOf(g1), c1);
  EXPECT_EQ(s.findBusId("0000:02:00.0"), g0);
  s.finalize();  // idempotent
  EXPECT_EQ(s.count(NodeKind::kGpu), 2);
  EXPECT_EQ(s.links.size(), 4u);
}

TEST(RankLocality, PacksIntoFourBytes) {
  RankLocality l;
  l.numaNode = 3;
  l.package = 1;
  EXPECT_EQ(unpackLocality(packLocality(l)), l);
  RankLocality unknown;
  EXPECT_EQ(unpackLocality(packLocality(unknown)), unknown);
  EXPECT_EQ(unpackLocality(packLocality(unknown)).numaNode, -1);
  static_assert(sizeof(packLocality(l)) == 4);
}

}  // namespace
}  // namespace weft::topo
