// CoreProbe between two threads on heap-allocated flags: many probes in a row, alternating slot
// parity as operations do, each finishing on both sides with a time and one verdict; and a peer
// that comes late to the probe does not make it say far.
#include "collectives/core_probe.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/collectives/staged_ranks.h"

namespace weft {
namespace {

// Polls until the probe is done, yielding between polls as the progress loop would.
void finish(CoreProbe* probe) {
  bool wrote = false;
  while (!probe->poll(&wrote))
    std::this_thread::yield();
}

TEST(CoreProbe, TwoThreadsFinishEveryProbeOfManyInARowAndAgree) {
  test::StagedRanks ranks(2, 64 << 10);
  constexpr uint64_t kProbes = 300;
  std::vector<std::vector<double>> nanos(2);
  std::vector<std::vector<bool>> far(2);
  auto run = [&](int r) {
    CoreProbe probe;
    for (uint64_t sequence = 1; sequence <= kProbes; ++sequence) {
      probe.begin(*ranks.groups[r], sequence);
      finish(&probe);
      nanos[r].push_back(probe.nanos());
      far[r].push_back(probe.far());
    }
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(nanos[r].size(), kProbes) << "rank " << r;
    for (double ns : nanos[r])
      EXPECT_GT(ns, 0) << "rank " << r;
  }
  // Both take the first rank's verdict, which its own time gave.
  for (size_t i = 0; i < kProbes; ++i) {
    EXPECT_EQ(far[0][i], far[1][i]) << "probe " << i + 1;
    EXPECT_EQ(far[0][i], nanos[0][i] >= CoreProbe::kFarNanos) << "probe " << i + 1;
  }
  // Each parity's counters end at the last probe of that parity: the second rank's at its last
  // echo, the first rank's at its verdict.
  for (uint64_t sequence : {kProbes, kProbes - 1}) {
    const uint64_t base = sequence * CoreProbe::kValuesPerProbe;
    const int verdict = far[0][sequence - 1] ? CoreProbe::kFarVerdict : CoreProbe::kNearVerdict;
    EXPECT_EQ(ranks.controls[0]->probe[sequence % 2].value.load(), base + verdict);
    EXPECT_EQ(ranks.controls[1]->probe[sequence % 2].value.load(), base + CoreProbe::kRounds);
  }
}

// A rank that comes late to the call is not taken to be far away: the round that waits for it
// is not timed, and the leader's wait here is 50 ms.
TEST(CoreProbe, APeerThatComesLateIsNotFar) {
  test::StagedRanks ranks(2, 64 << 10);
  CoreProbe leader, follower;
  leader.begin(*ranks.groups[0], 7);
  bool wrote = true;
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(leader.poll(&wrote));
    EXPECT_FALSE(wrote);  // nothing new for the peer until it answers
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::thread other([&] {
    follower.begin(*ranks.groups[1], 7);
    finish(&follower);
  });
  finish(&leader);
  other.join();
  EXPECT_GT(leader.nanos(), 0);
  EXPECT_LT(leader.nanos(), 5e6);  // far above a round trip, far below the wait
  EXPECT_GT(follower.nanos(), 0);
  EXPECT_LT(follower.nanos(), 5e6);
}

}  // namespace
}  // namespace weft
