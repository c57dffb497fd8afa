// Ranks that share a CPU know it: each rank's doorbell carries the CPU it last waited long on,
// so a rank whose peer waits on its own CPU stops spinning early and lets it run (see
// Communicator::sharesCpuWithPeer). The scheduler stacks unbound ranks so while other work keeps
// every CPU busy; here binding puts them there.
#include <gtest/gtest.h>
#include <sched.h>

#include <vector>

#include "src/api/api_util.h"
#include "src/comm/communicator.h"
#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

// The CPUs this process may use, in order.
std::vector<int> usableCpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Whether this rank, bound to `cpu`, finds a peer on its CPU after every rank has recorded its
// own; and the all-reduces between them stay right.
void checkOnCpu(int cpu, int rank, bool expectShared) {
  bindToCpu(cpu);
  weftComm_t handle = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&handle), weftSuccess) << weftGetLastError(nullptr);
  Communicator* comm = nullptr;
  ASSERT_TRUE(lookupComm(handle, &comm).ok());
  (void)comm->sharesCpuWithPeer();  // records this rank's CPU
  std::vector<float> v(1 << 18);
  for (int round = 0; round < 20; ++round) {
    const size_t n = round % 2 == 0 ? 1 : v.size();
    for (size_t i = 0; i < n; ++i)
      v[i] = static_cast<float>(rank + 1);
    ASSERT_EQ(weftAllReduce(v.data(), v.data(), n, weftFloat32, weftSum, handle, nullptr),
              weftSuccess)
        << weftGetLastError(handle);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(v[i], 3.0f) << i;
  }
  EXPECT_EQ(comm->sharesCpuWithPeer(), expectShared) << "rank " << rank << " on CPU " << cpu;
  EXPECT_EQ(weftCommDestroy(handle), weftSuccess);
}

TEST(StackedRanks, RanksOnOneCpuSeeEachOther) {
  const int cpu = usableCpus().at(0);
  expectAllOk(runProcesses(2, {}, [&](int rank) { checkOnCpu(cpu, rank, true); }));
}

TEST(StackedRanks, RanksOnTwoCpusDoNot) {
  const std::vector<int> cpus = usableCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
  expectAllOk(runProcesses(2, {}, [&](int rank) { checkOnCpu(cpus[rank], rank, false); }));
}

}  // namespace
}  // namespace weft::test
