// Windows and one-sided puts between real processes on this host: every rank lends a part of
// weftMemAlloc memory, puts into its peers' parts and signals, and finds the peers' data once
// their signals arrive; bad calls, a peer that never signals, one that dies, and communicators
// whose ranks do not share memory get clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

constexpr int kRanks = 3;
constexpr size_t kCount = 10007;  // int32 per block: each rank's block in every peer's part

int32_t value(int from, int to, size_t i, int round) {
  return static_cast<int32_t>(from * 1000003 + to * 10007 + static_cast<int>(i) + round * 7);
}

weftComm_t init() {
  weftComm_t comm = nullptr;
  EXPECT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
  return comm;
}

TEST(Windows, PutsReachEveryPeerOnceTheirSignalsDo) {
  expectAllOk(runProcesses(kRanks, {}, [](int rank) {
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    void* part = nullptr;
    const size_t bytes = kRanks * kCount * sizeof(int32_t);
    ASSERT_EQ(weftMemAlloc(&part, bytes), weftSuccess);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftCommWindowRegister(comm, part, bytes, &win, WEFT_WIN_DEFAULT), weftSuccess)
        << weftGetLastError(comm);
    std::vector<int32_t> mine(kCount);
    for (int round = 0; round < 3; ++round) {
      for (int peer = 0; peer < kRanks; ++peer) {
        if (peer == rank) continue;
        for (size_t i = 0; i < kCount; ++i)
          mine[i] = value(rank, peer, i, round);
        // In two halves, each raising signal 0 (every round: the waits count what they took).
        const size_t half = kCount / 2;
        const size_t at = rank * kCount * sizeof(int32_t);
        ASSERT_EQ(
            weftPutSignal(mine.data(), half, weftInt32, peer, win, at, 0, 0, 0, comm, nullptr),
            weftSuccess)
            << weftGetLastError(comm);
        ASSERT_EQ(weftPutSignal(mine.data() + half, kCount - half, weftInt32, peer, win,
                                at + half * sizeof(int32_t), 0, 0, 0, comm, nullptr),
                  weftSuccess)
            << weftGetLastError(comm);
      }
      // Each peer's two raises, as one wait for two or two waits for one.
      std::vector<weftWaitSignalDesc_t> waits;
      for (int peer = 0; peer < kRanks; ++peer) {
        if (peer == rank) continue;
        if (round % 2 == 0) {
          waits.push_back({2, peer, 0, 0});
        } else {
          waits.push_back({1, peer, 0, 0});
          waits.push_back({1, peer, 0, 0});
        }
      }
      ASSERT_EQ(weftWaitSignal(static_cast<int>(waits.size()), waits.data(), win, comm, nullptr),
                weftSuccess)
          << weftGetLastError(comm);
      const auto* got = static_cast<const int32_t*>(part);
      for (int from = 0; from < kRanks; ++from) {
        if (from == rank) continue;
        for (size_t i = 0; i < kCount; ++i) {
          ASSERT_EQ(got[from * kCount + i], value(from, rank, i, round))
              << "round " << round << ", from rank " << from << ", element " << i;
        }
      }
      // Nobody puts the next round's data before everyone has read this one's.
      ASSERT_EQ(weftBarrier(comm, nullptr), weftSuccess);
    }
    EXPECT_EQ(weftCommWindowDeregister(comm, win), weftSuccess) << weftGetLastError(comm);
    EXPECT_EQ(weftMemFree(part), weftSuccess);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  }));
}

TEST(Windows, BadCallsAreRefusedClearly) {
  expectAllOk(runProcesses(kRanks, {{"WEFT_TIMEOUT", "2"}}, [](int rank) {
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    std::vector<char> heap(4096);
    void* part = nullptr;
    ASSERT_EQ(weftMemAlloc(&part, 4096), weftSuccess);
    weftWindow_t win = nullptr;
    // Rank 1 offers heap memory: every rank's registration fails, and says why.
    EXPECT_EQ(weftCommWindowRegister(comm, rank == 1 ? heap.data() : part, 4096, &win, 0),
              weftInvalidArgument);
    const std::string why = weftGetLastError(comm);
    EXPECT_NE(why.find(rank == 1 ? "weftMemAlloc" : "rank 1"), std::string::npos) << why;
    EXPECT_EQ(win, nullptr);
    // One rank's bad arguments fail every rank's call, and nobody waits for it.
    EXPECT_EQ(weftCommWindowRegister(comm, part, 4096, &win, rank == 2 ? 7 : 0),
              weftInvalidArgument);
    EXPECT_EQ(weftCommWindowRegister(comm, part, 4096, rank == 0 ? nullptr : &win, 0),
              weftInvalidArgument);
    EXPECT_EQ(win, nullptr);
    weftGroupStart();
    EXPECT_EQ(weftCommWindowRegister(comm, part, 4096, &win, 0), weftInvalidUsage);
    weftGroupEnd();

    ASSERT_EQ(weftCommWindowRegister(comm, part, 4096, &win, 0), weftSuccess)
        << weftGetLastError(comm);
    int32_t x[2] = {1, 2};
    const int peer = (rank + 1) % kRanks;
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, win, 4090, 0, 0, 0, comm, nullptr),
              weftInvalidArgument);
    EXPECT_NE(std::string(weftGetLastError(comm)).find("do not fit"), std::string::npos);
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, kRanks, win, 0, 0, 0, 0, comm, nullptr),
              weftInvalidArgument);
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, win, 0, 8, 0, 0, comm, nullptr),
              weftInvalidArgument);
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, win, 0, 0, 1, 0, comm, nullptr),
              weftInvalidArgument);
    EXPECT_EQ(weftPutSignal(x, SIZE_MAX / 2, weftInt32, peer, win, 0, 0, 0, 0, comm, nullptr),
              weftInvalidArgument);
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, reinterpret_cast<weftWindow_t>(x), 0, 0, 0, 0,
                            comm, nullptr),
              weftInvalidArgument);
    // Nobody signals: the wait ends with a timeout that names the peer and the signal.
    const weftWaitSignalDesc_t wait{1, peer, 5, 0};
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(weftWaitSignal(1, &wait, win, comm, nullptr), weftTimeout);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    const std::string timeout = weftGetLastError(comm);
    EXPECT_NE(timeout.find("signal 5 from rank " + std::to_string(peer)), std::string::npos)
        << timeout;
    EXPECT_EQ(weftWaitSignal(1, nullptr, win, comm, nullptr), weftInvalidArgument);
    // A rank with a bad handle leaves nobody waiting in the deregistration.
    weftWindow_t bogus = reinterpret_cast<weftWindow_t>(x);
    EXPECT_EQ(weftCommWindowDeregister(comm, rank == 1 ? bogus : win),
              rank == 1 ? weftInvalidArgument : weftSuccess)
        << weftGetLastError(comm);
    if (rank == 1) {
      EXPECT_EQ(weftCommWindowDeregister(comm, win), weftSuccess);
    } else {
      EXPECT_EQ(weftBarrier(comm, nullptr), weftSuccess);  // beside rank 1's second call
    }
    // A new window does not bring the old handle back.
    weftWindow_t next = nullptr;
    ASSERT_EQ(weftCommWindowRegister(comm, part, 4096, &next, 0), weftSuccess);
    EXPECT_NE(next, win);
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, win, 0, 0, 0, 0, comm, nullptr),
              weftInvalidArgument);  // deregistered
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, next, 0, 0, 0, 0, comm, nullptr), weftSuccess);
    EXPECT_EQ(weftCommWindowDeregister(comm, next), weftSuccess);
    EXPECT_EQ(weftMemFree(part), weftSuccess);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
    // After destroy, the handles are dead.
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, next, 0, 0, 0, 0, comm, nullptr),
              weftInvalidArgument);
  }));
}

// A rank puts into its own part too, and a put of nothing only signals; a communicator of one
// rank has windows as well.
TEST(Windows, SelfPutsAndSignalsAlone) {
  for (int n : {1, 2}) {
    expectAllOk(runProcesses(n, {}, [n](int rank) {
      weftComm_t comm = init();
      ASSERT_NE(comm, nullptr);
      int32_t* part = nullptr;
      ASSERT_EQ(weftMemAlloc(reinterpret_cast<void**>(&part), 4096), weftSuccess);
      weftWindow_t win = nullptr;
      ASSERT_EQ(weftCommWindowRegister(comm, part, 4096, &win, 0), weftSuccess)
          << weftGetLastError(comm);
      const int32_t v = 41 + rank;
      ASSERT_EQ(weftPutSignal(&v, 1, weftInt32, rank, win, 8, 1, 0, 0, comm, nullptr), weftSuccess)
          << weftGetLastError(comm);
      const int other = (rank + 1) % n;
      ASSERT_EQ(weftPutSignal(nullptr, 0, weftInt32, other, win, 0, 2, 0, 0, comm, nullptr),
                weftSuccess)
          << weftGetLastError(comm);
      const weftWaitSignalDesc_t waits[2] = {{1, rank, 1, 0}, {1, (rank + n - 1) % n, 2, 0}};
      ASSERT_EQ(weftWaitSignal(2, waits, win, comm, nullptr), weftSuccess)
          << weftGetLastError(comm);
      EXPECT_EQ(part[2], v);
      EXPECT_EQ(weftCommWindowDeregister(comm, win), weftSuccess);
      EXPECT_EQ(weftMemFree(part), weftSuccess);
      EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
    }));
  }
}

// A peer that dies instead of signalling: the wait ends with an error well before the timeout.
TEST(Windows, ADeadPeerEndsTheWait) {
  auto results = runProcesses(kRanks, {{"WEFT_TIMEOUT", "60"}}, [](int rank) {
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    void* part = nullptr;
    ASSERT_EQ(weftMemAlloc(&part, 4096), weftSuccess);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftCommWindowRegister(comm, part, 4096, &win, 0), weftSuccess);
    if (rank == 2) _exit(0);
    const weftWaitSignalDesc_t wait{1, 2, 0, 0};
    const auto start = std::chrono::steady_clock::now();
    EXPECT_NE(weftWaitSignal(1, &wait, win, comm, nullptr), weftSuccess);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    const std::string why = weftGetLastError(comm);
    EXPECT_NE(why.find("rank 2"), std::string::npos) << why;
    weftCommAbort(comm);
  });
  expectAllOk(results);
}

// Ranks that meet over tcp share no memory: no windows yet, on every rank alike.
TEST(Windows, NeedRanksThatShareMemory) {
  expectAllOk(runProcesses(2, {{"WEFT_TRANSPORT", "tcp"}}, [](int) {
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    void* part = nullptr;
    ASSERT_EQ(weftMemAlloc(&part, 4096), weftSuccess);
    weftWindow_t win = nullptr;
    EXPECT_EQ(weftCommWindowRegister(comm, part, 4096, &win, 0), weftInvalidUsage);
    EXPECT_NE(std::string(weftGetLastError(comm)).find("sharing memory"), std::string::npos)
        << weftGetLastError(comm);
    EXPECT_EQ(weftMemFree(part), weftSuccess);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  }));
}

}  // namespace
}  // namespace weft::test
