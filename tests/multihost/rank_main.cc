// The program each rank of a multi-host test runs, inside a simulated host (netns-hosts). It is a
// GoogleTest binary: the driver picks what a rank does with --gtest_filter, and a failed check
// makes its exit code non-zero. The communicator comes from the environment the driver sets
// (WEFT_RANK, WEFT_WORLD_SIZE, WEFT_COMM_ID, WEFT_COMM_SECRET).
#include <gtest/gtest.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/api/collective_checks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

double wallSeconds() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Every collective for several types at odd counts, and sends and receives between every pair.
TEST(Rank, EveryCollective) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
  int n = 0;
  ASSERT_EQ(weftCommCount(comm, &n), weftSuccess);
  for (Coll coll : kAllColls) {
    SCOPED_TRACE(nameOf(coll));
    const bool perRank = coll == Coll::kReduceScatter || coll == Coll::kAllGather ||
                         coll == Coll::kAllToAll || coll == Coll::kAllToAllv;
    // Large enough to go in several chunks and to choose tiers across hosts.
    const size_t large = perRank ? 300007 / static_cast<size_t>(n) | 1 : 300007;
    checkCollective(comm, coll, {1, 7, 1023, large}, nullptr,
                    {weftInt8, weftInt32, weftFloat16, weftFloat32, weftFloat64});
    if (::testing::Test::HasFatalFailure()) return;
  }
  checkSendRecv(comm);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

int32_t putValue(int from, int to, size_t i) {
  return static_cast<int32_t>(from * 1000003 + to * 10007 + static_cast<int>(i));
}

// A window of weftMemAlloc memory: every rank puts a block into each peer's part (mapped on its
// host, over tcp across), rank 0's put to the last rank lands while that rank sits in an
// all-reduce, and every rank checks its peers' blocks once their signals came.
TEST(Rank, WindowPuts) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
  int n = 0;
  int rank = 0;
  ASSERT_EQ(weftCommCount(comm, &n), weftSuccess);
  ASSERT_EQ(weftCommUserRank(comm, &rank), weftSuccess);
  const size_t count = size_t{1} << 20;  // int32 per block
  const size_t bytes = count * sizeof(int32_t) * static_cast<size_t>(n);
  void* memory = nullptr;
  ASSERT_EQ(weftMemAlloc(&memory, bytes), weftSuccess);
  auto* part = static_cast<int32_t*>(memory);
  weftWindow_t win = nullptr;
  ASSERT_EQ(weftCommWindowRegister(comm, part, bytes, &win, WEFT_WIN_DEFAULT), weftSuccess)
      << weftGetLastError(comm);
  std::vector<int32_t> mine(count);
  for (int peer = 0; peer < n; ++peer) {
    if (peer == rank || (rank == 0 && peer == n - 1)) continue;
    for (size_t i = 0; i < count; ++i)
      mine[i] = putValue(rank, peer, i);
    ASSERT_EQ(weftPutSignal(mine.data(), count, weftInt32, peer, win,
                            rank * count * sizeof(int32_t), 0, 0, 0, comm, nullptr),
              weftSuccess)
        << weftGetLastError(comm);
  }
  if (rank == 0) {
    for (size_t i = 0; i < count; ++i)
      mine[i] = putValue(0, n - 1, i);
    ASSERT_EQ(weftPutSignal(mine.data(), count, weftInt32, n - 1, win, 0, 0, 0, 0, comm, nullptr),
              weftSuccess)
        << weftGetLastError(comm);
  }
  float token = 1;
  ASSERT_EQ(weftAllReduce(&token, &token, 1, weftFloat32, weftSum, comm, nullptr), weftSuccess)
      << weftGetLastError(comm);
  std::vector<weftWaitSignalDesc_t> waits;
  for (int peer = 0; peer < n; ++peer) {
    if (peer != rank) waits.push_back({1, peer, 0, 0});
  }
  ASSERT_EQ(weftWaitSignal(static_cast<int>(waits.size()), waits.data(), win, comm, nullptr),
            weftSuccess)
      << weftGetLastError(comm);
  for (int from = 0; from < n; ++from) {
    if (from == rank) continue;
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(part[from * count + i], putValue(from, rank, i)) << "from rank " << from;
  }
  EXPECT_EQ(weftCommWindowDeregister(comm, win), weftSuccess) << weftGetLastError(comm);
  EXPECT_EQ(weftMemFree(memory), weftSuccess);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

// What this host's cable (eth0 of its network namespace) has carried both ways, in bytes.
uint64_t cableBytes() {
  uint64_t total = 0;
  for (const char* way : {"rx", "tx"}) {
    std::ifstream in(std::string("/sys/class/net/eth0/statistics/") + way + "_bytes");
    uint64_t bytes = 0;
    in >> bytes;
    total += bytes;
  }
  return total;
}

// One all-reduce of 4 MiB, checked, between barriers; prints what this host's cable carried
// meanwhile: "cable bytes: N".
TEST(Rank, LargeAllReduceCountingCableBytes) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
  int n = 0;
  int rank = 0;
  ASSERT_EQ(weftCommCount(comm, &n), weftSuccess);
  ASSERT_EQ(weftCommUserRank(comm, &rank), weftSuccess);
  float token = 0;
  auto barrier = [&] {
    ASSERT_EQ(weftAllReduce(&token, &token, 1, weftFloat32, weftSum, comm, nullptr), weftSuccess)
        << weftGetLastError(comm);
  };
  std::vector<float> v(size_t{1} << 20, static_cast<float>(rank + 1));
  barrier();
  const uint64_t before = cableBytes();
  ASSERT_EQ(weftAllReduce(v.data(), v.data(), v.size(), weftFloat32, weftSum, comm, nullptr),
            weftSuccess)
      << weftGetLastError(comm);
  barrier();
  const uint64_t after = cableBytes();
  const float expected = static_cast<float>(n * (n + 1) / 2);
  for (size_t i = 0; i < v.size(); i += 4099)
    ASSERT_EQ(v[i], expected) << "element " << i;
  ASSERT_EQ(v.back(), expected);
  printf("cable bytes: %llu\n", static_cast<unsigned long long>(after - before));
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

// All-reduces until one fails, for the fault tests: prints "started" after the first, then, on
// the failure, "failed at <wall-clock seconds>: <message>". Passes only if one failed.
TEST(Rank, AllReduceUntilError) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
  std::vector<float> v(size_t{1} << 20, 1.0f);
  const double start = wallSeconds();
  for (int call = 0; wallSeconds() - start < 120; ++call) {
    weftResult_t r =
        weftAllReduce(v.data(), v.data(), v.size(), weftFloat32, weftMax, comm, nullptr);
    if (r != weftSuccess) {
      printf("failed at %.3f: %s\n", wallSeconds(), weftGetLastError(comm));
      fflush(stdout);
      weftCommAbort(comm);
      return;
    }
    if (call == 0) {
      printf("started\n");
      fflush(stdout);
    }
  }
  ADD_FAILURE() << "no all-reduce failed in 120 s";
  weftCommDestroy(comm);
}

}  // namespace
}  // namespace weft::test
