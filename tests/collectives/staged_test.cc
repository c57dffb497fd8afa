// Staged collectives for 1..9 virtual ranks in this thread: slots and staging areas on the heap,
// every rank's result checked against plain loops. Small staging areas make every operation
// wrap the ring of chunks many times, and operations of different kinds follow each other on
// the same ranks, as the chunk counters carry over from one to the next. Every case runs twice:
// with buffers on the heap (staged), and in weftMemAlloc memory (mapped: each virtual rank maps
// the others' buffers through /proc/self/fd, as a peer process would).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectives/reduce.h"
#include "collectives/staged.h"
#include "tests/api/weft_mem_allocator.h"
#include "tests/collectives/rank_inputs.h"
#include "tests/collectives/staged_ranks.h"
#include "tests/collectives/virtual_ranks.h"

namespace weft {
namespace {

// Buffers on the heap, or in weftMemAlloc memory while gShared is true.
using Buf = test::RankBuf;
bool& gShared = test::weftMemAllocInForce();
using test::input;
using test::inputs;
using test::sumAt;

// n ranks' shared memory on the heap, and one staged operation per rank. Outputs of streamBytes
// or more are written with streaming stores.
struct Ranks : test::StagedRanks {
  Ranks(int n, size_t stagingBytes, size_t streamBytes = SIZE_MAX)
      : StagedRanks(n, stagingBytes), streamBytes(streamBytes) {}

  void start(int r, CollKind kind, size_t count, int root, const void* send, void* recv,
             ReduceFn reduce, uint64_t signature = 42) {
    ops[r].start(groups[r].get(), test::collArgs(kind, count, root, r, n()), send, recv,
                 sizeof(int32_t), reduce, signature, streamBytes);
  }

  // Runs every rank's operation to the end; they must all have gone mapped, or all staged, as
  // gShared says (every buffer is weftMemAlloc memory, or none is).
  Status finish() {
    WEFT_RETURN_IF_ERROR(test::progressUntilDone(ops, 100000));
    for (const StagedOp& op : ops) {
      if (op.wentMapped() != gShared) return Status(weftInternalError, "the wrong path");
    }
    return okStatus();
  }

  size_t streamBytes;
};

struct Param {
  int n;
  size_t count;
  bool inPlace;
  size_t stagingBytes;
  bool mapped = false;
};

class Staged : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const Param& p = GetParam();
    gShared = p.mapped;
    ranks = std::make_unique<Ranks>(p.n, p.stagingBytes);
  }
  void TearDown() override { gShared = false; }
  std::unique_ptr<Ranks> ranks;
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
};

TEST_P(Staged, AllReduce) {
  const auto [n, count, inPlace, staging, mapped] = GetParam();
  // Twice, so the second operation starts where the first left the counters.
  for (int round = 0; round < 2; ++round) {
    std::vector<Buf> in(n), out(n, Buf(count, -7));
    for (int r = 0; r < n; ++r) {
      in[r] = inputs(r, count);
      ranks->start(r, CollKind::kAllReduce, count, 0, in[r].data(),
                   inPlace ? in[r].data() : out[r].data(), sum);
    }
    ASSERT_TRUE(ranks->finish().ok());
    for (int r = 0; r < n; ++r) {
      const Buf& got = inPlace ? in[r] : out[r];
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(got[i], sumAt(n, i)) << "round " << round << " rank " << r << " element " << i;
    }
  }
}

// 2-rank all-reduces large enough to combine by halves where the first rank's probe says the
// cores are near, and whole where it says far, whatever the second rank timed (here, two ranks
// in one thread answer each other late: far): every element exact either way, in place or not.
TEST(StagedHalves, TwoRankAllReducesFollowTheFirstRanksVerdict) {
  const int n = 2;
  const size_t count = StagedOp::kHalvesMinBytes / sizeof(int32_t) + 12345;
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  for (bool far : {false, true}) {
    for (bool inPlace : {false, true}) {
      Ranks ranks(n, size_t{256} << 10);
      ranks.groups[0]->setProbeVerdict(far);
      ranks.groups[1]->setProbeVerdict(!far);  // not the first rank: no say
      std::vector<Buf> in(n), out(n, Buf(count, -7));
      for (int r = 0; r < n; ++r) {
        in[r] = inputs(r, count);
        ranks.start(r, CollKind::kAllReduce, count, 0, in[r].data(),
                    inPlace ? in[r].data() : out[r].data(), sum);
      }
      ASSERT_TRUE(ranks.finish().ok());
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(ranks.ops[r].combinesByHalves(), !far) << "rank " << r;
        const Buf& got = inPlace ? in[r] : out[r];
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(got[i], sumAt(n, i))
              << "far " << far << ", in place " << inPlace << ", rank " << r << ", element " << i;
      }
    }
  }
}

TEST_P(Staged, Reduce) {
  const auto [n, count, inPlace, staging, mapped] = GetParam();
  for (int root : {0, n - 1}) {
    std::vector<Buf> in(n), out(n, Buf(count, -7));
    for (int r = 0; r < n; ++r) {
      in[r] = inputs(r, count);
      ranks->start(r, CollKind::kReduce, count, root, in[r].data(),
                   inPlace ? in[r].data() : out[r].data(), sum);
    }
    ASSERT_TRUE(ranks->finish().ok());
    const Buf& got = inPlace ? in[root] : out[root];
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(got[i], sumAt(n, i)) << "root " << root << " element " << i;
    for (int r = 0; r < n; ++r) {
      if (r == root) continue;
      EXPECT_EQ(in[r], inputs(r, count)) << "rank " << r << "'s input changed";
      if (!inPlace) {
        EXPECT_EQ(out[r], Buf(count, -7)) << "rank " << r << "'s output changed";
      }
    }
  }
}

TEST_P(Staged, ReduceScatter) {
  const auto [n, count, inPlace, staging, mapped] = GetParam();
  const size_t total = count * static_cast<size_t>(n);
  std::vector<Buf> in(n), out(n, Buf(count, -7));
  for (int r = 0; r < n; ++r) {
    in[r] = inputs(r, total);
    void* recv = inPlace ? in[r].data() + static_cast<size_t>(r) * count : out[r].data();
    ranks->start(r, CollKind::kReduceScatter, count, 0, in[r].data(), recv, sum);
  }
  ASSERT_TRUE(ranks->finish().ok());
  for (int r = 0; r < n; ++r) {
    const int32_t* got = inPlace ? in[r].data() + static_cast<size_t>(r) * count : out[r].data();
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(got[i], sumAt(n, static_cast<size_t>(r) * count + i)) << "rank " << r;
  }
}

TEST_P(Staged, AllGather) {
  const auto [n, count, inPlace, staging, mapped] = GetParam();
  const size_t total = count * static_cast<size_t>(n);
  std::vector<Buf> in(n), out(n, Buf(total, -7));
  for (int r = 0; r < n; ++r) {
    in[r] = inputs(r, count);
    const int32_t* send = in[r].data();
    if (inPlace) {
      std::copy(in[r].begin(), in[r].end(), out[r].begin() + static_cast<long>(r * count));
      send = out[r].data() + r * count;
    }
    ranks->start(r, CollKind::kAllGather, count, 0, send, out[r].data(), nullptr);
  }
  ASSERT_TRUE(ranks->finish().ok());
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(out[r][p * count + i], input(p, i)) << "rank " << r << " block " << p;
    }
  }
}

TEST_P(Staged, Broadcast) {
  const auto [n, count, inPlace, staging, mapped] = GetParam();
  for (int root : {0, n / 2, n - 1}) {
    std::vector<Buf> in(n), out(n, Buf(count, -7));
    for (int r = 0; r < n; ++r) {
      in[r] = r == root ? inputs(r, count) : Buf(count, -3);
      ranks->start(r, CollKind::kBroadcast, count, root, in[r].data(),
                   inPlace ? in[r].data() : out[r].data(), nullptr);
    }
    ASSERT_TRUE(ranks->finish().ok());
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(inPlace ? in[r] : out[r], inputs(root, count)) << "root " << root << " rank " << r;
  }
}

// All-to-all is out of place only.
class StagedOutOfPlace : public Staged {};

TEST_P(StagedOutOfPlace, AllToAll) {
  const auto [n, count, inPlace, staging, mapped] = GetParam();
  const size_t total = count * static_cast<size_t>(n);
  std::vector<Buf> in(n), out(n, Buf(total, -7));
  for (int r = 0; r < n; ++r) {
    in[r] = inputs(r, total);
    ranks->start(r, CollKind::kAllToAll, count, 0, in[r].data(), out[r].data(), nullptr);
  }
  ASSERT_TRUE(ranks->finish().ok());
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(out[r][p * count + i], input(p, r * count + i)) << "rank " << r << " from " << p;
    }
  }
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (int n : {1, 2, 3, 4, 5, 8, 9}) {
    // The smallest staging area that holds a line per rank in each chunk, and the default.
    const size_t small = 8 * 64 * static_cast<size_t>(n);
    for (bool mapped : {false, true}) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{70001}}) {
        for (bool inPlace : {false, true})
          out.push_back({n, count, inPlace, small, mapped});
      }
      out.push_back({n, 300007, false, size_t{2} << 20, mapped});
      out.push_back({n, 300007, true, size_t{2} << 20, mapped});
    }
  }
  return out;
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return "np" + std::to_string(info.param.n) + "_count" + std::to_string(info.param.count) +
         "_staging" + std::to_string(info.param.stagingBytes) +
         (info.param.inPlace ? "_inplace" : "") + (info.param.mapped ? "_mapped" : "");
}

std::vector<Param> outOfPlace() {
  std::vector<Param> out;
  for (const Param& p : params()) {
    if (!p.inPlace) out.push_back(p);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, Staged, ::testing::ValuesIn(params()), paramName);
INSTANTIATE_TEST_SUITE_P(All, StagedOutOfPlace, ::testing::ValuesIn(outOfPlace()), paramName);

// Operations of every kind, one after another on the same ranks, with sizes that leave the
// chunk counters at odd places between them. With `mapped`, every other operation has its
// buffers in weftMemAlloc memory, so mapped and staged operations alternate on the counters.
void runMixedSequence(int n, size_t count, size_t stagingBytes, size_t streamBytes = SIZE_MAX,
                      bool mapped = false,
                      TimedChoice::Mode copyStores = TimedChoice::Mode::kAuto) {
  Ranks ranks(n, stagingBytes, streamBytes);
  for (auto& group : ranks.groups)
    group->setStagingStoresMode(copyStores);
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  const size_t total = count * static_cast<size_t>(n);
  for (CollKind kind :
       {CollKind::kAllGather, CollKind::kAllReduce, CollKind::kAllToAll, CollKind::kReduce,
        CollKind::kReduceScatter, CollKind::kBroadcast, CollKind::kAllReduce}) {
    gShared = mapped && !gShared;
    std::vector<Buf> in(n), out(n, Buf(total, 0));
    for (int r = 0; r < n; ++r) {
      in[r] = inputs(r, total);
      ranks.start(r, kind, count, 1 % n, in[r].data(), out[r].data(), sum);
    }
    ASSERT_TRUE(ranks.finish().ok()) << collName(kind);
    for (int r = 0; r < n; ++r) {
      switch (kind) {
        case CollKind::kAllReduce:
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(out[r][i], sumAt(n, i));
          break;
        case CollKind::kReduceScatter:
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(out[r][i], sumAt(n, r * count + i));
          break;
        case CollKind::kBroadcast:
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(out[r][i], input(1 % n, i));
          break;
        case CollKind::kReduce:
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(out[r][i], r == 1 % n ? sumAt(n, i) : 0) << "rank " << r;
          break;
        case CollKind::kAllGather:
          for (size_t i = 0; i < total; ++i)
            ASSERT_EQ(out[r][i], input(static_cast<int>(i / count), i % count));
          break;
        default:  // all-to-all
          for (size_t i = 0; i < total; ++i)
            ASSERT_EQ(out[r][i], input(static_cast<int>(i / count), r * count + i % count));
          break;
      }
    }
  }
}

TEST(StagedSequence, MixedKinds) {
  for (int n : {2, 3, 5, 9}) {
    for (bool mapped : {false, true}) {
      SCOPED_TRACE("ranks " + std::to_string(n) + (mapped ? ", mapped" : ""));
      runMixedSequence(n, 70001, 8 * 64 * static_cast<size_t>(n), SIZE_MAX, mapped);
      runMixedSequence(n, 5003, size_t{64} << 10, SIZE_MAX, mapped);
    }
  }
  gShared = false;
}

// The same with every output written by streaming stores (an output's size decides; 0 is
// every size), at counts whose pieces start and end off the stores' 16-byte alignment.
TEST(StagedSequence, MixedKindsStreaming) {
  for (int n : {1, 2, 3, 5, 9}) {
    SCOPED_TRACE("ranks " + std::to_string(n));
    for (bool mapped : {false, true}) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{1001}, size_t{70001}})
        runMixedSequence(n, count, 8 * 64 * static_cast<size_t>(n), 0, mapped);
      runMixedSequence(n, 300007, size_t{2} << 20, 0, mapped);
    }
  }
  gShared = false;
}

// Copies staged with ordinary stores and with non-temporal ones, as WEFT_SHM_STAGE_STORES
// forces (under auto, 2 ranks in one thread answer each other's probe late: non-temporal).
TEST(StagedSequence, MixedKindsWithEitherCopyStores) {
  for (auto mode : {TimedChoice::Mode::kFirst, TimedChoice::Mode::kSecond}) {
    for (int n : {2, 3}) {
      SCOPED_TRACE("ranks " + std::to_string(n) +
                   (mode == TimedChoice::Mode::kFirst ? ", ordinary" : ", non-temporal"));
      runMixedSequence(n, 70001, size_t{64} << 10, SIZE_MAX, false, mode);
    }
  }
}

// Progresses one rank's operation on this thread until it is done, yielding while nothing moves;
// what went wrong, if anything.
std::string runToDone(StagedOp& op) {
  bool progressed = false;
  while (!op.done()) {
    Status s = op.progress(&progressed);
    if (!s.ok()) return s.message();
    if (!progressed) std::this_thread::yield();
  }
  return "";
}

// Runs rank 1 on a second thread and rank 0 on this one; each says what went wrong, if anything.
void runTwoRanksOnThreads(const std::function<void(int, std::string*)>& run) {
  std::string failures[2];
  std::thread other(run, 1, &failures[1]);
  run(0, &failures[0]);
  other.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

// Two ranks on two threads, as two processes would run them: each 2-rank call of 256K and up
// first times the round trip between the threads' cores, and stages with the stores that
// says (either, as the threads land); every call's output is exact. Also where one rank was
// told which stores to use: it still answers the other's probe.
class StagedThreads : public ::testing::TestWithParam<TimedChoice::Mode> {};

TEST_P(StagedThreads, TwoRankCallsProbeAndStayExact) {
  const int n = 2;
  const size_t count = 70001;  // int32: 273K per rank
  Ranks ranks(n, size_t{256} << 10);
  ranks.groups[1]->setStagingStoresMode(GetParam());
  const CollKind kinds[] = {CollKind::kAllGather, CollKind::kAllToAll, CollKind::kBroadcast,
                            CollKind::kAllReduce};
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  std::vector<Buf> in(n), out(n, Buf(count * n, 0));
  for (int r = 0; r < n; ++r)
    in[r] = inputs(r, count * n);
  auto run = [&](int r, std::string* failure) {
    for (int call = 0; call < 40; ++call) {
      const CollKind kind = kinds[call % 4];
      std::fill(out[r].begin(), out[r].end(), -1);
      ranks.start(r, kind, count, call % 2, in[r].data(), out[r].data(), sum);
      *failure = runToDone(ranks.ops[r]);
      if (!failure->empty()) return;
      const bool one = kind == CollKind::kBroadcast || kind == CollKind::kAllReduce;
      const size_t size = one ? count : count * n;
      for (size_t i = 0; i < size; ++i) {
        int32_t want = 0;
        if (kind == CollKind::kBroadcast)
          want = input(call % 2, i);
        else if (kind == CollKind::kAllReduce)
          want = sumAt(n, i);
        else if (kind == CollKind::kAllGather)
          want = input(static_cast<int>(i / count), i % count);
        else
          want = input(static_cast<int>(i / count), r * count + i % count);
        if (out[r][i] != want) {
          *failure = std::string(collName(kind)) + ", call " + std::to_string(call) + ", element " +
                     std::to_string(i);
          return;
        }
      }
    }
  };
  runTwoRanksOnThreads(run);
}
INSTANTIATE_TEST_SUITE_P(RankOneStores, StagedThreads,
                         ::testing::Values(TimedChoice::Mode::kAuto, TimedChoice::Mode::kFirst,
                                           TimedChoice::Mode::kSecond));

// Two ranks on two threads that, once a pass moves nothing, sleep on their doorbells as the
// runner does when ranks share a core: every write a peer waits for must ring it, the probe's
// rounds included (they did not, and a 2-rank call of 256K and up then slept through each round
// until the doorbell's timeout: 1-5 ms a call with both ranks on one CPU). A wait that needs
// its timeout fails the test.
TEST(StagedThreads, RanksThatSleepUntilRungFinishEveryCall) {
  const int n = 2;
  const size_t count = 70001;  // int32: 273K per rank, so each call probes first
  Ranks ranks(n, size_t{256} << 10);
  Doorbell bells[n];
  for (int r = 0; r < n; ++r)
    ranks.areas[r].doorbell = &bells[r];
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  std::vector<Buf> in(n), out(n, Buf(count * n, 0));
  for (int r = 0; r < n; ++r)
    in[r] = inputs(r, count * n);
  constexpr auto kTimeout = std::chrono::seconds(2);
  auto run = [&](int r, std::string* failure) {
    for (int call = 0; call < 10 && failure->empty(); ++call) {
      ranks.start(r, CollKind::kAllGather, count, 0, in[r].data(), out[r].data(), sum);
      // Passes while anything moves; then arm, look once more, and sleep until rung.
      bool progressed = true;
      uint32_t armed = 0;
      while (!ranks.ops[r].done()) {
        const bool wasIdle = !progressed;
        if (wasIdle) armed = bells[r].arm();
        Status s = ranks.ops[r].progress(&progressed);
        if (!s.ok()) {
          *failure = s.message();
          return;
        }
        if (!wasIdle) continue;
        const auto slept = std::chrono::steady_clock::now();
        if (!progressed && !ranks.ops[r].done()) bells[r].wait(armed, 2'000'000);
        bells[r].disarm();
        progressed = false;
        if (std::chrono::steady_clock::now() - slept >= kTimeout) {
          *failure = "call " + std::to_string(call) + ": " + ranks.ops[r].describeWait() +
                     ", and nobody rang";
          return;
        }
      }
      for (size_t i = 0; i < count * n; ++i) {
        if (out[r][i] != input(static_cast<int>(i / count), i % count)) {
          *failure = "call " + std::to_string(call) + ", element " + std::to_string(i);
          return;
        }
      }
    }
  };
  runTwoRanksOnThreads(run);
}

// The same on two threads, calls switching between halves and whole chunks as the first rank's
// verdict alternates, in place and not, through the same staging areas: each call exact.
TEST(StagedThreads, TwoRankAllReducesSwitchBetweenHalvesAndWhole) {
  const int n = 2;
  const size_t count = StagedOp::kHalvesMinBytes / sizeof(int32_t) + 4321;
  Ranks ranks(n, size_t{256} << 10);
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  std::vector<Buf> in(n, Buf(count)), out(n, Buf(count));
  auto run = [&](int r, std::string* failure) {
    for (int call = 0; call < 6; ++call) {
      const bool far = call % 3 == 1;
      const bool inPlace = call % 2 == 1;
      if (r == 0) ranks.groups[0]->setProbeVerdict(far);
      in[r] = inputs(r, count, static_cast<size_t>(call));
      std::fill(out[r].begin(), out[r].end(), -7);
      int32_t* result = inPlace ? in[r].data() : out[r].data();
      ranks.start(r, CollKind::kAllReduce, count, 0, in[r].data(), result, sum);
      *failure = runToDone(ranks.ops[r]);
      if (!failure->empty()) return;
      if (ranks.ops[r].combinesByHalves() == far) {
        *failure = "call " + std::to_string(call) + ": halves " +
                   std::to_string(ranks.ops[r].combinesByHalves()) + " where far " +
                   std::to_string(far);
        return;
      }
      for (size_t i = 0; i < count; ++i) {
        if (result[i] != sumAt(n, i + static_cast<size_t>(call))) {
          *failure = "call " + std::to_string(call) + ", element " + std::to_string(i);
          return;
        }
      }
    }
  };
  runTwoRanksOnThreads(run);
}

// One rank whose buffers are on the heap makes every rank stage, whichever posts first; the
// others wait to see its post before they choose.
TEST(StagedMapped, OneRankOffTheMappedMemoryStagesEveryone) {
  const int n = 4;
  const size_t count = 100003;
  Ranks ranks(n, 64 << 10);
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  for (int heapRank : {0, n - 1}) {
    std::vector<Buf> in(n), out(n);
    for (int r = 0; r < n; ++r) {
      gShared = r != heapRank;
      in[r] = inputs(r, count);
      out[r] = Buf(count, -7);
    }
    for (int r = 0; r < n; ++r)
      ranks.start(r, CollKind::kAllReduce, count, 0, in[r].data(), out[r].data(), sum);
    gShared = false;  // what finish() expects: staged
    ASSERT_TRUE(ranks.finish().ok()) << "heap rank " << heapRank;
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(out[r][i], sumAt(n, i)) << "heap rank " << heapRank << ", rank " << r;
    }
  }
}

// Floats reduced in different orders differ in their last bits; each sub-slice is reduced by one
// rank only, so every rank gets the same bits.
TEST(StagedFloats, EveryRankGetsTheSameBits) {
  const int n = 5;
  const size_t count = 100003;
  Ranks ranks(n, 64 << 10);
  std::vector<std::vector<float>> in(n, std::vector<float>(count)),
      out(n, std::vector<float>(count));
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i)
      in[r][i] = 1.0f / static_cast<float>(1 + (i * 7 + static_cast<size_t>(r) * 13) % 101);
  }
  for (int r = 0; r < n; ++r) {
    CollArgs a;
    a.kind = CollKind::kAllReduce;
    a.count = count;
    a.rank = r;
    a.nranks = n;
    ranks.ops[r].start(ranks.groups[r].get(), a, in[r].data(), out[r].data(), sizeof(float),
                       reduceFunction(weftFloat32, weftSum), 1, SIZE_MAX);
  }
  ASSERT_TRUE(ranks.finish().ok());
  for (int r = 1; r < n; ++r) {
    // The bits are the point: no NaNs here, and a value compare would take -0 for +0.
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
    EXPECT_EQ(memcmp(out[r].data(), out[0].data(), count * sizeof(float)), 0) << "rank " << r;
  }
  for (size_t i = 0; i < count; i += 997) {
    double expected = 0;
    for (int r = 0; r < n; ++r)
      expected += in[r][i];
    EXPECT_NEAR(out[0][i], expected, 1e-5) << i;
  }
}

// Two ranks each reduce every element (StagedOp::Combining::kEveryWhole). A sum of two NaNs keeps
// one's payload, and which one depends on the loop that runs: in place too, and with buffers
// aligned differently (rank 1's start 4 bytes later), both must run the same. Chunks of 1K, and
// of 128K, which an in-place call reduces in several pieces.
class StagedNaN : public ::testing::TestWithParam<size_t> {};

TEST_P(StagedNaN, TwoRanksThatBothCombineGetTheSameNaN) {
  const size_t count = 20011;
  Ranks ranks(2, GetParam());
  std::vector<std::vector<uint32_t>> in(2, std::vector<uint32_t>(count + 1)),
      out(2, std::vector<uint32_t>(count + 1));
  for (bool inPlace : {false, true}) {
    for (int r = 0; r < 2; ++r) {
      for (size_t i = 0; i < count; ++i) {
        in[r][r + i] =
            0x7fc00000u | (static_cast<uint32_t>(r + 1) << 12) | static_cast<uint32_t>(i % 4093);
      }
    }
    for (int r = 0; r < 2; ++r) {
      uint32_t* send = in[r].data() + r;
      uint32_t* recv = inPlace ? send : out[r].data() + r;
      ranks.ops[r].start(
          ranks.groups[r].get(), test::collArgs(CollKind::kAllReduce, count, 0, r, 2), send, recv,
          sizeof(float), reduceFunction(weftFloat32, weftSum), inPlace ? 2 : 1, SIZE_MAX);
    }
    ASSERT_TRUE(ranks.finish().ok());
    const auto& got = inPlace ? in : out;
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(got[1][1 + i], got[0][i]) << (inPlace ? "in place, " : "") << "element " << i;
      ASSERT_EQ(got[0][i] & 0x7f800000u, 0x7f800000u) << "not a NaN at " << i;
      ASSERT_NE(got[0][i] & 0x7fffffu, 0u) << "not a NaN at " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(StagingBytes, StagedNaN, ::testing::Values(8u << 10, 1u << 20));

// Each kind times its own calls, so the stores it stages with follow its own timings alone
// (what suits an all_reduce need not suit a reduce_scatter or an all_to_all). Every call is
// timed but each kind's first, which faults its buffers in.
TEST(StagedTiming, EachKindTimesOnlyItsOwnCalls) {
  const int n = 3;  // 2 ranks probe the cores' distance instead
  const size_t count = TimedChoice::kMinBytes / sizeof(int32_t);
  const CollKind kinds[] = {CollKind::kAllReduce, CollKind::kReduce,    CollKind::kReduceScatter,
                            CollKind::kAllGather, CollKind::kBroadcast, CollKind::kAllToAll};
  Ranks ranks(n, 64 << 10);
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  std::vector<Buf> in(n), out(n, Buf(count * n, 0));
  for (int r = 0; r < n; ++r)
    in[r] = inputs(r, count * n);
  auto timed = [&](int r, CollKind kind) {
    return ranks.groups[r]->stagingStores(kind).timedCalls();
  };
  for (CollKind kind : kinds) {
    SCOPED_TRACE(collName(kind));
    std::vector<std::vector<uint64_t>> before(n);
    for (int r = 0; r < n; ++r) {
      for (CollKind k : kinds)
        before[r].push_back(timed(r, k));
    }
    for (int call = 0; call < 3; ++call) {
      for (int r = 0; r < n; ++r)
        ranks.start(r, kind, count, 0, in[r].data(), out[r].data(), sum);
      ASSERT_TRUE(ranks.finish().ok());
    }
    for (int r = 0; r < n; ++r) {
      for (size_t k = 0; k < std::size(kinds); ++k) {
        EXPECT_EQ(timed(r, kinds[k]), before[r][k] + (kinds[k] == kind ? 2 : 0))
            << "rank " << r << ", the stores of " << collName(kinds[k]);
      }
    }
  }
}

// Ranks that called with other arguments find out before reading each other's chunks.
TEST(StagedErrors, MismatchedCallsFail) {
  Ranks ranks(2, 64 << 10);
  std::vector<int32_t> a(5000), b(5000), c(5000), d(5000);
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  ranks.start(0, CollKind::kAllReduce, 5000, 0, a.data(), b.data(), sum, 1);
  ranks.start(1, CollKind::kAllReduce, 5000, 0, c.data(), d.data(), sum, 2);
  Status s = ranks.finish();
  EXPECT_EQ(s.code(), weftInvalidUsage) << s.message();
  EXPECT_NE(s.message().find(" where rank "), std::string::npos) << s.message();
}

// The same where one rank's call is large enough to probe the cores' distance first and the
// other's is not: the probe does not wait for an answer that will never come.
TEST(StagedErrors, MismatchedProbingCallsFail) {
  Ranks ranks(2, 64 << 10);
  const size_t count = TimedChoice::kMinBytes / sizeof(int32_t);
  std::vector<int32_t> a(2 * count), b(2 * count), c(2 * count), d(2 * count);
  ranks.start(0, CollKind::kAllGather, count, 0, a.data(), b.data(), nullptr, 1);
  ranks.start(1, CollKind::kAllGather, count / 2, 0, c.data(), d.data(), nullptr, 2);
  // Rank 1 finds out on its own; rank 0, the one probing, must too.
  bool progressed = false;
  Status s;
  for (int pass = 0; pass < 100 && s.ok(); ++pass) {
    (void)ranks.ops[1].progress(&progressed);
    s = ranks.ops[0].progress(&progressed);
  }
  EXPECT_EQ(s.code(), weftInvalidUsage) << s.message();
}

// A rank that has not started yet holds the others at the first chunk they need from it, and
// says so.
TEST(StagedErrors, WaitingNamesTheRankAndStage) {
  Ranks ranks(3, 64 << 10);
  std::vector<Buf> in(3, Buf(50000, 1)), out(3, in[0]);
  ReduceFn sum = reduceFunction(weftInt32, weftSum);
  for (int r = 0; r < 2; ++r)
    ranks.start(r, CollKind::kAllReduce, 50000, 0, in[r].data(), out[r].data(), sum);
  bool progressed = false;
  for (int pass = 0; pass < 10; ++pass) {
    for (int r = 0; r < 2; ++r)
      ASSERT_TRUE(ranks.ops[r].progress(&progressed).ok());
  }
  EXPECT_FALSE(ranks.ops[0].done());
  EXPECT_NE(ranks.ops[0].describeWait().find("rank 2"), std::string::npos)
      << ranks.ops[0].describeWait();
  // Only the rank it waits for is checked for liveness: rank 1 may finish and leave first.
  EXPECT_EQ(ranks.ops[0].pendingPeers(), (std::vector<int>{2}));
  ranks.start(2, CollKind::kAllReduce, 50000, 0, in[2].data(), out[2].data(), sum);
  ASSERT_TRUE(ranks.finish().ok());
  EXPECT_EQ(out[1], Buf(50000, 3));
}

}  // namespace
}  // namespace weft
