// The fault suite (label faults): ranks killed or stopped at random moments of a loop of mixed
// collectives, over shm and tcp, at 2 to 4 ranks. Every survivor must return an error within
// WEFT_TIMEOUT + 1 s of the death, name the dead rank, and be freed by weftCommAbort; a stopped
// rank's peers time out, and the stopped rank errors once continued.
//
// The trials are drawn from a fixed seed (WEFT_FAULT_SEED overrides it, to look further), in
// shards that ctest runs side by side.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

using Clock = std::chrono::system_clock;  // shared by the forked ranks

constexpr int kShards = 10;
constexpr int kTrialsPerShard = 10;
constexpr double kTimeoutSec = 2.0;

struct Trial {
  int nranks = 2;
  const char* transport = "shm";
  int victim = 0;
  int delayMs = 0;  // after the first collective
};

Trial drawTrial(std::mt19937& rng) {
  Trial t;
  t.nranks = std::uniform_int_distribution<int>(2, 4)(rng);
  t.transport = std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? "shm" : "tcp";
  t.victim = std::uniform_int_distribution<int>(0, t.nranks - 1)(rng);
  t.delayMs = std::uniform_int_distribution<int>(0, 250)(rng);
  return t;
}

uint32_t baseSeed() {
  const char* s = getenv("WEFT_FAULT_SEED");
  return s != nullptr ? static_cast<uint32_t>(strtoul(s, nullptr, 10)) : 20261129u;
}

// One of the collectives of the loop, chosen by the call's number (the same on every rank).
weftResult_t mixedCall(int i, int nranks, std::vector<float>& a, std::vector<float>& b,
                       weftComm_t comm) {
  static const size_t kCounts[] = {1, 1000, 65536, 1u << 20};
  const size_t count = kCounts[(i / 7) % 4];
  const size_t block = std::max<size_t>(1, count / static_cast<size_t>(nranks));  // fits a and b
  switch (i % 7) {
    case 0:
      return weftAllReduce(a.data(), a.data(), count, weftFloat32, weftSum, comm, nullptr);
    case 1:
      return weftBroadcast(a.data(), a.data(), count, weftFloat32, i % nranks, comm, nullptr);
    case 2:
      return weftAllGather(a.data(), b.data(), block, weftFloat32, comm, nullptr);
    case 3:
      return weftReduceScatter(a.data(), b.data(), block, weftFloat32, weftMax, comm, nullptr);
    case 4:
      return weftAllToAll(a.data(), b.data(), block, weftFloat32, comm, nullptr);
    case 5:
      return weftReduce(a.data(), b.data(), count, weftFloat32, weftSum, i % nranks, comm, nullptr);
    default:
      return weftBarrier(comm, nullptr);
  }
}

// Whether an error message names rank `dead` as the one that went: its exit, or its link or
// connection closing, directly or in the farewell of a rank that saw it first.
bool namesDeadRank(const std::string& message, int dead) {
  const std::string r = std::to_string(dead);
  for (const std::string& phrase : {"rank " + r + " (pid ", "link to rank " + r + " ",
                                    "link to rank " + r + ",", "connection to rank " + r + " "}) {
    if (message.find(phrase) != std::string::npos) return true;
  }
  return false;
}

// Runs the ranks of one trial; a survivor's failed expectations fail the trial.
void runKillTrial(const Trial& t, int number) {
  SCOPED_TRACE(testing::Message() << "trial " << number << ": " << t.nranks << " ranks over "
                                  << t.transport << ", rank " << t.victim << " killed " << t.delayMs
                                  << " ms into the loop");
  const std::vector<float> init(1u << 20, 1.0f);
  auto results = runProcesses(
      t.nranks, {{"WEFT_TRANSPORT", t.transport}, {"WEFT_TIMEOUT", "2"}},
      [&](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        std::vector<float> a = init, b(init.size());
        ASSERT_EQ(mixedCall(0, t.nranks, a, b, comm), weftSuccess) << weftGetLastError(comm);
        const Clock::time_point deathAt = Clock::now() + std::chrono::milliseconds(t.delayMs);
        if (rank == t.victim) {
          std::thread([deathAt] {
            std::this_thread::sleep_until(deathAt);
            raise(SIGKILL);
          }).detach();
        }
        weftResult_t r = weftSuccess;
        for (int i = 1; r == weftSuccess; ++i) {
          r = mixedCall(i, t.nranks, a, b, comm);
        }
        const double late = std::chrono::duration<double>(Clock::now() - deathAt).count();
        const std::string message = weftGetLastError(comm);
        EXPECT_LT(late, kTimeoutSec + 1.0) << message;
        EXPECT_TRUE(r == weftRemoteError || r == weftTimeout) << weftGetErrorString(r);
        EXPECT_TRUE(namesDeadRank(message, t.victim))
            << "rank " << rank << " did not name rank " << t.victim << ": " << message;
        const auto abortStart = Clock::now();
        EXPECT_EQ(weftCommAbort(comm), weftSuccess);
        EXPECT_LT(std::chrono::duration<double>(Clock::now() - abortStart).count(), 1.0);
      },
      60);
  ASSERT_EQ(results.size(), static_cast<size_t>(t.nranks));
  for (const ProcessResult& p : results) {
    if (p.rank == t.victim) {
      EXPECT_EQ(p.signal, SIGKILL) << p.describe();
    } else {
      EXPECT_TRUE(p.ok()) << p.describe();
    }
  }
}

class KilledAtRandom : public ::testing::TestWithParam<int> {};

TEST_P(KilledAtRandom, SurvivorsFailInTimeNamingTheDeadRank) {
  const int shard = GetParam();
  std::mt19937 rng(baseSeed() + static_cast<uint32_t>(shard));
  for (int i = 0; i < kTrialsPerShard; ++i) {
    const Trial t = drawTrial(rng);
    runKillTrial(t, shard * kTrialsPerShard + i);
    if (HasFailure()) return;  // one trial's report is enough to read
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, KilledAtRandom, ::testing::Range(0, kShards));

// Rank 2 of 3 stops (SIGSTOP) in the loop for longer than the timeout: ranks 0 and 1 fail (a
// timeout, or the farewell of the one that timed out first), and rank 0 then continues rank 2,
// whose call fails once it runs again.
TEST(StoppedRank, PeersTimeOutAndTheStoppedRankErrorsOnceContinued) {
  RankFiles pids("stopped-rank");
  auto results = runProcesses(
      3, {{"WEFT_TIMEOUT", "1.5"}},
      [&](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        std::vector<float> a(1u << 20, 1.0f), b(a.size());
        if (rank == 2) {
          std::ofstream(pids.path(2)) << getpid() << "\n";
          std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            raise(SIGSTOP);
          }).detach();
        }
        weftResult_t r = weftSuccess;
        for (int i = 0; r == weftSuccess; ++i) {
          r = mixedCall(i, 3, a, b, comm);
        }
        const std::string message = weftGetLastError(comm);
        // The stopped rank may see its peers' farewells or its own stalled clock first.
        EXPECT_NE(message.find("timed out"), std::string::npos) << message;
        if (rank != 2) {
          EXPECT_TRUE(r == weftTimeout || r == weftRemoteError) << message;
        }
        if (rank == 0) {
          pid_t stopped = 0;
          std::ifstream(pids.path(2)) >> stopped;
          ASSERT_GT(stopped, 0);
          kill(stopped, SIGCONT);
        }
        EXPECT_EQ(weftCommAbort(comm), weftSuccess);
      },
      60);
  pids.take(2);
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
