// The cost model's choices, its replay of schedules, and WEFT_ALGO parsing.
#include "collectives/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collectives/algo_override.h"
#include "collectives/algorithms.h"

namespace weft {
namespace {

const LinkModel kShm{1.0, 8.0, 20.0};
const LinkModel kTcp{15.0, 2.0, 10.0};
constexpr size_t kMiB = size_t{1} << 20;

AlgoOverride parsed(const std::string& text) {
  AlgoOverride o;
  Status st = AlgoOverride::parse(text, &o);
  EXPECT_TRUE(st.ok()) << text << ": " << st.message();
  return o;
}

TEST(CostModelReplay, OneMessageCostsLatencyPlusBytesOverBandwidth) {
  std::vector<Schedule> s(2);
  s[0].send(1, {kSendBuf, 0}, 250'000);
  s[1].recv(0, {kRecvBuf, 0}, 250'000);
  // 1e6 bytes at 1 GB/s is 1000 us, plus 10 us of latency.
  EXPECT_NEAR(replayUs(s, 4, {10.0, 1.0, 1.0}), 1010.0, 1e-6);
}

TEST(CostModelReplay, DependentMessagesAddUpAndIndependentOnesOverlap) {
  const LinkModel link{10.0, 1.0, 1.0};
  // 0 -> 1 -> 2: the forward waits for the receive.
  std::vector<Schedule> chain(3);
  chain[0].send(1, {kSendBuf, 0}, 1000);
  chain[1].recv(0, {kRecvBuf, 0}, 1000);
  chain[1].send(2, {kRecvBuf, 0}, 1000);
  chain[2].recv(1, {kRecvBuf, 0}, 1000);
  EXPECT_NEAR(replayUs(chain, 1, link), 2 * (10.0 + 1.0), 1e-6);
  // 0 -> 1 and 2 -> 3 at once.
  std::vector<Schedule> pairs(4);
  pairs[0].send(1, {kSendBuf, 0}, 1000);
  pairs[1].recv(0, {kRecvBuf, 0}, 1000);
  pairs[2].send(3, {kSendBuf, 0}, 1000);
  pairs[3].recv(2, {kRecvBuf, 0}, 1000);
  EXPECT_NEAR(replayUs(pairs, 1, link), 10.0 + 1.0, 1e-6);
  // Two messages from one sender share its port.
  std::vector<Schedule> fan(3);
  fan[0].send(1, {kSendBuf, 0}, 1000);
  fan[0].send(2, {kSendBuf, 0}, 1000);
  fan[1].recv(0, {kRecvBuf, 0}, 1000);
  fan[2].recv(0, {kRecvBuf, 0}, 1000);
  EXPECT_NEAR(replayUs(fan, 1, link), 10.0 + 2.0, 1e-6);
}

TEST(CostModelReplay, UnmatchedMessagesAreInfinite) {
  std::vector<Schedule> s(2);
  s[0].send(1, {kSendBuf, 0}, 10);
  EXPECT_TRUE(std::isinf(replayUs(s, 4, kShm)));
  // A cycle of receives that wait for each other's sends.
  std::vector<Schedule> cycle(2);
  for (int r = 0; r < 2; ++r) {
    cycle[r].recv(1 - r, {kRecvBuf, 0}, 10);
    cycle[r].send(1 - r, {kRecvBuf, 0}, 10);
  }
  EXPECT_TRUE(std::isinf(replayUs(cycle, 4, kShm)));
}

// Memory steps: gets, puts and reductions from a peer's buffer run at local copy speed; a
// signal reaches its wait a latency later; a wait without its signal never ends.
TEST(CostModelReplay, MemoryStepsAndSignals) {
  const LinkModel link{10.0, 1.0, 2.0};
  std::vector<Schedule> s(2);
  s[0].get(1, {kSendBuf, 0}, {kRecvBuf, 0}, 500'000);  // 2e6 bytes at 2 GB/s: 1000 us
  s[0].memorySignal(1);
  s[1].memoryWait(0);
  s[1].put(0, {kSendBuf, 0}, {kRecvBuf, 0}, 250'000);  // 500 us after the signal's 10
  EXPECT_NEAR(replayUs(s, 4, link), 1510.0, 1e-6);
  std::vector<Schedule> unmatched(2);
  unmatched[1].memoryWait(0);
  EXPECT_TRUE(std::isinf(replayUs(unmatched, 4, link)));
}

TEST(CostModelChoice, SmallAllReduceIsLatencyBound) {
  for (const LinkModel& link : {kShm, kTcp}) {
    for (int n : {3, 4, 8, 16, 32}) {
      AlgoChoice c = chooseAlgo(CollKind::kAllReduce, 8, 4, n, link, AlgoOverride());
      EXPECT_TRUE(c.algo == Algo::kRecursiveDoubling || c.algo == Algo::kTree)
          << n << " ranks: " << algoName(c.algo) << "\n"
          << explainChoice(CollKind::kAllReduce, 8, 4, n, link, AlgoOverride());
    }
  }
}

TEST(CostModelChoice, LargeAllReduceIsRing) {
  for (const LinkModel& link : {kShm, kTcp}) {
    for (int n : {4, 8, 16}) {
      AlgoChoice c = chooseAlgo(CollKind::kAllReduce, 256 * kMiB, 4, n, link, AlgoOverride());
      EXPECT_EQ(c.algo, Algo::kRing)
          << n << " ranks\n"
          << explainChoice(CollKind::kAllReduce, 256 * kMiB, 4, n, link, AlgoOverride());
    }
  }
}

TEST(CostModelChoice, BroadcastSmallIsTreeLargeIsRing) {
  AlgoChoice small = chooseAlgo(CollKind::kBroadcast, 64, 4, 16, kTcp, AlgoOverride());
  EXPECT_EQ(small.algo, Algo::kTree);
  AlgoChoice large = chooseAlgo(CollKind::kBroadcast, 256 * kMiB, 4, 16, kTcp, AlgoOverride());
  EXPECT_EQ(large.algo, Algo::kRing)
      << explainChoice(CollKind::kBroadcast, 256 * kMiB, 4, 16, kTcp, AlgoOverride());
}

TEST(CostModelChoice, OnlyAlgorithmsThatImplementTheCollective) {
  for (size_t bytes : {size_t{0}, size_t{1024}, 64 * kMiB}) {
    EXPECT_EQ(chooseAlgo(CollKind::kAllToAll, bytes, 4, 8, kShm, AlgoOverride()).algo,
              Algo::kPairwise);
    EXPECT_EQ(chooseAlgo(CollKind::kAllToAllv, bytes, 4, 8, kShm, AlgoOverride()).algo,
              Algo::kPairwise);
    EXPECT_EQ(chooseAlgo(CollKind::kBarrier, bytes, 1, 8, kShm, AlgoOverride()).algo,
              Algo::kDissemination);
    EXPECT_EQ(chooseAlgo(CollKind::kAllGather, bytes, 4, 8, kShm, AlgoOverride()).algo,
              Algo::kRing);
  }
}

TEST(CostModelChoice, BarrierCostsRoundsOfLatency) {
  // ceil(log2 8) = 3 rounds of zero-byte messages.
  EXPECT_NEAR(predictUs(Algo::kDissemination, CollKind::kBarrier, 0, 1, 8, kTcp),
              3 * kTcp.latencyUs, 1e-6);
}

TEST(CostModelChoice, OverrideIsRespected) {
  AlgoChoice c = chooseAlgo(CollKind::kAllReduce, 256 * kMiB, 4, 8, kShm, parsed("allreduce:tree"));
  EXPECT_EQ(c.algo, Algo::kTree);
  c = chooseAlgo(CollKind::kAllReduce, 256 * kMiB, 4, 8, kShm, parsed("^ring"));
  EXPECT_NE(c.algo, Algo::kRing);
  c = chooseAlgo(CollKind::kAllReduce, 8, 4, 8, kShm, parsed("ring"));
  EXPECT_EQ(c.algo, Algo::kRing);
  // "ring" names nothing that implements all-to-all: pairwise stays.
  c = chooseAlgo(CollKind::kAllToAll, 1024, 4, 8, kShm, parsed("ring"));
  EXPECT_EQ(c.algo, Algo::kPairwise);
  EXPECT_DOUBLE_EQ(c.predictedUs,
                   predictUs(Algo::kPairwise, CollKind::kAllToAll, 1024, 4, 8, kShm));
}

// Prices worked out by hand, not by the model: copies free, one chunk per message.
TEST(CostModelPredict, MatchesPricesWorkedOutByHand) {
  const LinkModel link{10.0, 1.0, 1e9};  // 10 us a message, 1000 bytes a microsecond
  // Ring all-gather of 100 KB per rank over 4 ranks: 3 steps, each one message of 100 KB
  // received while the next is sent, so 3 * (10 + 100) us.
  EXPECT_NEAR(predictUs(Algo::kRing, CollKind::kAllGather, 100'000, 4, 4, link), 330.0, 1.0);
  // Recursive-doubling all-reduce of 8 bytes over 8 ranks: log2(8) = 3 exchanges of 8 bytes.
  EXPECT_NEAR(predictUs(Algo::kRecursiveDoubling, CollKind::kAllReduce, 8, 4, 8, link),
              3 * (10.0 + 0.008), 0.01);
  // Dissemination barrier over 5 ranks: ceil(log2(5)) = 3 rounds of one message.
  EXPECT_NEAR(predictUs(Algo::kDissemination, CollKind::kBarrier, 0, 1, 5, link), 30.0, 0.01);
}

TEST(CostModelPredict, GrowsWithBytes) {
  for (int a = 0; a < kNumAlgos; ++a) {
    for (int k = 0; k < kNumCollKinds; ++k) {
      auto algo = static_cast<Algo>(a);
      auto kind = static_cast<CollKind>(k);
      if (!algoSupports(algo, kind) || kind == CollKind::kBarrier) continue;
      for (int n : {2, 5, 8}) {
        double last = 0;
        for (size_t bytes = 0; bytes <= 256 * kMiB; bytes = bytes < 4 ? bytes + 1 : bytes * 3 / 2) {
          double t = predictUs(algo, kind, bytes, 4, n, kShm);
          ASSERT_TRUE(std::isfinite(t)) << algoName(algo) << " " << collName(kind) << " " << bytes;
          EXPECT_GE(t, last * (1 - 1e-9))
              << algoName(algo) << " " << collName(kind) << " " << n << " ranks, " << bytes;
          last = t;
        }
        // Bandwidth dominates at the top.
        EXPECT_GT(last, 10 * predictUs(algo, kind, 1024, 4, n, kShm));
      }
    }
  }
}

TEST(CostModelPredict, UnsupportedIsInfiniteAndSlowLinksCostMore) {
  EXPECT_TRUE(std::isinf(predictUs(Algo::kPairwise, CollKind::kAllReduce, 1024, 4, 4, kShm)));
  EXPECT_TRUE(std::isinf(predictUs(Algo::kTree, CollKind::kAllGather, 1024, 4, 4, kShm)));
  for (size_t bytes : {size_t{8}, kMiB}) {
    EXPECT_GT(predictUs(Algo::kRing, CollKind::kAllReduce, bytes, 4, 8, kTcp),
              predictUs(Algo::kRing, CollKind::kAllReduce, bytes, 4, 8, kShm));
  }
}

TEST(CostModelPredict, ManyRanks) {
  // Past the replayed rank count the model scales; it must still grow with ranks.
  double t64 = predictUs(Algo::kRing, CollKind::kAllReduce, kMiB, 4, 64, kShm);
  double t200 = predictUs(Algo::kRing, CollKind::kAllReduce, kMiB, 4, 200, kShm);
  double t400 = predictUs(Algo::kRing, CollKind::kAllReduce, kMiB, 4, 400, kShm);
  EXPECT_TRUE(std::isfinite(t400));
  EXPECT_LT(t64, t200);
  EXPECT_LT(t200, t400);
  EXPECT_TRUE(std::isfinite(predictUs(Algo::kTree, CollKind::kBroadcast, kMiB, 4, 300, kTcp)));
}

TEST(CostModelExplain, ListsCandidatesAndTheChoice) {
  std::string text = explainChoice(CollKind::kAllReduce, kMiB, 4, 8, kShm, parsed("^rd"));
  EXPECT_NE(text.find("all_reduce"), std::string::npos) << text;
  EXPECT_NE(text.find("ring"), std::string::npos) << text;
  EXPECT_NE(text.find("tree"), std::string::npos) << text;
  EXPECT_NE(text.find("<- chosen"), std::string::npos) << text;
  EXPECT_NE(text.find("excluded by WEFT_ALGO"), std::string::npos) << text;
  std::vector<AlgoCandidate> c = rankAlgos(CollKind::kAllReduce, kMiB, 4, 8, kShm, AlgoOverride());
  ASSERT_EQ(c.size(), 3u);
  EXPECT_LE(c[0].predictedUs, c[1].predictedUs);
  EXPECT_LE(c[1].predictedUs, c[2].predictedUs);
}

TEST(AlgoOverrideParse, Empty) {
  AlgoOverride o = parsed("   ");
  for (int k = 0; k < kNumCollKinds; ++k) {
    for (int a = 0; a < kNumAlgos; ++a) {
      auto kind = static_cast<CollKind>(k);
      auto algo = static_cast<Algo>(a);
      EXPECT_EQ(o.allows(kind, algo), algoSupports(algo, kind));
    }
  }
}

TEST(AlgoOverrideParse, Lists) {
  AlgoOverride o = parsed("ring");
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kRing));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kTree));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kRecursiveDoubling));
  EXPECT_TRUE(o.allows(CollKind::kAllToAll, Algo::kPairwise));  // fallback
  EXPECT_TRUE(o.allows(CollKind::kBarrier, Algo::kDissemination));

  o = parsed(" RING , Tree ");
  EXPECT_TRUE(o.allows(CollKind::kBroadcast, Algo::kRing));
  EXPECT_TRUE(o.allows(CollKind::kBroadcast, Algo::kTree));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kRecursiveDoubling));

  o = parsed("^tree");
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kTree));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kRing));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kRecursiveDoubling));
  EXPECT_FALSE(o.allows(CollKind::kBroadcast, Algo::kTree));

  o = parsed("recursive_doubling");
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kRecursiveDoubling));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kRing));
  EXPECT_TRUE(o.allows(CollKind::kBroadcast, Algo::kRing));  // rd has no broadcast
  EXPECT_TRUE(o.allows(CollKind::kBroadcast, Algo::kTree));

  o = parsed("^dissemination");  // leaves barrier nothing: falls back
  EXPECT_TRUE(o.allows(CollKind::kBarrier, Algo::kDissemination));
}

// The shared-memory paths: named alone they leave the algorithms free (for the calls they do
// not fit); a list of algorithms alone leaves the paths out.
TEST(AlgoOverrideParse, Paths) {
  AlgoOverride o = parsed("");
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kDirect));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kBarrier, ShmPath::kDirect));
  EXPECT_FALSE(o.allows(CollKind::kBarrier, ShmPath::kStaged));
  EXPECT_FALSE(o.allows(CollKind::kAllToAllv, ShmPath::kDirect));

  o = parsed("ring");
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kDirect));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kAllToAll, ShmPath::kDirect));  // ring has no all-to-all

  o = parsed("Direct");
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kDirect));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kRing));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kTree));

  o = parsed("staged,rd");
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kDirect));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kRecursiveDoubling));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kRing));

  o = parsed("^direct");
  EXPECT_FALSE(o.allows(CollKind::kBroadcast, ShmPath::kDirect));
  EXPECT_TRUE(o.allows(CollKind::kBroadcast, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kBroadcast, Algo::kTree));

  o = parsed("allreduce:direct,ring;staged");
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kDirect));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kStaged));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kTree));
  EXPECT_FALSE(o.allows(CollKind::kReduce, ShmPath::kDirect));
  EXPECT_TRUE(o.allows(CollKind::kReduce, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kReduce, Algo::kTree));

  EXPECT_STREQ(shmPathName(ShmPath::kDirect), "direct");
  EXPECT_STREQ(shmPathName(ShmPath::kStaged), "staged");
  EXPECT_STREQ(shmPathName(ShmPath::kMapped), "mapped");
  EXPECT_STREQ(shmPathName(ShmPath::kSingleCopy), "singlecopy");
}

// Mapped and single copy are ways of a staged call: named, they start staged calls; leaving
// staged out leaves them out; single copy exists for copies only.
TEST(AlgoOverrideParse, WaysOfAStagedCall) {
  AlgoOverride o = parsed("");
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kMapped));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kSingleCopy));
  EXPECT_TRUE(o.allows(CollKind::kAllGather, ShmPath::kSingleCopy));
  EXPECT_FALSE(o.allows(CollKind::kBarrier, ShmPath::kMapped));

  o = parsed("staged");
  EXPECT_TRUE(o.allowsStagedCall(CollKind::kAllGather));
  EXPECT_FALSE(o.allows(CollKind::kAllGather, ShmPath::kMapped));
  EXPECT_FALSE(o.allows(CollKind::kAllGather, ShmPath::kSingleCopy));

  o = parsed("SingleCopy");
  EXPECT_TRUE(o.allowsStagedCall(CollKind::kAllGather));
  EXPECT_FALSE(o.allows(CollKind::kAllGather, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kAllGather, ShmPath::kSingleCopy));
  EXPECT_TRUE(o.allows(CollKind::kAllGather, Algo::kRing));  // no algorithm named: all free
  // No reduction goes single copy: a list that names nothing all-reduce runs leaves it all.
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kStaged));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kMapped));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kDirect));

  o = parsed("mapped,ring");
  EXPECT_TRUE(o.allowsStagedCall(CollKind::kAllReduce));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, ShmPath::kMapped));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kStaged));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, ShmPath::kDirect));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kTree));

  o = parsed("^staged");
  EXPECT_FALSE(o.allowsStagedCall(CollKind::kAllGather));
  EXPECT_FALSE(o.allows(CollKind::kAllGather, ShmPath::kMapped));
  EXPECT_FALSE(o.allows(CollKind::kAllGather, ShmPath::kSingleCopy));
  EXPECT_TRUE(o.allows(CollKind::kAllGather, ShmPath::kDirect));

  o = parsed("^mapped,singlecopy");
  EXPECT_TRUE(o.allows(CollKind::kAllGather, ShmPath::kStaged));
  EXPECT_FALSE(o.allows(CollKind::kAllGather, ShmPath::kMapped));
  EXPECT_FALSE(o.allows(CollKind::kAllGather, ShmPath::kSingleCopy));
  EXPECT_TRUE(o.allows(CollKind::kAllGather, ShmPath::kDirect));

  AlgoOverride unchanged;
  const Status bad = AlgoOverride::parse("mapped,copy", &unchanged);
  EXPECT_EQ(bad.code(), weftInvalidArgument);
  EXPECT_NE(bad.message().find("singlecopy"), std::string::npos) << bad.message();
}

TEST(AlgoOverrideParse, PerCollective) {
  AlgoOverride o = parsed("allreduce:tree;broadcast:ring");
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kTree));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kRing));
  EXPECT_TRUE(o.allows(CollKind::kBroadcast, Algo::kRing));
  EXPECT_FALSE(o.allows(CollKind::kBroadcast, Algo::kTree));
  EXPECT_TRUE(o.allows(CollKind::kReduce, Algo::kTree));  // not mentioned
  EXPECT_TRUE(o.allows(CollKind::kReduce, Algo::kRing));

  o = parsed("All_Reduce: ^ring ; reduce_scatter:ring;");
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kRing));
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kTree));
  EXPECT_TRUE(o.allows(CollKind::kReduceScatter, Algo::kRing));

  o = parsed("tree;allreduce:rd");  // a default for the rest
  EXPECT_TRUE(o.allows(CollKind::kAllReduce, Algo::kRecursiveDoubling));
  EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kTree));
  EXPECT_TRUE(o.allows(CollKind::kReduce, Algo::kTree));
  EXPECT_FALSE(o.allows(CollKind::kReduce, Algo::kRing));
  EXPECT_TRUE(o.allows(CollKind::kAllGather, Algo::kRing));  // tree has no all-gather

  for (const char* name :
       {"broadcast", "reduce", "allreduce", "reducescatter", "allgather", "alltoall", "alltoallv",
        "barrier", "all_gather", "all_to_allv", "ALLREDUCE"}) {
    EXPECT_TRUE(parseCollName(name).has_value()) << name;
  }
}

TEST(AlgoOverrideParse, BadTextIsRejectedClearly) {
  struct Bad {
    const char* text;
    const char* mention;
  };
  const Bad bad[] = {
      {"foo", "foo"},
      {"ring,,tree", "empty algorithm"},
      {"^", "empty algorithm"},
      {"allreduce:", "empty algorithm"},
      {"allreduce:foo", "foo"},
      {"allgathr:ring", "allgathr"},
      {":ring", "unknown collective"},
      {"allreduce:pairwise", "allreduce"},
      {"barrier:^dissemination", "barrier"},  // direct is left, but fits not every call
      {"barrier:staged", "barrier"},
      {"allreduce:^ring,tree,rd", "allreduce"},
      {"stagd", "paths: direct, staged"},
      {"ring;tree", "more than one"},
      {"allreduce:ring;all_reduce:tree", "twice"},
  };
  for (const Bad& b : bad) {
    AlgoOverride o = parsed("allreduce:tree");
    Status st = AlgoOverride::parse(b.text, &o);
    EXPECT_EQ(st.code(), weftInvalidArgument) << b.text;
    EXPECT_NE(st.message().find("WEFT_ALGO"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(b.mention), std::string::npos) << st.message();
    // Unchanged on error.
    EXPECT_FALSE(o.allows(CollKind::kAllReduce, Algo::kRing)) << b.text;
  }
}

}  // namespace
}  // namespace weft
