// Single-copy collectives (StagedOp in the single-copy band) for 1..7 virtual ranks in this
// thread: the ranks' flags and staging areas on the heap, every read a real process_vm_readv of
// this process's own memory, and every rank's output checked against plain loops. Operations of
// different kinds follow each other on the same ranks, so the slots alternate and each
// operation waits for the readers of the one before. The decider's post says how all go.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "collectives/single_copy.h"
#include "collectives/staged.h"
#include "tests/collectives/staged_ranks.h"
#include "tests/collectives/virtual_ranks.h"

namespace weft {
namespace {

// Rank r's input element i.
int32_t input(int r, size_t i) {
  return static_cast<int32_t>((r + 1) * 100000 + static_cast<int>(i % 9973)) * (r % 2 ? -1 : 1);
}

std::vector<int32_t> inputs(int r, size_t count) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = input(r, i);
  return v;
}

using Mode = TimedChoice::Mode;

// n ranks of this process, each allowed to read the others, and one operation per rank, every
// call in the single-copy band. Each rank's single-copy choice has `mode` (kSecond: single copy
// whenever it decides).
struct Ranks : test::StagedRanks {
  explicit Ranks(int n, Mode mode = Mode::kSecond) : StagedRanks(n, 64 << 10) {
    for (int r = 0; r < n; ++r)
      setMode(r, mode);
  }

  void setMode(int r, Mode mode) {
    for (CollKind kind : {CollKind::kAllGather, CollKind::kBroadcast, CollKind::kAllToAll})
      groups[r]->singleCopyChoice(kind) =
          TimedChoice(mode, "band", "staged", "single copy", kSingleCopyTrial);
  }

  CollArgs args(int r, CollKind kind, size_t count, int root) const {
    return test::collArgs(kind, count, root, r, n());
  }

  void start(int r, CollKind kind, size_t count, int root, const void* send, void* recv,
             uint64_t signature = 42) {
    ops[r].start(groups[r].get(), args(r, kind, count, root), send, recv, sizeof(int32_t), nullptr,
                 signature, SIZE_MAX, StagedWays{true, true, false});
  }

  // Runs every rank's operation to the end; all must have gone single copy, or none.
  Status finish(bool singleCopy = true) {
    WEFT_RETURN_IF_ERROR(test::progressUntilDone(ops, 100000));
    for (const StagedOp& op : ops) {
      if (op.wentSingleCopy() != singleCopy) return Status(weftInternalError, "the wrong path");
    }
    return okStatus();
  }
};

void allToAll(Ranks& ranks, size_t count) {
  const int n = ranks.n();
  const size_t total = count * static_cast<size_t>(n);
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(total, -1));
  for (int r = 0; r < n; ++r) {
    in[r] = inputs(r, total);
    ranks.start(r, CollKind::kAllToAll, count, 0, in[r].data(), out[r].data());
  }
  ASSERT_TRUE(ranks.finish().ok());
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < total; ++i) {
      ASSERT_EQ(out[r][i], input(static_cast<int>(i / count), r * count + i % count))
          << "all_to_all: rank " << r << ", element " << i;
    }
  }
}

void allGather(Ranks& ranks, size_t count, bool inPlace) {
  const int n = ranks.n();
  const size_t total = count * static_cast<size_t>(n);
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(total, -1));
  for (int r = 0; r < n; ++r) {
    in[r] = inputs(r, count);
    int32_t* own = out[r].data() + static_cast<size_t>(r) * count;
    if (inPlace) memcpy(own, in[r].data(), count * sizeof(int32_t));
    ranks.start(r, CollKind::kAllGather, count, 0, inPlace ? own : in[r].data(), out[r].data());
  }
  ASSERT_TRUE(ranks.finish().ok());
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < total; ++i) {
      ASSERT_EQ(out[r][i], input(static_cast<int>(i / count), i % count))
          << "all_gather: rank " << r << ", element " << i;
    }
  }
}

void broadcast(Ranks& ranks, size_t count, int root, bool inPlace) {
  const int n = ranks.n();
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(count, -1));
  for (int r = 0; r < n; ++r) {
    in[r] = inputs(r, count);
    if (inPlace && r == root) out[r] = in[r];
    const void* send = r != root ? nullptr : inPlace ? out[r].data() : in[r].data();
    ranks.start(r, CollKind::kBroadcast, count, root, send, out[r].data());
  }
  ASSERT_TRUE(ranks.finish().ok());
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(out[r], in[root]) << "broadcast from " << root << ": rank " << r;
}

TEST(SingleCopy, EveryKindInSequence) {
  for (int n = 1; n <= 7; ++n) {
    Ranks ranks(n);
    for (size_t count : {size_t{1}, size_t{13}, size_t{40009}}) {
      SCOPED_TRACE(std::to_string(n) + " ranks, count " + std::to_string(count));
      allToAll(ranks, count);
      allGather(ranks, count, false);
      allGather(ranks, count, true);
      for (int root = 0; root < n; ++root)
        broadcast(ranks, count, root, root % 2 == 1);
    }
  }
}

TEST(SingleCopy, CoversOnlyReadableGroupsKindsAndSizes) {
  Ranks ranks(3);
  const DirectGroup& g = *ranks.groups[0];
  const size_t mib = size_t{1} << 20;
  auto covers = [&](const DirectGroup& group, CollKind kind, size_t count, size_t minBytes,
                    size_t maxBytes) {
    SingleCopyLimits limits;
    EXPECT_TRUE(
        SingleCopyLimits::parse("allgather,broadcast,all_to_all", minBytes, maxBytes, 0, &limits)
            .ok());
    return limits.covers(group, ranks.args(0, kind, count, 0), 4);
  };
  EXPECT_TRUE(covers(g, CollKind::kAllToAll, mib / 4, mib, 0));
  EXPECT_TRUE(covers(g, CollKind::kAllGather, mib / 4, mib, 0));
  EXPECT_TRUE(covers(g, CollKind::kBroadcast, mib / 4, mib, 0));
  EXPECT_FALSE(covers(g, CollKind::kAllToAll, mib / 4 - 1, mib, 0));
  EXPECT_FALSE(covers(g, CollKind::kAllToAll, mib, 0, 0));
  // The upper limit, per peer as the lower one.
  EXPECT_TRUE(covers(g, CollKind::kAllGather, mib / 2, mib, 2 * mib));
  EXPECT_FALSE(covers(g, CollKind::kAllGather, mib / 2 + 1, mib, 2 * mib));
  for (CollKind k : {CollKind::kAllReduce, CollKind::kReduce, CollKind::kReduceScatter})
    EXPECT_FALSE(covers(g, k, mib, mib, 0)) << collName(k);
  // Only the kinds listed.
  SingleCopyLimits gatherOnly;
  ASSERT_TRUE(SingleCopyLimits::parse(" AllGather ", mib, 0, 0, &gatherOnly).ok());
  EXPECT_TRUE(gatherOnly.covers(g, ranks.args(0, CollKind::kAllGather, mib, 0), 4));
  EXPECT_FALSE(gatherOnly.covers(g, ranks.args(0, CollKind::kBroadcast, mib, 0), 4));
  SingleCopyLimits none;
  ASSERT_TRUE(SingleCopyLimits::parse("", mib, 0, 0, &none).ok());
  EXPECT_FALSE(none.covers(g, ranks.args(0, CollKind::kAllGather, mib, 0), 4));
  SingleCopyLimits bad;
  Status s = SingleCopyLimits::parse("allgather,allreduce", mib, 0, 0, &bad);
  EXPECT_EQ(s.code(), weftInvalidArgument);
  EXPECT_NE(s.message().find("'allreduce' is not allgather, broadcast or alltoall"),
            std::string::npos)
      << s.message();
  // Communicators of more ranks than the limit stage (these have 3).
  SingleCopyLimits twoRanks;
  ASSERT_TRUE(SingleCopyLimits::parse("allgather", mib, 0, 2, &twoRanks).ok());
  EXPECT_FALSE(twoRanks.covers(g, ranks.args(0, CollKind::kAllGather, mib, 0), 4));
  twoRanks.maxRanks = 3;
  EXPECT_TRUE(twoRanks.covers(g, ranks.args(0, CollKind::kAllGather, mib, 0), 4));
  // One rank that may not read the others turns it off for all.
  ranks.owners[2]->readsPeers.store(0);
  DirectGroup without(0, {&ranks.areas[0], &ranks.areas[1], &ranks.areas[2]});
  EXPECT_FALSE(without.singleCopy());
  EXPECT_FALSE(covers(without, CollKind::kAllToAll, mib / 4, mib, 0));
}

// Each rank returns only once every rank reading its input is done: a rank that has not read
// yet holds the others, and they say whom they wait for.
TEST(SingleCopy, InputsStayPutUntilTheirReadersAreDone) {
  Ranks ranks(3);
  const size_t count = 1000;
  std::vector<std::vector<int32_t>> in(3), out(3, std::vector<int32_t>(3 * count));
  for (int r = 0; r < 3; ++r) {
    in[r] = inputs(r, count);
    ranks.start(r, CollKind::kAllGather, count, 0, in[r].data(), out[r].data());
  }
  bool progressed = false;
  for (int pass = 0; pass < 10; ++pass) {
    for (int r = 0; r < 2; ++r)
      ASSERT_TRUE(ranks.ops[r].progress(&progressed).ok());
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(ranks.ops[r].done());
    EXPECT_NE(ranks.ops[r].describeWait().find("rank 2 to start"), std::string::npos)
        << ranks.ops[r].describeWait();
  }
  // Rank 2 posts and reads; the others read it, and rank 2 then waits for nobody else.
  ASSERT_TRUE(ranks.finish().ok());
  for (int r = 0; r < 3; ++r) {
    for (size_t i = 0; i < 3 * count; ++i)
      ASSERT_EQ(out[r][i], input(static_cast<int>(i / count), i % count));
  }
}

// Every rank waits for all to post, then a reader returns once it has read, and the root only
// once every reader has.
TEST(SingleCopy, ARootWaitsForEveryReader) {
  Ranks ranks(3);
  std::vector<int32_t> in = inputs(0, 500), out0(500), out1(500), out2(500);
  ranks.start(0, CollKind::kBroadcast, 500, 0, in.data(), out0.data());
  ranks.start(1, CollKind::kBroadcast, 500, 0, nullptr, out1.data());
  ranks.start(2, CollKind::kBroadcast, 500, 0, nullptr, out2.data());
  bool progressed = false;
  for (int r : {0, 2, 1, 0})
    ASSERT_TRUE(ranks.ops[r].progress(&progressed).ok());
  EXPECT_TRUE(ranks.ops[1].done());  // nobody reads a non-root
  EXPECT_FALSE(ranks.ops[2].done());
  EXPECT_FALSE(ranks.ops[0].done());
  EXPECT_NE(
      ranks.ops[0].describeWait().find("waiting for rank 2 to finish with this rank's buffers"),
      std::string::npos)
      << ranks.ops[0].describeWait();
  EXPECT_EQ(ranks.ops[0].pendingPeers(), (std::vector<int>{2}));
  ASSERT_TRUE(ranks.finish().ok());
  EXPECT_EQ(out1, in);
  EXPECT_EQ(out2, in);
}

// Whatever the others would choose, the decider's post decides for all: rank 0, or the rank
// after a broadcast's root.
TEST(SingleCopy, TheDeciderChoosesForAll) {
  Ranks ranks(3, Mode::kSecond);
  ranks.setMode(0, Mode::kFirst);  // rank 0 stages
  const size_t count = 40009;
  std::vector<std::vector<int32_t>> in(3), out(3, std::vector<int32_t>(3 * count, -1));
  for (int r = 0; r < 3; ++r) {
    in[r] = inputs(r, count);
    ranks.start(r, CollKind::kAllGather, count, 0, in[r].data(), out[r].data());
  }
  ASSERT_TRUE(ranks.finish(false).ok());
  for (int r = 0; r < 3; ++r) {
    for (size_t i = 0; i < 3 * count; ++i)
      ASSERT_EQ(out[r][i], input(static_cast<int>(i / count), i % count)) << "rank " << r;
  }
  // A broadcast from rank 1, which rank 2 sends single copy, and one from rank 2, which rank 0
  // stages.
  for (int root : {1, 2}) {
    for (int r = 0; r < 3; ++r) {
      out[r].assign(count, -1);
      ranks.start(r, CollKind::kBroadcast, count, root, r == root ? in[r].data() : nullptr,
                  out[r].data());
    }
    ASSERT_TRUE(ranks.finish(root == 1).ok()) << "root " << root;
    for (int r = 0; r < 3; ++r)
      ASSERT_EQ(out[r], in[root]) << "root " << root << ", rank " << r;
  }
}

// Left to choose, the decider stages at first and tries single copy from the fourth call of a
// size (the first is not timed; the fourth is the third timed one) for kSingleCopyTrial's
// warm-ups and compared calls, whatever the times. Its 2 ranks' staged calls probe the cores'
// distance, as outside the band.
TEST(SingleCopy, AutoTriesSingleCopyFromTheFourthCall) {
  Ranks ranks(2, Mode::kAuto);
  const size_t count = TimedChoice::kMinBytes / sizeof(int32_t);
  const int lastTry = 3 + kSingleCopyTrial.warmups + kSingleCopyTrial.compared;
  for (int call = 1; call <= lastTry; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<std::vector<int32_t>> in(2), out(2, std::vector<int32_t>(2 * count, -1));
    for (int r = 0; r < 2; ++r) {
      in[r] = inputs(r, count);
      ranks.start(r, CollKind::kAllGather, count, 0, in[r].data(), out[r].data());
    }
    ASSERT_TRUE(ranks.finish(call >= 4).ok());
    EXPECT_TRUE(ranks.groups[0]->coresFar().has_value());
    for (int r = 0; r < 2; ++r) {
      for (size_t i = 0; i < 2 * count; ++i)
        ASSERT_EQ(out[r][i], input(static_cast<int>(i / count), i % count)) << "rank " << r;
    }
  }
}

TEST(SingleCopyErrors, MismatchedCallsFail) {
  Ranks ranks(2);
  std::vector<int32_t> a(2000), b(4000), c(2000), d(4000);
  ranks.start(0, CollKind::kAllGather, 2000, 0, a.data(), b.data(), 1);
  ranks.start(1, CollKind::kAllGather, 2000, 0, c.data(), d.data(), 2);
  Status s = ranks.finish();
  EXPECT_EQ(s.code(), weftInvalidUsage) << s.message();
  EXPECT_NE(s.message().find(" where rank "), std::string::npos) << s.message();
}

// Two ranks in a broadcast from rank 0, which has posted its input; unmapInput() then makes
// the posted address one that is never mapped (page 1), and readInput() is rank 1's next step.
struct PostedBroadcast {
  PostedBroadcast() {
    ranks.start(0, CollKind::kBroadcast, 1000, 0, in.data(), out0.data());
    ranks.start(1, CollKind::kBroadcast, 1000, 0, nullptr, out1.data());
    bool progressed = false;
    posted = ranks.ops[0].progress(&progressed).ok();
  }
  void unmapInput() {
    const uint64_t unmapped = 4096;
    for (SlotPost& p : ranks.controls[0]->posted) {
      memcpy(p.inlineData + offsetof(StagedOp::Post, singleCopyInput), &unmapped, sizeof(unmapped));
    }
  }
  Status readInput() {
    bool progressed = false;
    return ranks.ops[1].progress(&progressed);
  }

  Ranks ranks{2};
  std::vector<int32_t> in = inputs(0, 1000), out0 = std::vector<int32_t>(1000),
                       out1 = std::vector<int32_t>(1000);
  bool posted = false;
};

// A peer whose posted input is not mapped (as a count larger than its buffer would be, where
// the buffer ends) gives an error naming the rank, not a crash.
TEST(SingleCopyErrors, AnUnmappedInputIsAnError) {
  PostedBroadcast b;
  ASSERT_TRUE(b.posted);
  b.unmapInput();
  Status s = b.readInput();
  EXPECT_EQ(s.code(), weftInvalidUsage) << s.message();
  EXPECT_NE(s.message().find("single copy: get 1000 elements from rank 0"), std::string::npos)
      << s.message();
}

// A peer whose communicator failed may free the input it posted before its readers are done:
// the reader then reports the peer's failure, which is what the caller must handle.
TEST(SingleCopyErrors, AFailedPeersFreedInputIsARemoteError) {
  PostedBroadcast b;
  ASSERT_TRUE(b.posted);
  EXPECT_FALSE(b.ranks.groups[1]->peerFailed(0));
  b.ranks.groups[0]->markFailed();
  EXPECT_TRUE(b.ranks.groups[1]->peerFailed(0));
  b.unmapInput();  // as if rank 0 had freed its input
  Status s = b.readInput();
  EXPECT_EQ(s.code(), weftRemoteError) << s.message();
  EXPECT_NE(s.message().find("rank 0 failed"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace weft
