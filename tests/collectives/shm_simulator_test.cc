// The shared-memory paths through the shm simulator, each by name: direct, staged, mapped (every
// buffer in weftMemAlloc memory) and single copy, for every kind each runs, 1 to 64 virtual
// ranks, odd counts, in place and not, one call after another on the same ranks, every element
// checked against plain loops; staged with weftMemAlloc buffers does not go mapped.
#include "collectives/shm_simulator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/collectives/rank_inputs.h"

namespace weft {
namespace {

// Buffers on the heap, or in weftMemAlloc memory while gShared is true.
using Buf = test::RankBuf;
bool& gShared = test::weftMemAllocInForce();
using test::input;
using test::sumAt;

struct Case {
  ShmPath path;
  int n;
  size_t count;
  bool inPlace;
  bool shared = false;  // every buffer in weftMemAlloc memory
};

// One call of `kind` on every rank, run and checked: the first wrong element, or "".
std::string runAndCheck(ShmSimulator& sim, const Case& c, CollKind kind) {
  const int n = c.n;
  const size_t count = kind == CollKind::kBarrier ? 0 : c.count;
  const int root = n - 1;
  const bool perBlock = kind == CollKind::kReduceScatter || kind == CollKind::kAllToAll;
  const size_t sendCount = perBlock ? count * n : count;
  const size_t recvCount =
      kind == CollKind::kAllGather || kind == CollKind::kAllToAll ? count * n : count;
  std::vector<Buf> in(n), out(n);
  std::vector<CollArgs> args(n);
  std::vector<const void*> send(n);
  std::vector<void*> recv(n);
  const bool inPlace = c.inPlace && kind != CollKind::kAllToAll;
  for (int r = 0; r < n; ++r) {
    args[r].kind = kind;
    args[r].count = count;
    args[r].root = root;
    args[r].rank = r;
    args[r].nranks = n;
    in[r].resize(sendCount);
    for (size_t i = 0; i < sendCount; ++i)
      in[r][i] = input(r, i);
    out[r].assign(std::max(recvCount, sendCount), -7);
    send[r] = in[r].data();
    recv[r] = out[r].data();
    if (!inPlace) continue;
    switch (kind) {
      case CollKind::kAllGather:  // the rank's own block, where the output puts it
        std::copy(in[r].begin(), in[r].end(), out[r].begin() + static_cast<long>(r * count));
        send[r] = out[r].data() + r * count;
        break;
      case CollKind::kReduceScatter:
        recv[r] = in[r].data() + r * count;
        break;
      default:
        recv[r] = in[r].data();
        break;
    }
  }
  Status s = sim.run(c.path, args, send, recv, sizeof(int32_t), reduceFunction(weftInt32, weftSum));
  if (!s.ok()) return s.message();
  if (c.path != ShmPath::kDirect) {
    const bool mapped = c.path == ShmPath::kMapped;
    const bool singleCopy = c.path == ShmPath::kSingleCopy;
    if (sim.wentMapped() != mapped) {
      return std::string(collName(kind)) + (mapped ? " did not go mapped" : " went mapped");
    }
    if (sim.wentSingleCopy() != singleCopy) {
      return std::string(collName(kind)) +
             (singleCopy ? " did not go single copy" : " went single copy");
    }
  }
  for (int r = 0; r < n; ++r) {
    const int32_t* got = static_cast<const int32_t*>(recv[r]);
    if (kind == CollKind::kAllGather) got = inPlace ? out[r].data() : got;
    for (size_t i = 0; i < recvCount; ++i) {
      int32_t want = 0;
      switch (kind) {
        case CollKind::kAllReduce:
          want = sumAt(n, i);
          break;
        case CollKind::kReduce:
          if (r != root) continue;
          want = sumAt(n, i);
          break;
        case CollKind::kReduceScatter:
          want = sumAt(n, r * count + i);
          break;
        case CollKind::kAllGather:
          want = input(static_cast<int>(i / count), i % count);
          break;
        case CollKind::kBroadcast:
          want = input(root, i);
          break;
        case CollKind::kAllToAll:
          want = input(static_cast<int>(i / count), r * count + i % count);
          break;
        default:
          continue;
      }
      if (got[i] != want) {
        return std::string(collName(kind)) + ": rank " + std::to_string(r) + " element " +
               std::to_string(i) + " is " + std::to_string(got[i]) + ", not " +
               std::to_string(want);
      }
    }
  }
  return "";
}

class ShmPaths : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { gShared = GetParam().shared; }
  void TearDown() override { gShared = false; }
};

TEST_P(ShmPaths, EveryKindMatchesTheReference) {
  const Case c = GetParam();
  ShmSimulator::Options options;
  options.slotBytes = size_t{256} << 10;
  ShmSimulator sim(c.n, options);
  std::vector<CollKind> kinds;
  for (CollKind kind :
       {CollKind::kAllReduce, CollKind::kReduce, CollKind::kReduceScatter, CollKind::kAllGather,
        CollKind::kBroadcast, CollKind::kAllToAll, CollKind::kBarrier}) {
    if (shmPathSupports(c.path, kind)) kinds.push_back(kind);
  }
  // Twice through, so that every call starts where the one before left the slots and counters.
  for (int round = 0; round < 2; ++round) {
    for (CollKind kind : kinds)
      ASSERT_EQ(runAndCheck(sim, c, kind), "") << "round " << round;
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (ShmPath path :
       {ShmPath::kDirect, ShmPath::kStaged, ShmPath::kMapped, ShmPath::kSingleCopy}) {
    for (int n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64}) {
      // One rank calls nothing direct, and reads nobody's memory.
      if ((path == ShmPath::kDirect || path == ShmPath::kSingleCopy) && n == 1) continue;
      std::vector<size_t> counts = {1, 7, 333};
      if (n <= 8) counts.push_back(path == ShmPath::kDirect ? 2001 : 70001);
      if (path == ShmPath::kMapped && n > 8) counts = {333};
      for (size_t count : counts) {
        for (bool inPlace : {false, true})
          out.push_back({path, n, count, inPlace, path == ShmPath::kMapped});
      }
      // weftMemAlloc buffers do not take a staged call mapped when only staging is named.
      if (path == ShmPath::kStaged && n <= 8) out.push_back({path, n, 70001, false, true});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, ShmPaths, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           const Case& c = info.param;
                           return std::string(shmPathName(c.path)) + "_np" + std::to_string(c.n) +
                                  "_count" + std::to_string(c.count) +
                                  (c.inPlace ? "_inplace" : "") +
                                  (c.shared && c.path != ShmPath::kMapped ? "_weftmem" : "");
                         });

// Mapped calls keep their executors ready by shape (MappedExecutors): calls that alternate in
// place and out of place, of more shapes than it keeps, each run with the dependencies of
// their own layout.
TEST(ShmSimulator, MappedCallsOfManyShapesAndLayouts) {
  gShared = true;
  ShmSimulator sim(3, {});
  for (int round = 0; round < 2; ++round) {
    for (size_t count : {333, 1000, 1001, 2000, 2001, 3000, 4000, 5000, 6000, 7000}) {
      for (bool inPlace : {false, true}) {
        for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduce, CollKind::kReduceScatter}) {
          ASSERT_EQ(runAndCheck(sim, {ShmPath::kMapped, 3, count, inPlace, true}, kind), "")
              << "count " << count << (inPlace ? " in place" : "");
        }
      }
    }
  }
  gShared = false;
}

// Mapped and single-copy calls share each pair's signal counter, which a signal sets to the
// call's number and a wait compares with its own, and a broadcast signals only its root: calls
// of both ways and of every kind, staged ones in between, one after another on the same ranks,
// each take their own signals (a wrong number would leave a wait waiting, or let it through).
TEST(ShmSimulator, SignalsStayInStepAcrossWaysAndKinds) {
  ShmSimulator sim(4, {});
  for (int round = 0; round < 3; ++round) {
    for (ShmPath path : {ShmPath::kMapped, ShmPath::kSingleCopy, ShmPath::kStaged}) {
      gShared = path == ShmPath::kMapped;
      for (CollKind kind : {CollKind::kBroadcast, CollKind::kAllGather, CollKind::kAllReduce,
                            CollKind::kAllToAll, CollKind::kReduce}) {
        if (!shmPathSupports(path, kind)) continue;
        ASSERT_EQ(runAndCheck(sim, {path, 4, 5000, false, gShared}, kind), "")
            << shmPathName(path) << " round " << round;
      }
    }
  }
  gShared = false;
}

// A call that does not fit its path is refused, not run.
TEST(ShmSimulator, RefusesCallsThatDoNotFit) {
  ShmSimulator sim(2, {});
  std::vector<CollArgs> args(2);
  for (int r = 0; r < 2; ++r) {
    args[r].kind = CollKind::kAllGather;
    args[r].count = 1u << 20;  // 4 MiB a rank: past the 128K slots
    args[r].rank = r;
    args[r].nranks = 2;
  }
  Buf a(1u << 20), b(2u << 20);
  Status s = sim.run(ShmPath::kDirect, args, {a.data(), a.data()}, {b.data(), b.data()},
                     sizeof(int32_t), nullptr);
  EXPECT_EQ(s.code(), weftInvalidArgument);
  EXPECT_NE(s.message().find("does not fit"), std::string::npos) << s.message();
  args[1].rank = 0;
  s = sim.run(ShmPath::kStaged, args, {a.data(), a.data()}, {b.data(), b.data()}, sizeof(int32_t),
              nullptr);
  EXPECT_EQ(s.code(), weftInvalidArgument);
}

}  // namespace
}  // namespace weft
