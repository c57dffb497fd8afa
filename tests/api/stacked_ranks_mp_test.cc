// Ranks that share a CPU know it: each rank's doorbell carries the CPU it last waited long on,
// so a rank whose peer waits on its own CPU stops spinning early and lets it run (see
// Communicator::sharesCpuWithPeer). The scheduler stacks unbound ranks so while other work keeps
// every CPU busy; here binding puts them there. And a thread that blocks in a wait asks for a
// short scheduler slice (src/base/sched_slice.h).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
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

// The scheduler slice of thread `tid` of this process in ns, from /proc (0 if not shown).
uint64_t sliceOf(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/sched");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("se.slice", 0) == 0) return std::stoull(line.substr(line.find(':') + 1));
  }
  return 0;
}

// Whether the kernel takes custom slices for SCHED_OTHER threads (EEVDF, Linux 6.12+), tried
// with the system call itself on a thread of its own, which then ends.
bool customSlices() {
  bool taken = false;
  std::thread([&] {
    struct {
      uint32_t size, policy;
      uint64_t flags;
      int32_t nice;
      uint32_t priority;
      uint64_t runtime, deadline, period;
      uint32_t utilMin, utilMax;
    } attr = {};
    attr.size = sizeof attr;
    attr.runtime = 300'000;
    taken = syscall(SYS_sched_setattr, 0, &attr, 0) == 0 && sliceOf(gettid()) == 300'000;
  }).join();
  return taken;
}

// A thread blocked in a wait (rank 0's, whose peer comes 0.3 s late) has WEFT_WAIT_SLICE_US's
// slice (100 us by default), so that a peer's wake-up lets it run before a busy thread's slice
// ends; once the call is over, its own again. With 0 it keeps its own throughout.
TEST(StackedRanks, ThreadsBlockedInAWaitHaveShortSlices) {
  if (!customSlices()) GTEST_SKIP() << "this kernel has no custom slices for SCHED_OTHER";
  for (const char* slice : {"", "0", "250"}) {
    EnvList env;
    if (*slice != '\0') env.emplace_back("WEFT_WAIT_SLICE_US", slice);
    expectAllOk(runProcesses(2, env, [&](int rank) {
      weftComm_t comm = nullptr;
      ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
      const pid_t me = gettid();
      const uint64_t before = sliceOf(me);
      std::atomic<bool> done{false};
      uint64_t least = before;
      std::thread watch;
      if (rank == 0) {
        watch = std::thread([&] {
          while (!done.load()) {
            least = std::min(least, sliceOf(me));
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        });
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
      float v = 1;
      ASSERT_EQ(weftAllReduce(&v, &v, 1, weftFloat32, weftSum, comm, nullptr), weftSuccess);
      EXPECT_EQ(v, 2.0f);
      if (rank == 0) {
        done = true;
        watch.join();
        const uint64_t during = *slice == '\0' ? 100'000 : *slice == '0' ? before : 250'000;
        EXPECT_EQ(least, during) << "WEFT_WAIT_SLICE_US=" << slice;
        EXPECT_EQ(sliceOf(me), before) << "WEFT_WAIT_SLICE_US=" << slice;
      }
      EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
    }));
  }
}

TEST(StackedRanks, RanksOnOneCpuSeeEachOther) {
  const int cpu = usableCpus().at(0);
  expectAllOk(runProcesses(2, {}, [&](int rank) { checkOnCpu(cpu, rank, true); }));
}

// With waits that spin first, ranks stacked on one CPU find each other in their waits: the
// collectives complete, and each rank's log says once that a peer waits on its CPU.
TEST(StackedRanks, SpinningWaitsYieldToAPeerOnTheirCpu) {
  const int cpu = usableCpus().at(0);
  const RankFiles logs("stacked-test");
  expectAllOk(runProcesses(2, {{"WEFT_WAIT", "spin"}, {"WEFT_DEBUG", "WARN"}}, [&](int rank) {
    logs.route(rank);
    bindToCpu(cpu);
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    for (int round = 0; round < 20; ++round) {
      float v = static_cast<float>(rank + round);
      ASSERT_EQ(weftAllReduce(&v, &v, 1, weftFloat32, weftSum, comm, nullptr), weftSuccess);
      EXPECT_EQ(v, static_cast<float>(1 + 2 * round));
    }
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  }));
  for (int rank = 0; rank < 2; ++rank) {
    const std::string log = logs.take(rank);
    const std::string said = "a peer on this host waits on CPU " + std::to_string(cpu) + " too";
    const size_t at = log.find(said);
    EXPECT_NE(at, std::string::npos) << log;
    EXPECT_EQ(log.find(said, at + 1), std::string::npos) << "said twice:\n" << log;
  }
}

TEST(StackedRanks, RanksOnTwoCpusDoNot) {
  const std::vector<int> cpus = usableCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
  expectAllOk(runProcesses(2, {}, [&](int rank) { checkOnCpu(cpus[rank], rank, false); }));
}

}  // namespace
}  // namespace weft::test
