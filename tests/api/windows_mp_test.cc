// Windows and one-sided puts between real processes: every rank lends a part, puts into its
// peers' parts and signals, and finds the peers' data once their signals arrive, on one host
// (mapped), across hosts (WEFT_HOSTID: over tcp) and both in one window; bad calls, a peer that
// never signals and one that dies get clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
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

// Where a rank's part lives: weftMemAlloc memory, or the heap (enough across hosts).
enum class Memory { kShareable, kHeap };

// Three rounds in which every rank puts a block into each peer's part, in two halves that each
// raise signal 0, then waits for its peers' raises and checks their blocks.
void exchangeRounds(int rank, int nranks, Memory memory) {
  weftComm_t comm = init();
  ASSERT_NE(comm, nullptr);
  const size_t bytes = nranks * kCount * sizeof(int32_t);
  std::vector<char> heap(memory == Memory::kHeap ? bytes : 0);
  void* part = heap.data();
  if (memory == Memory::kShareable) {
    ASSERT_EQ(weftMemAlloc(&part, bytes), weftSuccess);
  }
  weftWindow_t win = nullptr;
  ASSERT_EQ(weftCommWindowRegister(comm, part, bytes, &win, WEFT_WIN_DEFAULT), weftSuccess)
      << weftGetLastError(comm);
  std::vector<int32_t> mine(kCount);
  for (int round = 0; round < 3; ++round) {
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == rank) continue;
      for (size_t i = 0; i < kCount; ++i)
        mine[i] = value(rank, peer, i, round);
      // In two halves, each raising signal 0 (every round: the waits count what they took).
      const size_t half = kCount / 2;
      const size_t at = rank * kCount * sizeof(int32_t);
      ASSERT_EQ(weftPutSignal(mine.data(), half, weftInt32, peer, win, at, 0, 0, 0, comm, nullptr),
                weftSuccess)
          << weftGetLastError(comm);
      ASSERT_EQ(weftPutSignal(mine.data() + half, kCount - half, weftInt32, peer, win,
                              at + half * sizeof(int32_t), 0, 0, 0, comm, nullptr),
                weftSuccess)
          << weftGetLastError(comm);
    }
    // Each peer's two raises, as one wait for two or two waits for one.
    std::vector<weftWaitSignalDesc_t> waits;
    for (int peer = 0; peer < nranks; ++peer) {
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
    for (int from = 0; from < nranks; ++from) {
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
  if (memory == Memory::kShareable) {
    EXPECT_EQ(weftMemFree(part), weftSuccess);
  }
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

TEST(Windows, PutsReachEveryPeerOnceTheirSignalsDo) {
  expectAllOk(
      runProcesses(kRanks, {}, [](int rank) { exchangeRounds(rank, kRanks, Memory::kShareable); }));
}

// Every rank its own host (WEFT_HOSTID): the puts go over the windows' tcp links, and a part
// may be any memory.
TEST(Windows, PutsCrossHostsOverTcp) {
  expectAllOk(runProcesses(kRanks, {}, [](int rank) {
    setenv("WEFT_HOSTID", ("host" + std::to_string(rank)).c_str(), 1);
    exchangeRounds(rank, kRanks, Memory::kHeap);
  }));
}

// Two hosts of two ranks: mapped within a host, tcp across, in the same window; the INIT log
// says which.
TEST(Windows, PutsMixMappedPeersAndPeersAcrossHosts) {
  const RankFiles logs("windows-mixed-test");
  expectAllOk(
      runProcesses(4, {{"WEFT_DEBUG", "INFO"}, {"WEFT_DEBUG_SUBSYS", "INIT"}}, [&](int rank) {
        logs.route(rank);
        setenv("WEFT_HOSTID", rank < 2 ? "a" : "b", 1);
        exchangeRounds(rank, 4, Memory::kShareable);
      }));
  for (int rank = 0; rank < 4; ++rank) {
    const std::string text = logs.take(rank);
    EXPECT_NE(text.find("mapped by 1 peer(s) on this host, over tcp to 2"), std::string::npos)
        << text;
  }
}

// Ranks of one host that meet over tcp share no memory: their puts go over tcp as well.
TEST(Windows, PutsOverTcpOnOneHost) {
  expectAllOk(runProcesses(2, {{"WEFT_TRANSPORT", "tcp"}},
                           [](int rank) { exchangeRounds(rank, 2, Memory::kHeap); }));
}

// A put across hosts does not wait for its target to call in: rank 0's large put lands while
// rank 1 sits in a collective that rank 0 joins only after its put returned; and two ranks that
// put large blocks into each other at once both get through.
TEST(Windows, PutsAcrossHostsLandWhileTheTargetIsBusy) {
  expectAllOk(runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [](int rank) {
    setenv("WEFT_HOSTID", rank == 0 ? "a" : "b", 1);
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    const size_t count = size_t{8} << 20;  // int32: 32 MiB, far more than the sockets hold
    std::vector<int32_t> part(count, -1), mine(count);
    for (size_t i = 0; i < count; ++i)
      mine[i] = value(rank, 1 - rank, i, 0);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftCommWindowRegister(comm, part.data(), count * sizeof(int32_t), &win, 0),
              weftSuccess)
        << weftGetLastError(comm);
    int32_t one = 1, sum = 0;
    if (rank == 0) {
      ASSERT_EQ(weftPutSignal(mine.data(), count, weftInt32, 1, win, 0, 3, 0, 0, comm, nullptr),
                weftSuccess)
          << weftGetLastError(comm);
    }
    ASSERT_EQ(weftAllReduce(&one, &sum, 1, weftInt32, weftSum, comm, nullptr), weftSuccess);
    EXPECT_EQ(sum, 2);
    if (rank == 1) {
      const weftWaitSignalDesc_t wait{1, 0, 3, 0};
      ASSERT_EQ(weftWaitSignal(1, &wait, win, comm, nullptr), weftSuccess)
          << weftGetLastError(comm);
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(part[i], value(0, 1, i, 0)) << "element " << i;
    }
    ASSERT_EQ(weftBarrier(comm, nullptr), weftSuccess);
    // Both at once, each into the other's part.
    for (size_t i = 0; i < count; ++i)
      mine[i] = value(rank, 1 - rank, i, 1);
    ASSERT_EQ(
        weftPutSignal(mine.data(), count, weftInt32, 1 - rank, win, 0, 4, 0, 0, comm, nullptr),
        weftSuccess)
        << weftGetLastError(comm);
    const weftWaitSignalDesc_t wait{1, 1 - rank, 4, 0};
    ASSERT_EQ(weftWaitSignal(1, &wait, win, comm, nullptr), weftSuccess) << weftGetLastError(comm);
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(part[i], value(1 - rank, rank, i, 1)) << "element " << i;
    EXPECT_EQ(weftCommWindowDeregister(comm, win), weftSuccess) << weftGetLastError(comm);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  }));
}

// Puts across hosts that nobody waited for have landed once the deregistration returns.
TEST(Windows, DeregistrationLandsThePutsAcrossHostsBeforeIt) {
  expectAllOk(runProcesses(3, {}, [](int rank) {
    setenv("WEFT_HOSTID", ("host" + std::to_string(rank)).c_str(), 1);
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    const size_t count = size_t{1} << 20;
    std::vector<int32_t> part(3 * count, -1), mine(count);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftCommWindowRegister(comm, part.data(), part.size() * sizeof(int32_t), &win, 0),
              weftSuccess)
        << weftGetLastError(comm);
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == rank) continue;
      for (size_t i = 0; i < count; ++i)
        mine[i] = value(rank, peer, i, 2);
      ASSERT_EQ(weftPutSignal(mine.data(), count, weftInt32, peer, win,
                              rank * count * sizeof(int32_t), 0, 0, 0, comm, nullptr),
                weftSuccess)
          << weftGetLastError(comm);
    }
    ASSERT_EQ(weftCommWindowDeregister(comm, win), weftSuccess) << weftGetLastError(comm);
    for (int from = 0; from < 3; ++from) {
      if (from == rank) continue;
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(part[from * count + i], value(from, rank, i, 2)) << "from rank " << from;
    }
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
    // A rank with a bad handle fails every rank's deregistration, leaving nobody waiting, and
    // every window stays; then all deregister it.
    weftWindow_t bogus = reinterpret_cast<weftWindow_t>(x);
    EXPECT_EQ(weftCommWindowDeregister(comm, rank == 1 ? bogus : win), weftInvalidArgument);
    const std::string failed = weftGetLastError(comm);
    EXPECT_NE(failed.find(rank == 1 ? "not a registered window" : "failed on a rank"),
              std::string::npos)
        << failed;
    EXPECT_EQ(weftPutSignal(x, 2, weftInt32, peer, win, 0, 7, 0, 0, comm, nullptr), weftSuccess)
        << weftGetLastError(comm);
    const weftWaitSignalDesc_t raised{1, (rank + kRanks - 1) % kRanks, 7, 0};
    EXPECT_EQ(weftWaitSignal(1, &raised, win, comm, nullptr), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(weftCommWindowDeregister(comm, win), weftSuccess) << weftGetLastError(comm);
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

// Puts and waits on a Weft stream run there in order with its collectives; a bad argument is
// the call's error at once, a wait that times out the stream's. On one host and across hosts.
class WindowsOnStreams : public ::testing::TestWithParam<bool> {};

TEST_P(WindowsOnStreams, RunInTheStreamsOrder) {
  const bool acrossHosts = GetParam();
  expectAllOk(runProcesses(2, {{"WEFT_TIMEOUT", "2"}}, [acrossHosts](int rank) {
    if (acrossHosts) setenv("WEFT_HOSTID", rank == 0 ? "a" : "b", 1);
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    weftStream_t stream = nullptr;
    ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
    void* part = nullptr;
    const size_t count = 100003;
    ASSERT_EQ(weftMemAlloc(&part, count * sizeof(int32_t)), weftSuccess);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftCommWindowRegister(comm, part, count * sizeof(int32_t), &win, 0), weftSuccess)
        << weftGetLastError(comm);
    // The put sends what the all-reduce before it on the stream wrote.
    std::vector<int32_t> mine(count, rank + 1), sum(count, 0);
    ASSERT_EQ(weftAllReduce(mine.data(), sum.data(), count, weftInt32, weftSum, comm, stream),
              weftSuccess);
    const int peer = 1 - rank;
    ASSERT_EQ(weftPutSignal(sum.data(), count, weftInt32, peer, win, 0, 6, 0, 0, comm, stream),
              weftSuccess)
        << weftGetLastError(comm);
    const weftWaitSignalDesc_t wait{1, peer, 6, 0};
    ASSERT_EQ(weftWaitSignal(1, &wait, win, comm, stream), weftSuccess);
    ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess) << weftGetLastError(comm);
    const auto* got = static_cast<const int32_t*>(part);
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(got[i], 3) << "element " << i;
    // Checked when called, even on a stream.
    EXPECT_EQ(weftPutSignal(sum.data(), count, weftInt32, peer, win, 8, 6, 0, 0, comm, stream),
              weftInvalidArgument);
    // A wait nobody answers fails the stream, not the call.
    const weftWaitSignalDesc_t never{1, peer, 7, 0};
    EXPECT_EQ(weftWaitSignal(1, &never, win, comm, stream), weftSuccess);
    EXPECT_EQ(weftStreamSynchronize(stream), weftTimeout);
    EXPECT_EQ(weftBarrier(comm, nullptr), weftSuccess);
    EXPECT_EQ(weftCommWindowDeregister(comm, win), weftSuccess) << weftGetLastError(comm);
    EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
    EXPECT_EQ(weftMemFree(part), weftSuccess);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  }));
}

INSTANTIATE_TEST_SUITE_P(Hosts, WindowsOnStreams, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "AcrossHosts" : "OneHost"; });

// A peer across hosts that dies: a wait for its signal and a put into its part both end with
// an error naming it, well before the timeout.
TEST(Windows, ADeadPeerAcrossHostsEndsTheWaitAndThePut) {
  auto results = runProcesses(kRanks, {{"WEFT_TIMEOUT", "60"}}, [](int rank) {
    setenv("WEFT_HOSTID", ("host" + std::to_string(rank)).c_str(), 1);
    weftComm_t comm = init();
    ASSERT_NE(comm, nullptr);
    const size_t bytes = size_t{64} << 20;
    std::vector<char> part(bytes);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftCommWindowRegister(comm, part.data(), bytes, &win, 0), weftSuccess);
    if (rank == 2) _exit(0);
    const auto start = std::chrono::steady_clock::now();
    if (rank == 0) {
      const weftWaitSignalDesc_t wait{1, 2, 0, 0};
      EXPECT_NE(weftWaitSignal(1, &wait, win, comm, nullptr), weftSuccess);
    } else {
      std::vector<char> data(bytes, 'x');
      weftResult_t r = weftSuccess;
      // The first puts may fit in the sockets' buffers, or meet the peer's progress thread
      // while its process is still ending.
      while (r == weftSuccess &&
             std::chrono::steady_clock::now() - start < std::chrono::seconds(15))
        r = weftPutSignal(data.data(), bytes, weftChar, 2, win, 0, 0, 0, 0, comm, nullptr);
      EXPECT_NE(r, weftSuccess);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    const std::string why = weftGetLastError(comm);
    EXPECT_NE(why.find("rank 2"), std::string::npos) << why;
    weftCommAbort(comm);
  });
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
