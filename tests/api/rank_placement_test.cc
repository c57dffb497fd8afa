// Rank placement from each host's topology: ring order, host groups, the NIC per rank and the
// price of links between hosts.
#include "src/comm/rank_placement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/cpu_ranks.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/load.h"
#include "topology/ranks.h"
#include "topology/ring_search.h"

namespace weft {
namespace {

RankInfo rankAt(uint64_t host, int numa, int package = -1) {
  RankInfo r;
  r.hostHash = host;
  topo::RankLocality l;
  l.numaNode = static_cast<int16_t>(numa);
  l.package = static_cast<int16_t>(package);
  r.locality = topo::packLocality(l);
  return r;
}

TEST(RankPlacement, HostsTogetherInOrderOfTheirFirstRank) {
  // Host 7 holds ranks 0, 2, 4; host 3 holds 1, 3.
  std::vector<RankInfo> ranks = {rankAt(7, 0), rankAt(3, 0), rankAt(7, 0), rankAt(3, 0),
                                 rankAt(7, 0)};
  RankPlacement p = placeRanks(ranks);
  EXPECT_EQ(p.ringOrder, (std::vector<int>{0, 2, 4, 1, 3}));
  ASSERT_EQ(p.hostGroups.hosts.size(), 2u);
  EXPECT_EQ(p.hostGroups.hosts[0], (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(p.hostGroups.hosts[1], (std::vector<int>{1, 3}));
}

TEST(RankPlacement, InsideAHostBySocketThenNumaNode) {
  // One host: ranks on (package, NUMA) = (1,3) (0,1) (1,2) (0,0) (unknown) (0,1).
  std::vector<RankInfo> ranks = {rankAt(5, 3, 1), rankAt(5, 1, 0), rankAt(5, 2, 1),
                                 rankAt(5, 0, 0), rankAt(5, -1),   rankAt(5, 1, 0)};
  RankPlacement p = placeRanks(ranks);
  EXPECT_EQ(p.ringOrder, (std::vector<int>{3, 1, 5, 2, 0, 4}));
  ASSERT_EQ(p.hostGroups.hosts.size(), 1u);
  EXPECT_EQ(p.hostGroups.hosts[0], p.ringOrder);  // the leader is the first in ring order
}

TEST(RankPlacement, UnknownPackagesGroupByNumaAfterKnownOnes) {
  std::vector<RankInfo> ranks = {rankAt(1, 4), rankAt(1, 2), rankAt(1, 4), rankAt(1, 0, 0)};
  EXPECT_EQ(placeRanks(ranks).ringOrder, (std::vector<int>{3, 1, 0, 2}));
}

topo::System twoNumaHost() {
  topo::System s;
  Status st = topo::loadTopologyFile(WEFT_API_DATA "/two-numa-1gbe.nccl.xml", &s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

// The communicator orders a host's CPU ranks as ring 0 of the search (weft-topo --rings N
// --device cpu) does, given the same NUMA node per rank: ranks in blocks as weft-topo places them,
// and interleaved as processes bound round-robin would be. Cisco: NUMA 0 and 1 on packages 0 and
// 1 (hwloc); ndv4: NUMA 0..3, no packages (NCCL XML).
TEST(RankPlacement, SameOrderAsTheRingSearch) {
  struct Case {
    const char* file;
    std::vector<int> interleaved;  // NUMA node per rank
    std::vector<int> expected;     // by hand: grouped by package, then NUMA node, then rank
  };
  std::vector<Case> cases = {
      {"azure-ndv4-a100x8-hdr200x8.nccl.xml", {3, 0, 1, 0, 2, 3, 1, 2}, {1, 3, 2, 6, 4, 7, 0, 5}}};
  if (topo::hwlocAvailable()) {
    cases.push_back({"cisco-ucs-2s-cpuonly-usnic.hwloc.xml", {1, 0, 1, 0}, {1, 3, 0, 2}});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    topo::System s;
    Status st = topo::loadTopologyFile(std::string(WEFT_TOPOLOGY_DATA "/") + c.file, &s);
    ASSERT_TRUE(st.ok()) << st.message();
    topo::Paths paths(s);
    auto compare = [&](const topo::RankSet& set) {
      topo::RingPlan plan;
      Status searched = topo::searchRings(s, paths, set, 1, topo::ChannelOptions(), &plan);
      EXPECT_TRUE(searched.ok()) << searched.message();
      std::vector<RankInfo> ranks;
      for (int numa : set.numaOfRank) {
        RankInfo r;
        r.hostHash = 42;
        r.locality = topo::packLocality(topo::localityOfNuma(s, numa));  // as localLocality
        ranks.push_back(r);
      }
      std::vector<int> placed = placeRanks(ranks).ringOrder;
      EXPECT_FALSE(plan.rings.empty());
      if (!plan.rings.empty()) {
        EXPECT_EQ(placed, plan.rings[0].order);
      }
      return placed;
    };
    for (int n : {2, 3, 5, 8}) {
      topo::RankSet blocks;
      ASSERT_TRUE(topo::chooseRanks(s, n, topo::RankDevice::kCpu, &blocks).ok());
      compare(blocks);
    }
    topo::RankSet interleaved;
    interleaved.cpu = true;
    interleaved.numaOfRank = c.interleaved;
    for (int numa : c.interleaved)
      interleaved.nodes.push_back(s.findCpu(numa));
    EXPECT_EQ(compare(interleaved), c.expected);
  }
}

TEST(RankPlacement, EachRankTakesTheNicOfItsNumaNode) {
  topo::System s = twoNumaHost();
  // Ranks 0 and 2 on NUMA node 1 of host 9, rank 1 on node 0; rank 3 on another host.
  std::vector<RankInfo> ranks = {rankAt(9, 1), rankAt(9, 0), rankAt(9, 1), rankAt(4, 0)};
  EXPECT_EQ(rankNic(s, ranks, 0).interface, "eth3");
  EXPECT_EQ(rankNic(s, ranks, 1).interface, "eth2");
  EXPECT_EQ(rankNic(s, ranks, 2).interface, "eth3");
  EXPECT_EQ(rankNic(s, ranks, 3).interface, "eth2");
  EXPECT_DOUBLE_EQ(rankNic(s, ranks, 0).bandwidthGBps, 0.125);  // 1 Gb/s
}

TEST(RankPlacement, NoNicNoChoice) {
  topo::System s;
  Status st = topo::parseTopologyText(
      "<system version=\"1\"><cpu numaid=\"0\" affinity=\"3\"/></system>", "inline", &s);
  ASSERT_TRUE(st.ok()) << st.message();
  topo::NicChoice c = rankNic(s, {rankAt(1, 0)}, 0);
  EXPECT_EQ(c.nic, -1);
  EXPECT_TRUE(c.interface.empty());
}

TEST(RankPlacement, LinksBetweenHostsNoFasterThanTheSlowestNic) {
  LinkModel tcp{20.0, 2.0, 10.0};
  EXPECT_DOUBLE_EQ(capByNics(tcp, {50.0, 0.125, 0.0}).bandwidthGBps, 0.125);
  EXPECT_DOUBLE_EQ(capByNics(tcp, {50.0, 12.5}).bandwidthGBps, 2.0);
  EXPECT_DOUBLE_EQ(capByNics(tcp, {0.0, -1.0}).bandwidthGBps, 2.0);  // unknown: unchanged
  EXPECT_DOUBLE_EQ(capByNics(tcp, {0.125}).latencyUs, 20.0);
}

TEST(RankPlacement, ListensOnTheNicInterfaceWhereItExists) {
  SockAddr current;
  ASSERT_TRUE(SockAddr::parse("10.9.8.7:0", &current).ok());
  topo::NicChoice lo;
  lo.interface = "lo";
  EXPECT_TRUE(nicListenAddress(lo, current).isLoopback());
  topo::NicChoice absent;
  absent.interface = "weftnone9";
  EXPECT_EQ(nicListenAddress(absent, current).toString(), current.toString());
  EXPECT_EQ(nicListenAddress(topo::NicChoice(), current).toString(), current.toString());
}

}  // namespace
}  // namespace weft
