// CoreProbe between two threads on heap-allocated flags: many probes in a row, alternating slot
// parity as operations do, each finishing on both sides with a time; and a peer that comes
// late to the probe does not make it say far.
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

TEST(CoreProbe, TwoThreadsFinishEveryProbeOfManyInARow) {
  test::StagedRanks ranks(2, 64 << 10);
  constexpr uint64_t kProbes = 300;
  std::vector<std::vector<double>> nanos(2);
  auto run = [&](int r) {
    CoreProbe probe;
    for (uint64_t sequence = 1; sequence <= kProbes; ++sequence) {
      probe.begin(*ranks.groups[r], sequence);
      finish(&probe);
      nanos[r].push_back(probe.nanos());
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
  // Each rank's counters end at the last round of the last probe of their parity.
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ranks.controls[r]->probe[kProbes % 2].value.load(),
              kProbes * CoreProbe::kRounds + CoreProbe::kRounds);
    EXPECT_EQ(ranks.controls[r]->probe[(kProbes - 1) % 2].value.load(),
              (kProbes - 1) * CoreProbe::kRounds + CoreProbe::kRounds);
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
