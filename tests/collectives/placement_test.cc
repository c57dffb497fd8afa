// Placed and tiered schedules through the simulator: every algorithm with ranks in a shuffled
// order, and all-reduce and broadcast in tiers over uneven hosts, against the same reference as
// the plain algorithms.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "collectives/placement.h"
#include "tests/collectives/harness.h"

namespace weft::test {
namespace {

std::vector<int> shuffled(int n, unsigned seed) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

TEST(Placement, EveryAlgorithmWithShuffledRanks) {
  const CollKind kinds[] = {CollKind::kAllReduce, CollKind::kBroadcast,     CollKind::kReduce,
                            CollKind::kAllGather, CollKind::kReduceScatter, CollKind::kAllToAll};
  const Algo algos[] = {Algo::kRing, Algo::kTree, Algo::kRecursiveDoubling, Algo::kPairwise};
  int cases = 0;
  for (int n : {2, 3, 5, 8, 13}) {
    for (CollKind kind : kinds) {
      for (Algo algo : algos) {
        if (!algoSupports(algo, kind)) continue;
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{61}}) {
          for (bool inPlace : {false, true}) {
            if (inPlace && !supportsInPlace(kind)) continue;
            const std::vector<int> order = shuffled(n, static_cast<unsigned>(n * 31 + count));
            Case c;
            c.algo = algo;
            c.kind = kind;
            c.nranks = n;
            c.count = count;
            c.root = n - 1;
            c.inPlace = inPlace;
            c.chunk = 5;
            c.build = [&](const CollArgs& a, const AlgoParams& p, Schedule* s) {
              return buildPlacedSchedule(algo, a, p, order, s);
            };
            ASSERT_TRUE(runCase(c)) << describe(c);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 300);
}

// Hosts of uneven sizes, each a slice of a shuffled order.
HostGroups groupsOf(const std::vector<int>& sizes, unsigned seed) {
  int n = std::accumulate(sizes.begin(), sizes.end(), 0);
  std::vector<int> order = shuffled(n, seed);
  HostGroups g;
  size_t at = 0;
  for (int s : sizes) {
    g.hosts.emplace_back(order.begin() + static_cast<long>(at),
                         order.begin() + static_cast<long>(at + s));
    at += static_cast<size_t>(s);
  }
  return g;
}

TEST(Tiers, AllReduceAndBroadcastOverUnevenHosts) {
  const std::vector<std::vector<int>> layouts = {{1, 1}, {2, 2}, {3, 1, 2}, {4, 4}, {1, 5, 2, 3}};
  const TierAlgos algoChoices[] = {{Algo::kTree, Algo::kRing, Algo::kTree},
                                   {Algo::kRing, Algo::kRecursiveDoubling, Algo::kRing},
                                   {Algo::kRing, Algo::kTree, Algo::kTree}};
  int cases = 0;
  for (size_t l = 0; l < layouts.size(); ++l) {
    const HostGroups groups = groupsOf(layouts[l], static_cast<unsigned>(l + 7));
    const int n = std::accumulate(layouts[l].begin(), layouts[l].end(), 0);
    for (const TierAlgos& algos : algoChoices) {
      for (CollKind kind : {CollKind::kAllReduce, CollKind::kBroadcast}) {
        for (size_t count : {size_t{1}, size_t{9}, size_t{100}}) {
          for (bool inPlace : {false, true}) {
            for (int root : {0, n - 1}) {
              Case c;
              c.kind = kind;
              c.nranks = n;
              c.count = count;
              c.root = kind == CollKind::kBroadcast ? root : 0;
              c.inPlace = inPlace;
              c.chunk = 4;
              c.linkCapacity = (count % 2 == 0) ? 64 : 4096;
              c.build = [&](const CollArgs& a, const AlgoParams& p, Schedule* s) {
                return buildTieredSchedule(a, p, groups, algos, s);
              };
              ASSERT_TRUE(runCase(c)) << describe(c) << " layout " << l;
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 300);
}

TEST(Tiers, RejectsWhatItCannotDo) {
  HostGroups one{{{0, 1}}};
  CollArgs a;
  a.kind = CollKind::kAllReduce;
  a.nranks = 2;
  a.count = 4;
  Schedule s;
  EXPECT_FALSE(buildTieredSchedule(a, AlgoParams{}, one, TierAlgos{}, &s).ok());
  HostGroups two{{{0}, {1}}};
  a.kind = CollKind::kAllGather;
  EXPECT_FALSE(buildTieredSchedule(a, AlgoParams{}, two, TierAlgos{}, &s).ok());
}

}  // namespace
}  // namespace weft::test
