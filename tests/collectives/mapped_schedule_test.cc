// The mapped path's schedules through the schedule simulator, checked against the harness's
// reference, and the simulator's checks of memory steps: a schedule that reads a peer's buffers
// before the peer starts, or writes them after it ends, fails.
#include "collectives/mapped_schedule.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/simulator.h"
#include "harness.h"

namespace weft::test {
namespace {

size_t elemSizeOf(weftDataType_t type) {
  return type == weftFloat64 ? 8 : 4;
}

// How a test cuts a correct mapped schedule, to show that the simulator catches the result.
enum class Cut { kNone, kFirstBarrier, kLastBarrier };

Case mappedCase(CollKind kind, int nranks, size_t count, bool inPlace, bool stream,
                size_t pieceCount, Cut cut = Cut::kNone) {
  Case c;
  c.kind = kind;
  c.nranks = nranks;
  c.count = count;
  c.root = nranks > 2 ? nranks - 2 : 0;
  c.inPlace = inPlace;
  c.build = [=](const CollArgs& args, const AlgoParams&, Schedule* out) {
    MappedOptions o;
    o.elemSize = elemSizeOf(c.type);
    o.pieceBytes = pieceCount * o.elemSize;
    o.stream = stream;
    // The first barrier is left out by asking for it so: as if the ranks had entered together.
    o.entered = cut == Cut::kFirstBarrier;
    *out = buildMappedSchedule(args, o);
    while (cut == Cut::kLastBarrier && !out->steps.empty() &&
           (out->steps.back().kind == StepKind::kSignal ||
            out->steps.back().kind == StepKind::kWait)) {
      out->steps.pop_back();
    }
    return okStatus();
  };
  return c;
}

// Rank `rank`'s schedule of a 2-rank call of 64 4-byte elements.
Schedule twoRankSchedule(CollKind kind, int rank, bool entered) {
  CollArgs a;
  a.kind = kind;
  a.nranks = 2;
  a.rank = rank;
  a.count = 64;
  MappedOptions o;
  o.elemSize = 4;
  o.entered = entered;
  return buildMappedSchedule(a, o);
}

constexpr CollKind kMappedKinds[] = {CollKind::kBroadcast, CollKind::kReduce,
                                     CollKind::kAllReduce, CollKind::kReduceScatter,
                                     CollKind::kAllGather, CollKind::kAllToAll};

TEST(MappedSchedule, EveryKindRankCountAndLayout) {
  for (CollKind kind : kMappedKinds) {
    for (int n : {1, 2, 3, 4, 5, 7, 8, 13, 16}) {
      for (size_t count : {size_t{1}, size_t{17}, size_t{100}, size_t{257}}) {
        for (bool inPlace : {false, true}) {
          if (inPlace && !supportsInPlace(kind)) continue;
          for (bool stream : {false, true}) {
            Case c = mappedCase(kind, n, count, inPlace, stream, 24);
            c.seed = static_cast<uint64_t>(n) * 1000 + count;
            EXPECT_TRUE(runCase(c)) << describe(c) << (stream ? " stream" : "");
          }
        }
      }
    }
  }
}

// Single copy's configuration: a step a block, however large.
TEST(MappedSchedule, WholeBlocks) {
  for (CollKind kind : kMappedKinds) {
    for (int n : {2, 3, 6}) {
      Case c = mappedCase(kind, n, 1000, supportsInPlace(kind), false, SIZE_MAX / 4);
      EXPECT_TRUE(runCase(c)) << describe(c);
    }
  }
}

TEST(MappedSchedule, ManyRanks) {
  for (CollKind kind : kMappedKinds) {
    for (int n : {33, 64}) {
      Case c = mappedCase(kind, n, 131, supportsInPlace(kind), false, 64);
      EXPECT_TRUE(runCase(c)) << describe(c);
    }
  }
}

TEST(MappedSchedule, TypesAndOperators) {
  for (weftDataType_t type : {weftFloat32, weftFloat64}) {
    for (weftRedOp_t op : {weftSum, weftMax, weftProd}) {
      for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduce, CollKind::kReduceScatter}) {
        Case c = mappedCase(kind, 5, 203, true, true, 40);
        c.type = type;
        c.op = op;
        EXPECT_TRUE(runCase(c)) << describe(c);
      }
    }
  }
}

TEST(MappedSchedule, SeedsGiveDifferentInterleavings) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Case c = mappedCase(CollKind::kAllReduce, 4, 300, true, false, 16);
    c.seed = seed;
    EXPECT_TRUE(runCase(c)) << describe(c);
  }
}

// Without its first barrier, some rank reads a peer's input before the peer has started: the
// simulator's garbage gets into the result. Without its last, some rank returns while a peer
// still reads its input (the garbage gets into the peer's result) or writes its output (the
// simulator finds its buffers changed after it finished).
TEST(MappedSchedule, SimulatorCatchesSchedulesWithoutTheirBarriers) {
  for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduce, CollKind::kBroadcast,
                        CollKind::kAllGather, CollKind::kReduceScatter}) {
    for (Cut cut : {Cut::kFirstBarrier, Cut::kLastBarrier}) {
      int caught = 0;
      for (uint64_t seed = 1; seed <= 20; ++seed) {
        Case c = mappedCase(kind, 4, 300, false, false, 16, cut);
        c.seed = seed;
        if (!runCase(c)) ++caught;
      }
      EXPECT_GT(caught, 0) << collName(kind)
                           << (cut == Cut::kFirstBarrier ? " without its first barrier"
                                                         : " without its last barrier");
    }
  }
}

TEST(MappedSchedule, LateWritesAreNamed) {
  bool named = false;
  for (uint64_t seed = 1; seed <= 20 && !named; ++seed) {
    Case c = mappedCase(CollKind::kAllReduce, 4, 300, false, false, 16, Cut::kLastBarrier);
    c.seed = seed;
    ::testing::AssertionResult r = runCase(c);
    named = !r && std::string(r.message()).find("changed after it finished") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

// A non-root of a reduce adds the root's input on its way into the root's output.
TEST(MappedSchedule, ReduceEndsInTheRootsOutput) {
  const Schedule s = twoRankSchedule(CollKind::kReduce, 1, /*entered=*/true);
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(describeStep(s.steps[0]),
            "reduce 32 elements of send[32] with rank 0's send[32] into its recv[32]");
  EXPECT_EQ(describeStep(s.steps[1]), "signal rank 0");
  EXPECT_EQ(describeStep(s.steps[2]), "wait for a signal from rank 0");
}

TEST(MappedSchedule, StepsSayWhatTheyDo) {
  const Schedule s = twoRankSchedule(CollKind::kAllReduce, 0, /*entered=*/false);
  std::vector<std::string> said;
  for (const Step& step : s.steps)
    said.push_back(describeStep(step));
  const std::vector<std::string> want = {
      "signal rank 1",
      "wait for a signal from rank 1",
      "reduce 32 elements of send[0] with rank 1's send[0] into recv[0]",
      "put 32 elements from recv[0] into rank 1's recv[0]",
      "signal rank 1",
      "wait for a signal from rank 1",
  };
  EXPECT_EQ(said, want);
  EXPECT_TRUE(s.usesMemory());
}

// Two puts into the same place of one peer land in schedule order, however the simulator
// orders the ready steps: memory steps that reach one peer, where one writes, keep their order.
TEST(MemorySteps, PutsToOnePeerKeepTheirOrder) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<int32_t> send0 = {1, 1, 1, 1, 2, 2, 2, 2};
    std::vector<int32_t> recv1(4, 0), recv0(1, 0), send1(1, 0);
    std::vector<Schedule> s(2);
    s[0].memoryWait(1);
    s[0].put(1, {kSendBuf, 0}, {kRecvBuf, 0}, 4);
    s[0].put(1, {kSendBuf, 4}, {kRecvBuf, 0}, 4);
    s[0].memorySignal(1);
    s[1].memorySignal(0);
    s[1].memoryWait(0);
    auto view = [](std::vector<int32_t>& v) {
      return BufferView{reinterpret_cast<char*>(v.data()), v.size(), sizeof(int32_t)};
    };
    const std::vector<std::vector<BufferView>> buffers = {{view(send0), view(recv0)},
                                                          {view(send1), view(recv1)}};
    SimOptions options;
    options.seed = seed;
    const Status st = simulate(s, buffers, nullptr, options);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(recv1, std::vector<int32_t>(4, 2)) << "seed " << seed;
  }
}

// A face that reaches one short buffer of rank 1 and counts the signals it is asked to raise.
class ShortFace : public MemoryFace {
 public:
  explicit ShortFace(std::vector<char>* peer) : peer_(peer) {}
  PeerBuffer buffer(int peer, BufId) override {
    return peer == 1 ? PeerBuffer{peer_->data(), peer_->size()} : PeerBuffer{};
  }
  void signal(int) override { ++signals; }
  bool takeSignal(int) override { return false; }
  bool peerFailed(int) override { return failed; }
  int signals = 0;
  bool failed = false;

 private:
  std::vector<char>* peer_;
};

TEST(MappedSchedule, ExecutorChecksThePeersMemory) {
  std::vector<char> mine(64, 1), theirs(32, 0);
  ShortFace face(&theirs);
  std::vector<BufferView> views = {{mine.data(), 64, 1}, {mine.data(), 64, 1}};
  Schedule s;
  s.put(1, {kSendBuf, 0}, {kRecvBuf, 0}, 48);
  Executor e;
  Status st = e.start(s, views, nullptr, nullptr, 2, nullptr);
  EXPECT_EQ(st.code(), weftInternalError);
  EXPECT_NE(st.message().find("no peer memory"), std::string::npos) << st.message();

  ASSERT_TRUE(e.start(s, views, nullptr, nullptr, 2, &face).ok());
  bool progressed = false;
  st = e.progress(&progressed);
  EXPECT_EQ(st.code(), weftInternalError);
  EXPECT_NE(st.message().find("rank 1's buffer is too short (32 bytes)"), std::string::npos)
      << st.message();
  EXPECT_EQ(theirs, std::vector<char>(32, 0));

  Schedule far;
  far.get(0, {kSendBuf, 0}, {kRecvBuf, 0}, 8);  // rank 0 is out of this face's reach
  ASSERT_TRUE(e.start(far, views, nullptr, nullptr, 2, &face).ok());
  st = e.progress(&progressed);
  EXPECT_NE(st.message().find("out of reach"), std::string::npos) << st.message();

  Schedule waits;
  waits.memorySignal(1);
  waits.memoryWait(1);
  ASSERT_TRUE(e.start(waits, views, nullptr, nullptr, 2, &face).ok());
  ASSERT_TRUE(e.progress(&progressed).ok());
  EXPECT_EQ(face.signals, 1);
  EXPECT_FALSE(e.done());
  EXPECT_EQ(e.describeWait(), "wait for a signal from rank 1 (step 2 of 2)");
  EXPECT_EQ(e.pendingPeers(), std::vector<int>{1});
  EXPECT_EQ(e.signalAwaited(), 1);

  face.failed = true;  // the peer gave up: the wait ends in its error
  st = e.progress(&progressed);
  EXPECT_EQ(st.code(), weftRemoteError);
  EXPECT_NE(st.message().find("rank 1 failed"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace weft::test
