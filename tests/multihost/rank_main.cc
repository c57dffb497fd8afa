// The program each rank of a multi-host test runs, inside a simulated host (netns-hosts). It is a
// GoogleTest binary: the driver picks what a rank does with --gtest_filter, and a failed check
// makes its exit code non-zero. The communicator comes from the environment the driver sets
// (WEFT_RANK, WEFT_WORLD_SIZE, WEFT_COMM_ID, WEFT_COMM_SECRET).
#include <gtest/gtest.h>
#include <time.h>

#include <cstdio>
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
