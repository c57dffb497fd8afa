// Every algorithm and every collective it implements, through the simulator, for every rank
// count from 1 to 64, checked against a reference computed by plain loops (harness.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/executor.h"
#include "tests/collectives/harness.h"
#include "transports/loopback/loopback_link.h"

namespace weft::test {
namespace {

constexpr int kMaxRanks = 64;

struct AlgoColl {
  Algo algo;
  CollKind kind;
};

void PrintTo(const AlgoColl& p, std::ostream* os) {
  *os << algoName(p.algo) << " " << collName(p.kind);
}

std::vector<AlgoColl> allPairs() {
  std::vector<AlgoColl> out;
  for (int a = 0; a < kNumAlgos; ++a) {
    for (int k = 0; k < kNumCollKinds; ++k) {
      if (algoSupports(static_cast<Algo>(a), static_cast<CollKind>(k))) {
        out.push_back({static_cast<Algo>(a), static_cast<CollKind>(k)});
      }
    }
  }
  return out;
}

bool rooted(CollKind k) {
  return k == CollKind::kBroadcast || k == CollKind::kReduce;
}
bool perRankCount(CollKind k) {
  return k == CollKind::kReduceScatter || k == CollKind::kAllGather || k == CollKind::kAllToAll;
}

// Small chunks, varied, so that pipelining is exercised without big buffers.
size_t chunkFor(int n) {
  static constexpr size_t kChunks[] = {5, 7, 16, 64};
  return kChunks[n % 4];
}

// Counts for one rank count: zero, one, odd counts below nranks, and counts spanning several
// chunks (per block for the ring all-reduce, whose blocks are count/nranks). The executor's
// set-up is quadratic in a rank's steps, so ring blocks span two or three chunks, not more.
std::vector<size_t> countsFor(const AlgoColl& p, int n, size_t chunk) {
  std::set<size_t> counts{0, 1};
  if (p.kind == CollKind::kBarrier) return {0};
  if (p.kind == CollKind::kAllToAllv) return {0, 1, 3};  // scales of irregularCounts
  if (perRankCount(p.kind)) {
    counts.insert({3, chunk + 2});
    if (n <= 16) counts.insert(2 * chunk + 3);
  } else {
    for (size_t odd : {size_t{3}, size_t(n / 2) | 1, size_t(n - 1) | 1}) {
      if (odd < size_t(n)) counts.insert(odd);
    }
    if (p.algo == Algo::kRing && p.kind == CollKind::kAllReduce) {
      counts.insert(size_t(n) * (chunk + 1) + 3);
      if (n <= 16) counts.insert({size_t(n), 6 * chunk + 5, 2 * size_t(n) * chunk + 3});
    } else {
      counts.insert({size_t(n), 6 * chunk + 5});
    }
  }
  return {counts.begin(), counts.end()};
}

std::vector<int> rootsFor(CollKind kind, int n) {
  if (!rooted(kind)) return {0};
  std::set<int> roots{0, n - 1, n / 2, 1 % n};
  return {roots.begin(), roots.end()};
}

std::string pairName(const ::testing::TestParamInfo<AlgoColl>& info) {
  return std::string(algoName(info.param.algo)) + "_" + collName(info.param.kind);
}

class EveryRankCount : public ::testing::TestWithParam<AlgoColl> {};

TEST_P(EveryRankCount, MatchesReference) {
  const AlgoColl p = GetParam();
  int run = 0;
  for (int n = 1; n <= kMaxRanks; ++n) {
    const size_t chunk = chunkFor(n);
    for (int root : rootsFor(p.kind, n)) {
      for (size_t count : countsFor(p, n, chunk)) {
        for (bool inPlace : {false, true}) {
          if (inPlace && !supportsInPlace(p.kind)) continue;
          Case c;
          c.algo = p.algo;
          c.kind = p.kind;
          c.nranks = n;
          c.root = root;
          c.inPlace = inPlace;
          c.chunk = chunk;
          c.emptyUnused = run % 3 == 0;
          c.linkCapacity = run % 2 == 0 ? 64 : 4096;
          if (p.kind == CollKind::kAllToAllv) {
            c.vcounts = irregularCounts(n, count);
          } else {
            c.count = count;
          }
          ++run;
          ASSERT_TRUE(runCase(c)) << describe(c);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, EveryRankCount, ::testing::ValuesIn(allPairs()), pairName);

// Other element sizes, float types and the other operators, on a subset of rank counts.
TEST(AlgorithmTypes, OtherTypesAndOperators) {
  struct TypeOp {
    weftDataType_t type;
    weftRedOp_t op;
  };
  const TypeOp reducing[] = {
      {weftInt64, weftSum},   {weftFloat32, weftSum},  {weftFloat32, weftMax},
      {weftFloat32, weftMin}, {weftFloat32, weftProd}, {weftFloat64, weftProd},
      {weftInt32, weftProd},  {weftInt32, weftMin},    {weftInt64, weftMax}};
  const TypeOp moving[] = {{weftInt64, weftSum}, {weftFloat64, weftSum}};
  int run = 0;
  for (const AlgoColl& p : allPairs()) {
    bool reduces = p.kind == CollKind::kReduce || p.kind == CollKind::kAllReduce ||
                   p.kind == CollKind::kReduceScatter;
    if (p.kind == CollKind::kBarrier) continue;
    for (int n : {1, 2, 3, 4, 5, 7, 8, 12, 17, 33, 64}) {
      for (const TypeOp& to : reduces
                                  ? std::vector<TypeOp>(std::begin(reducing), std::end(reducing))
                                  : std::vector<TypeOp>(std::begin(moving), std::end(moving))) {
        Case c;
        c.algo = p.algo;
        c.kind = p.kind;
        c.nranks = n;
        c.type = to.type;
        c.op = to.op;
        c.chunk = 7;
        c.root = n / 3;
        c.inPlace = run % 2 == 0;
        c.linkCapacity = run % 4 < 2 ? 64 : 4096;
        c.count = perRankCount(p.kind) ? 17 : 2 * size_t(n) + 9;
        if (p.kind == CollKind::kAllToAllv) c.vcounts = irregularCounts(n, 2);
        ++run;
        ASSERT_TRUE(runCase(c)) << describe(c);
      }
    }
  }
}

TEST(AlgorithmAllToAllv, RanksThatSendOrReceiveNothing) {
  for (int n : {2, 3, 6, 9}) {
    Case c;
    c.algo = Algo::kPairwise;
    c.kind = CollKind::kAllToAllv;
    c.nranks = n;
    c.vcounts = irregularCounts(n, 3);
    for (int q = 0; q < n; ++q)
      c.vcounts[1][q] = 0;  // rank 1 sends nothing
    for (int p = 0; p < n; ++p)
      c.vcounts[p][n - 1] = 0;  // the last rank receives nothing
    c.vcounts[0][0] = 11;       // a large self block
    c.linkCapacity = 64;
    EXPECT_TRUE(runCase(c)) << describe(c);
  }
}

// Large messages over tiny links: schedules that only work while messages fit in flight
// deadlock here.
// paceBytes 0: links as small as 64 bytes. Otherwise roomy links whose sends may run only
// paceBytes ahead of their receives (Executor::sendBudget), so pacing, not room, holds them.
void expectLargeMessagesFinish(size_t paceBytes) {
  for (const AlgoColl& p : allPairs()) {
    for (int n : {2, 3, 5, 6, 8}) {
      for (bool inPlace : {false, true}) {
        Case c;
        c.algo = p.algo;
        c.kind = p.kind;
        c.nranks = n;
        c.count = 3000;
        c.chunk = 1000;
        c.inPlace = inPlace;
        c.root = n - 1;
        c.linkCapacity = paceBytes == 0 ? 64 : 1u << 16;
        c.paceBytes = paceBytes;
        if (p.kind == CollKind::kAllToAllv) c.vcounts = irregularCounts(n, 300);
        EXPECT_TRUE(runCase(c)) << describe(c);
      }
    }
  }
}

TEST(AlgorithmDeadlock, LargeMessagesOverTinyLinks) {
  expectLargeMessagesFinish(0);
}

TEST(AlgorithmDeadlock, LargeMessagesOverPacedLinks) {
  expectLargeMessagesFinish(24);    // less than a message header
  expectLargeMessagesFinish(1000);  // a quarter of a chunk
}

// A barrier must hold every rank until all have arrived: run all ranks but one, and none may
// finish; then the last one arrives and all finish.
TEST(AlgorithmBarrier, NoRankLeavesBeforeAllArrive) {
  for (int n = 2; n <= 20; ++n) {
    for (int late : {0, n / 2, n - 1}) {
      const auto un = static_cast<size_t>(n);
      std::vector<Schedule> schedules(un);
      for (int r = 0; r < n; ++r) {
        CollArgs args;
        args.kind = CollKind::kBarrier;
        args.nranks = n;
        args.rank = r;
        ASSERT_TRUE(buildSchedule(Algo::kDissemination, args, {}, &schedules[r]).ok());
      }
      std::vector<std::unique_ptr<Link>> links;
      std::vector<std::vector<Channel>> channels(un, std::vector<Channel>(un));
      std::vector<std::vector<Channel*>> ptrs(un, std::vector<Channel*>(un, nullptr));
      for (int a = 0; a < n; ++a) {
        for (int b = a + 1; b < n; ++b) {
          auto [la, lb] = makeLoopbackPair(64);
          channels[a][b] = Channel(la.get(), 1, a, b);
          channels[b][a] = Channel(lb.get(), 1, b, a);
          ptrs[a][b] = &channels[a][b];
          ptrs[b][a] = &channels[b][a];
          links.push_back(std::move(la));
          links.push_back(std::move(lb));
        }
      }
      std::vector<Executor> ex(un);
      auto runUntilStuck = [&](bool withLate) {
        for (bool moved = true; moved;) {
          moved = false;
          for (int r = 0; r < n; ++r) {
            if ((r == late && !withLate) || ex[r].done()) continue;
            bool progressed = false;
            ASSERT_TRUE(ex[r].progress(&progressed).ok());
            moved = moved || progressed;
          }
        }
      };
      for (int r = 0; r < n; ++r) {
        if (r == late) continue;
        ASSERT_TRUE(
            ex[r].start(schedules[r], std::vector<BufferView>(3), nullptr, ptrs[r].data(), n).ok());
      }
      runUntilStuck(false);
      for (int r = 0; r < n; ++r) {
        if (r == late) continue;
        EXPECT_FALSE(ex[r].done()) << "rank " << r << " of " << n << " left early";
      }
      ASSERT_TRUE(
          ex[late]
              .start(schedules[late], std::vector<BufferView>(3), nullptr, ptrs[late].data(), n)
              .ok());
      runUntilStuck(true);
      for (int r = 0; r < n; ++r)
        EXPECT_TRUE(ex[r].done()) << "rank " << r << " of " << n;
    }
  }
}

TEST(AlgorithmNames, RoundTripAndSupport) {
  for (int a = 0; a < kNumAlgos; ++a) {
    auto algo = static_cast<Algo>(a);
    EXPECT_EQ(parseAlgo(algoName(algo)), algo);
    std::string upper = algoName(algo);
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    EXPECT_EQ(parseAlgo(upper), algo);
  }
  EXPECT_EQ(std::string(algoName(Algo::kRecursiveDoubling)), "rd");
  EXPECT_FALSE(parseAlgo("rings").has_value());
  EXPECT_FALSE(parseAlgo("").has_value());
  EXPECT_TRUE(algoSupports(Algo::kRing, CollKind::kAllGather));
  EXPECT_FALSE(algoSupports(Algo::kTree, CollKind::kAllGather));
  EXPECT_TRUE(algoSupports(Algo::kPairwise, CollKind::kAllToAllv));
  EXPECT_TRUE(algoSupports(Algo::kDissemination, CollKind::kBarrier));
  // Every collective has an algorithm.
  for (int k = 0; k < kNumCollKinds; ++k) {
    bool any = false;
    for (int a = 0; a < kNumAlgos; ++a) {
      any = any || algoSupports(static_cast<Algo>(a), static_cast<CollKind>(k));
    }
    EXPECT_TRUE(any) << collName(static_cast<CollKind>(k));
  }
}

TEST(AlgorithmArguments, BadArgumentsAreRejected) {
  Schedule s;
  CollArgs args;
  args.kind = CollKind::kAllGather;
  args.nranks = 4;
  args.rank = 1;
  args.count = 8;
  Status st = buildSchedule(Algo::kTree, args, {}, &s);
  EXPECT_EQ(st.code(), weftInvalidArgument);
  EXPECT_NE(st.message().find("tree"), std::string::npos) << st.message();
  args.kind = CollKind::kBroadcast;
  args.root = 4;
  EXPECT_EQ(buildSchedule(Algo::kRing, args, {}, &s).code(), weftInvalidArgument);
  args.root = 0;
  args.rank = 4;
  EXPECT_EQ(buildSchedule(Algo::kRing, args, {}, &s).code(), weftInvalidArgument);
  args.rank = 0;
  args.nranks = 0;
  EXPECT_EQ(buildSchedule(Algo::kRing, args, {}, &s).code(), weftInvalidArgument);
  args.nranks = 2;
  args.kind = CollKind::kAllToAllv;
  EXPECT_EQ(buildSchedule(Algo::kPairwise, args, {}, &s).code(), weftInvalidArgument);
  args.kind = CollKind::kBroadcast;
  AlgoParams zeroChunk;
  zeroChunk.chunkCount = 0;  // treated as 1, not a division by zero or an endless loop
  EXPECT_TRUE(buildSchedule(Algo::kRing, args, zeroChunk, &s).ok());
}

// Elements all ranks' schedules send, summed.
size_t elementsSent(Algo algo, CollKind kind, int n, size_t count) {
  size_t sent = 0;
  for (int r = 0; r < n; ++r) {
    CollArgs args;
    args.kind = kind;
    args.nranks = n;
    args.rank = r;
    args.root = n - 1;
    args.count = count;
    AlgoParams params;
    params.chunkCount = 7;  // several chunks: pipelining must not change the volume
    Schedule s;
    EXPECT_TRUE(buildSchedule(algo, args, params, &s).ok());
    for (const Step& step : s.steps) {
      if (step.kind == StepKind::kSend) sent += step.count;
    }
  }
  return sent;
}

// The volumes the textbook gives each algorithm, worked out by hand from n and the count (per
// rank for all-gather, reduce-scatter and all-to-all), not from the schedules themselves.
TEST(AlgorithmTraffic, VolumesAreTheTextbooks) {
  const size_t c = 1000;
  for (int n = 2; n <= 9; ++n) {
    const auto un = static_cast<size_t>(n);
    SCOPED_TRACE(testing::Message() << n << " ranks");
    // Ring all-reduce: a reduce-scatter and an all-gather, each n-1 of n blocks per rank.
    EXPECT_EQ(elementsSent(Algo::kRing, CollKind::kAllReduce, n, c), 2 * (un - 1) * c);
    EXPECT_EQ(elementsSent(Algo::kRing, CollKind::kAllGather, n, c), un * (un - 1) * c);
    EXPECT_EQ(elementsSent(Algo::kRing, CollKind::kReduceScatter, n, c), un * (un - 1) * c);
    EXPECT_EQ(elementsSent(Algo::kPairwise, CollKind::kAllToAll, n, c), un * (un - 1) * c);
    // Every rank but the root receives the vector once; every rank but the root sends its
    // partial sum once.
    EXPECT_EQ(elementsSent(Algo::kRing, CollKind::kBroadcast, n, c), (un - 1) * c);
    EXPECT_EQ(elementsSent(Algo::kTree, CollKind::kBroadcast, n, c), (un - 1) * c);
    EXPECT_EQ(elementsSent(Algo::kRing, CollKind::kReduce, n, c), (un - 1) * c);
    EXPECT_EQ(elementsSent(Algo::kTree, CollKind::kReduce, n, c), (un - 1) * c);
    // Recursive doubling at a power of two: log2(n) exchanges of the whole vector per rank.
    if ((n & (n - 1)) == 0) {
      const size_t rounds = static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(n)));
      EXPECT_EQ(elementsSent(Algo::kRecursiveDoubling, CollKind::kAllReduce, n, c),
                un * rounds * c);
    }
  }
}

// Schedules are pure functions of their arguments.
TEST(AlgorithmSchedules, SameArgumentsSameSchedule) {
  for (const AlgoColl& p : allPairs()) {
    if (p.kind == CollKind::kAllToAllv) continue;
    CollArgs args;
    args.kind = p.kind;
    args.nranks = 7;
    args.rank = 3;
    args.root = 5;
    args.count = 100;
    AlgoParams params;
    params.chunkCount = 9;
    Schedule a, b;
    ASSERT_TRUE(buildSchedule(p.algo, args, params, &a).ok());
    ASSERT_TRUE(buildSchedule(p.algo, args, params, &b).ok());
    ASSERT_EQ(a.steps.size(), b.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) {
      EXPECT_EQ(describeStep(a.steps[i]), describeStep(b.steps[i]));
    }
    EXPECT_EQ(a.scratchCount, b.scratchCount);
  }
}

}  // namespace
}  // namespace weft::test
