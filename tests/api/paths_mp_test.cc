// Which way a collective of an all-local communicator goes, by size: through the shared slots
// (direct), chunk by chunk through the staging areas (staged), or as a schedule over the rings
// when staging is off; the trace log names the path. Results are checked either way.
#include <gtest/gtest.h>
#include <sched.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/api/process_ranks.h"
#include "tests/api/weft_mem_allocator.h"
#include "tests/transports/forbid_cross_memory.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

// An all-reduce of `count` int32 on `nranks` ranks, every element checked exactly.
void allReduce(weftComm_t comm, int rank, size_t count, int nranks = 3) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<int32_t>(i % 1000) * (rank + 1);
  std::vector<int32_t> out(count);
  ASSERT_EQ(weftAllReduce(v.data(), out.data(), count, weftInt32, weftSum, comm, nullptr),
            weftSuccess)
      << weftGetLastError(comm);
  const int32_t ranksSum = nranks * (nranks + 1) / 2;
  for (size_t i = 0; i < count; ++i)
    ASSERT_EQ(out[i], static_cast<int32_t>(i % 1000) * ranksSum) << "element " << i;
}

void broadcastFromRank0(weftComm_t comm, int rank, size_t count) {
  std::vector<int32_t> v(count, -1);
  if (rank == 0) {
    for (size_t i = 0; i < count; ++i)
      v[i] = static_cast<int32_t>(i % 1009);
  }
  std::vector<int32_t> out(count);
  ASSERT_EQ(weftBroadcast(v.data(), out.data(), count, weftInt32, 0, comm, nullptr), weftSuccess)
      << weftGetLastError(comm);
  for (size_t i = 0; i < count; i += 101)
    ASSERT_EQ(out[i], static_cast<int32_t>(i % 1009)) << "element " << i;
}

struct PathCase {
  const char* stagingBytes;
  const char* small;  // the path of a 4 KiB all-reduce (8 KiB ones go direct either way)
  const char* mid;    // of a 64 KiB one: direct only where staging is off
  const char* large;  // of a 4 MiB one
};

class Paths : public ::testing::TestWithParam<PathCase> {};

TEST_P(Paths, BySize) {
  const PathCase c = GetParam();
  const RankFiles logs("paths-test");
  auto results = runProcesses(3,
                              {{"WEFT_DEBUG", "TRACE"},
                               {"WEFT_DEBUG_SUBSYS", "COLL"},
                               {"WEFT_SHM_STAGING_BYTES", c.stagingBytes},
                               // the built-in link figures: a loaded machine's may pick a tree
                               {"WEFT_CALIBRATE", "0"}},
                              [&](int rank) {
                                logs.route(rank);
                                weftComm_t comm = nullptr;
                                ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
                                allReduce(comm, rank, 1024);
                                allReduce(comm, rank, 2048);
                                allReduce(comm, rank, 2048);   // logged once at INFO
                                allReduce(comm, rank, 16384);  // direct: streaming stores
                                allReduce(comm, rank, 1u << 20);
                                EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
                              });
  expectAllOk(results);
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = logs.take(rank);
    EXPECT_NE(text.find("(1024 x int32 sum, " + std::string(c.small) + ")"), std::string::npos)
        << text;
    EXPECT_NE(text.find("(2048 x int32 sum, direct)"), std::string::npos) << text;
    EXPECT_NE(text.find("(16384 x int32 sum, " + std::string(c.mid) + ")"), std::string::npos)
        << text;
    // Staged outputs of 4M may go streamed too (where the ranks outnumber the cores).
    EXPECT_NE(text.find("(1048576 x int32 sum, " + std::string(c.large)), std::string::npos)
        << text;
    // The INFO line of a path says why, and what it was preferred to, once per shape of call.
    const std::string why = "(2048 x int32 sum, direct): a rank's part fits the slots";
    const size_t at = text.find(why);
    EXPECT_NE(at, std::string::npos) << text;
    EXPECT_EQ(text.find(why, at + 1), std::string::npos) << text;
    const std::string line = text.substr(at, text.find('\n', at) - at);
    if (std::string(c.stagingBytes) != "0") {
      EXPECT_NE(line.find("; over staged, "), std::string::npos) << line;
    }
    EXPECT_NE(line.find(" ring "), std::string::npos) << line;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Paths,
                         ::testing::Values(PathCase{"2M", "direct", "staged", "staged"},
                                           PathCase{"0", "direct", "direct", "ring"}),
                         [](const auto& info) {
                           return std::string(info.param.stagingBytes) == "0" ? "StagingOff"
                                                                              : "Default";
                         });

// A direct call spins a little before it waits the runner's way (yielding, blocking, watching
// for dead peers). Each rank in turn comes late, so every rank's call outlasts the spin at least
// once; the results are exact either way. An average, which always goes through the runner, too.
TEST(Paths, DirectCallsWaitForALatePeer) {
  auto results = runProcesses(3, {}, [](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
    for (int late = 0; late < 3; ++late) {
      if (rank == late) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      allReduce(comm, rank, 16 + static_cast<size_t>(late));  // each call its own
    }
    const float mine = static_cast<float>(rank + 1);
    float mean = 0;
    ASSERT_EQ(weftAllReduce(&mine, &mean, 1, weftFloat32, weftAvg, comm, nullptr), weftSuccess);
    EXPECT_EQ(mean, 2.0f);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

// The value rank r puts at element i, and its sum over 3 ranks.
int32_t valueOf(int r, size_t i) {
  return static_cast<int32_t>(i % 9973) * 3 + r * 100003;
}
int32_t sumOf(size_t i) {
  return valueOf(0, i) + valueOf(1, i) + valueOf(2, i);
}

// Whether the trace logged a collective of this kind with this ending ("... sum, staged)"),
// followed by `then` (" went single copy").
bool logged(const std::string& text, const std::string& coll, const std::string& ending,
            const std::string& then = "") {
  for (size_t at = text.find(coll + " #"); at != std::string::npos;
       at = text.find(coll + " #", at + 1)) {
    size_t end = text.find(')', at);
    if (end != std::string::npos &&
        text.compare(end + 1 - ending.size(), ending.size(), ending) == 0 &&
        text.compare(end + 1, then.size(), then) == 0)
      return true;
  }
  return false;
}

// Staged outputs of WEFT_SHM_STREAM_BYTES or more go out with non-temporal stores; every
// collective that does so gives exact results, and the trace says which did (reduce_scatter
// never: it reduces into its output).
TEST(Paths, StreamedOutputsAreExact) {
  const RankFiles logs("stream-test");
  // Outputs in int32: all_reduce 200K and 100K, all_gather 240K, all_to_all 144K, and 132K for
  // reduce_scatter, whose input (396K) is the largest buffer.
  const size_t big = 50001, small = 25001, block = 20001, peer = 12001, scatter = 33001;
  auto results = runProcesses(
      3,
      {{"WEFT_DEBUG", "TRACE"}, {"WEFT_DEBUG_SUBSYS", "COLL"}, {"WEFT_SHM_STREAM_BYTES", "128K"}},
      [&](int rank) {
        logs.route(rank);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
        auto values = [&](size_t n) {
          std::vector<int32_t> v(n);
          for (size_t i = 0; i < n; ++i)
            v[i] = valueOf(rank, i);
          return v;
        };
        const auto send = values(3 * scatter);
        std::vector<int32_t> out(3 * scatter, -1);
        for (size_t n : {big, small}) {
          ASSERT_EQ(weftAllReduce(send.data(), out.data(), n, weftInt32, weftSum, comm, nullptr),
                    weftSuccess);
          for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(out[i], sumOf(i)) << "all_reduce of " << n << ", element " << i;
        }
        std::vector<int32_t> inPlace = values(big);
        ASSERT_EQ(
            weftAllReduce(inPlace.data(), inPlace.data(), big, weftInt32, weftSum, comm, nullptr),
            weftSuccess);
        for (size_t i = 0; i < big; ++i)
          ASSERT_EQ(inPlace[i], sumOf(i)) << "in-place all_reduce, element " << i;
        ASSERT_EQ(weftAllGather(send.data(), out.data(), block, weftInt32, comm, nullptr),
                  weftSuccess);
        for (size_t i = 0; i < 3 * block; ++i)
          ASSERT_EQ(out[i], valueOf(static_cast<int>(i / block), i % block)) << "all_gather " << i;
        ASSERT_EQ(weftBroadcast(send.data(), out.data(), big, weftInt32, 2, comm, nullptr),
                  weftSuccess);
        for (size_t i = 0; i < big; ++i)
          ASSERT_EQ(out[i], valueOf(2, i)) << "broadcast, element " << i;
        ASSERT_EQ(weftReduce(send.data(), out.data(), big, weftInt32, weftSum, 1, comm, nullptr),
                  weftSuccess);
        for (size_t i = 0; rank == 1 && i < big; ++i)
          ASSERT_EQ(out[i], sumOf(i)) << "reduce, element " << i;
        ASSERT_EQ(weftAllToAll(send.data(), out.data(), peer, weftInt32, comm, nullptr),
                  weftSuccess);
        for (size_t i = 0; i < 3 * peer; ++i) {
          ASSERT_EQ(out[i], valueOf(static_cast<int>(i / peer), rank * peer + i % peer))
              << "all_to_all, element " << i;
        }
        ASSERT_EQ(
            weftReduceScatter(send.data(), out.data(), scatter, weftInt32, weftSum, comm, nullptr),
            weftSuccess);
        for (size_t i = 0; i < scatter; ++i)
          ASSERT_EQ(out[i], sumOf(rank * scatter + i)) << "reduce_scatter, element " << i;
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = logs.take(rank);
    EXPECT_NE(text.find("(50001 x int32 sum, staged, streamed)"), std::string::npos) << text;
    EXPECT_NE(text.find("(25001 x int32 sum, staged)"), std::string::npos) << text;
    for (const char* coll : {"all_gather", "broadcast", "all_to_all"})
      EXPECT_TRUE(logged(text, coll, "staged, streamed)")) << coll << "\n" << text;
    EXPECT_TRUE(logged(text, "reduce_scatter", "sum, staged)")) << text;
  }
}

// Staged reductions stage with ordinary or non-temporal stores, each rank as it likes
// (WEFT_SHM_STAGE_STORES, or its own timing under auto): ranks that differ still get exact
// sums, in and out of place, over enough calls for auto to try both kinds.
TEST(Paths, StagedReductionsAreExactWithEitherStores) {
  const size_t count = 100003, scatter = 33335;  // int32: 400K per rank, and 133K per block
  auto results = runProcesses(3, {}, [&](int rank) {
    const char* stores[] = {"streamed", "cached", "auto"};
    setenv("WEFT_SHM_STAGE_STORES", stores[rank], 1);
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
    std::vector<int32_t> send(3 * scatter), out(3 * scatter);
    for (size_t i = 0; i < send.size(); ++i)
      send[i] = valueOf(rank, i);
    for (int call = 0; call < 40; ++call) {
      std::fill(out.begin(), out.end(), -1);
      std::vector<int32_t> inPlace(send.begin(), send.begin() + count);
      ASSERT_EQ(weftAllReduce(send.data(), out.data(), count, weftInt32, weftSum, comm, nullptr),
                weftSuccess);
      ASSERT_EQ(
          weftAllReduce(inPlace.data(), inPlace.data(), count, weftInt32, weftSum, comm, nullptr),
          weftSuccess);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[i], sumOf(i)) << "all_reduce, call " << call << ", element " << i;
        ASSERT_EQ(inPlace[i], sumOf(i)) << "in place, call " << call << ", element " << i;
      }
      ASSERT_EQ(
          weftReduce(send.data(), out.data(), count, weftInt32, weftSum, call % 3, comm, nullptr),
          weftSuccess);
      for (size_t i = 0; rank == call % 3 && i < count; ++i)
        ASSERT_EQ(out[i], sumOf(i)) << "reduce, call " << call << ", element " << i;
      ASSERT_EQ(
          weftReduceScatter(send.data(), out.data(), scatter, weftInt32, weftSum, comm, nullptr),
          weftSuccess);
      for (size_t i = 0; i < scatter; ++i) {
        ASSERT_EQ(out[i], sumOf(rank * scatter + i))
            << "reduce_scatter, call " << call << ", element " << i;
      }
    }
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

// Two ranks time the round trip between their cores before each large staged call, even where
// one was told which stores to use (WEFT_SHM_STAGE_STORES): it must still answer the other's
// probe. Every call is exact, and none waits out the timeout.
TEST(Paths, TwoRanksProbeWhateverStoresEachWasTold) {
  const size_t count = 100003;  // int32: 400K per rank
  auto results = runProcesses(2, {{"WEFT_TIMEOUT", "20"}}, [&](int rank) {
    setenv("WEFT_SHM_STAGE_STORES", rank == 0 ? "cached" : "auto", 1);
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
    std::vector<int32_t> send(count), out(2 * count);
    for (size_t i = 0; i < count; ++i)
      send[i] = valueOf(rank, i);
    for (int call = 0; call < 20; ++call) {
      ASSERT_EQ(weftAllReduce(send.data(), out.data(), count, weftInt32, weftSum, comm, nullptr),
                weftSuccess);
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(out[i], valueOf(0, i) + valueOf(1, i)) << "all_reduce, call " << call;
      ASSERT_EQ(weftAllGather(send.data(), out.data(), count, weftInt32, comm, nullptr),
                weftSuccess);
      for (size_t i = 0; i < 2 * count; ++i)
        ASSERT_EQ(out[i], valueOf(static_cast<int>(i / count), i % count))
            << "all_gather, call " << call;
    }
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

// Ranks that take turns on a core lose their cached outputs between calls, so by default they
// stream outputs from 1M; ranks with a core each keep outputs below 8M in cache. 3 ranks bound
// to one CPU are oversubscribed on any machine, 2 ranks are not where 2 CPUs are allowed. (A
// broadcast: 2 ranks' all-reduce reduces into its output and streams nothing.)
TEST(Paths, OversubscribedRanksStreamSmallerOutputs) {
  const RankFiles logs("oversubscribed-test");
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  for (int n : {3, 2}) {
    if (n == 2 && CPU_COUNT(&allowed) < 2) continue;  // 2 ranks on one CPU stream at 1M too
    auto results =
        runProcesses(n, {{"WEFT_DEBUG", "TRACE"}, {"WEFT_DEBUG_SUBSYS", "COLL"}}, [&](int rank) {
          logs.route(rank);
          unsetenv("WEFT_SHM_STREAM_BYTES");
          if (n == 3) {
            int first = 0;
            while (!CPU_ISSET(first, &allowed))
              ++first;
            bindToCpu(first);
          }
          weftComm_t comm = nullptr;
          ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
          for (size_t count : {size_t{1} << 17, size_t{1} << 18, size_t{1} << 21})
            broadcastFromRank0(comm, rank, count);
          EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
        });
    expectAllOk(results);
    for (int rank = 0; rank < n; ++rank) {
      std::string text = logs.take(rank);
      EXPECT_NE(text.find("(131072 x int32, staged)"), std::string::npos) << text;
      const char* mebibyte =
          n == 3 ? "(262144 x int32, staged, streamed)" : "(262144 x int32, staged)";
      EXPECT_NE(text.find(mebibyte), std::string::npos) << text;
      EXPECT_NE(text.find("(2097152 x int32, staged, streamed)"), std::string::npos) << text;
    }
  }
}

// All-to-all, all-gather and broadcast with at least WEFT_SHM_SINGLE_COPY_BYTES per peer read
// their peers' buffers with one copy (WEFT_SHM_SINGLE_COPY=always: the deciders do not time);
// run between staged all-reduces, in and out of place, with odd counts, on 3 ranks. When one
// rank may not read the others' memory (a seccomp filter here), every rank stages instead.
// Inputs in weftMemAlloc memory on two ranks of three (new ones each round) are read as the
// heap is. Results are exact either way, and the trace says which path ran.
using Ints = std::vector<int32_t, WeftMemAllocator<int32_t>>;

enum class SingleCopyCase { kAllowed, kRefusedByOneRank, kTwoRanksWeftMem };

class SingleCopy : public ::testing::TestWithParam<SingleCopyCase> {};

TEST_P(SingleCopy, IsExactAndTraced) {
  const bool refused = GetParam() == SingleCopyCase::kRefusedByOneRank;
  const bool weftMem = GetParam() == SingleCopyCase::kTwoRanksWeftMem;
  const RankFiles logs("single-copy-test");
  const size_t block = 20011, reduced = 50001;  // 80K per peer, past the threshold below
  auto results = runProcesses(
      3,
      {{"WEFT_DEBUG", "TRACE"},
       {"WEFT_DEBUG_SUBSYS", "COLL"},
       {"WEFT_SHM_SINGLE_COPY_BYTES", "64K"},
       {"WEFT_SHM_SINGLE_COPY_COLLS", "allgather, broadcast, all_to_all"},
       {"WEFT_SHM_SINGLE_COPY_MAX_RANKS", "0"},
       {"WEFT_SHM_SINGLE_COPY", "always"},
       {"WEFT_TRANSPORT", "shm"}},
      [&](int rank) {
        logs.route(rank);
        if (refused && rank == 1) {
          ASSERT_TRUE(forbidCrossMemory());
        }
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
        weftMemAllocInForce() = weftMem && rank != 2;
        for (int round = 0; round < 2; ++round) {
          Ints send(3 * block), out(3 * block, -1);
          for (size_t i = 0; i < send.size(); ++i)
            send[i] = valueOf(rank, i);
          ASSERT_EQ(weftAllToAll(send.data(), out.data(), block, weftInt32, comm, nullptr),
                    weftSuccess)
              << weftGetLastError(comm);
          for (size_t i = 0; i < 3 * block; ++i) {
            ASSERT_EQ(out[i], valueOf(static_cast<int>(i / block), rank * block + i % block))
                << "all_to_all, element " << i;
          }
          std::vector<int32_t> sum(reduced);
          ASSERT_EQ(
              weftAllReduce(send.data(), sum.data(), reduced, weftInt32, weftSum, comm, nullptr),
              weftSuccess);
          for (size_t i = 0; i < reduced; ++i)
            ASSERT_EQ(sum[i], sumOf(i)) << "all_reduce, element " << i;
          ASSERT_EQ(weftAllGather(send.data(), out.data(), block, weftInt32, comm, nullptr),
                    weftSuccess);
          for (size_t i = 0; i < 3 * block; ++i)
            ASSERT_EQ(out[i], valueOf(static_cast<int>(i / block), i % block)) << "all_gather";
          Ints gathered(3 * block, -1);
          memcpy(gathered.data() + rank * block, send.data(), block * sizeof(int32_t));
          ASSERT_EQ(weftAllGather(gathered.data() + rank * block, gathered.data(), block, weftInt32,
                                  comm, nullptr),
                    weftSuccess);
          ASSERT_EQ(gathered, out) << "in-place all_gather";
          for (int root = 0; root < 3; ++root) {
            Ints b(3 * block, -1);
            if (rank == root) b = send;  // in place at the root
            ASSERT_EQ(weftBroadcast(b.data(), b.data(), 3 * block, weftInt32, root, comm, nullptr),
                      weftSuccess);
            for (size_t i = 0; i < b.size(); ++i)
              ASSERT_EQ(b[i], valueOf(root, i)) << "broadcast from " << root << ", element " << i;
          }
        }
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = logs.take(rank);
    for (const char* coll : {"all_to_all", "all_gather", "broadcast"}) {
      if (refused) {
        EXPECT_TRUE(logged(text, coll, "staged)")) << coll << "\n" << text;
        EXPECT_FALSE(logged(text, coll, "single copy)")) << coll << "\n" << text;
      } else {
        EXPECT_TRUE(logged(text, coll, "staged or single copy)", " went single copy"))
            << coll << "\n"
            << text;
        EXPECT_FALSE(logged(text, coll, ", staged)")) << coll << "\n" << text;
      }
    }
    EXPECT_TRUE(logged(text, "all_reduce", "sum, staged)")) << text;
    // A broadcast reads only the root's input: from ranks 0 and 1, in weftMemAlloc memory, it
    // goes mapped.
    EXPECT_EQ(text.find("broadcast #") != std::string::npos &&
                  text.find("went mapped") != std::string::npos,
              weftMem)
        << text;
  }
}

// By default (WEFT_SHM_SINGLE_COPY=auto), all-gathers and all-to-alls of 256K-2M per peer may
// go single copy, at any rank count (rank 0 chooses how each goes); a larger all-gather and a
// broadcast of the band's size stage. With WEFT_SHM_SINGLE_COPY=never, all stage.
TEST(SingleCopyDefaults, AllGathersAndAllToAllsUnlessNever) {
  for (const char* mode : {"", "never"}) {
    SCOPED_TRACE(std::string("WEFT_SHM_SINGLE_COPY=") + mode);
    const RankFiles logs("single-copy-defaults");
    const size_t small = 100003, large = 1u << 20;  // int32s: 400K and 4M per peer
    std::vector<std::pair<std::string, std::string>> env = {{"WEFT_DEBUG", "TRACE"},
                                                            {"WEFT_DEBUG_SUBSYS", "COLL"}};
    if (*mode != 0) env.emplace_back("WEFT_SHM_SINGLE_COPY", mode);
    const int n = 3;
    auto results = runProcesses(n, env, [&](int rank) {
      logs.route(rank);
      weftComm_t comm = nullptr;
      ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
      for (size_t count : {small, large}) {
        std::vector<int32_t> send(count), out(n * count, -1);
        for (size_t i = 0; i < count; ++i)
          send[i] = valueOf(rank, i);
        ASSERT_EQ(weftAllGather(send.data(), out.data(), count, weftInt32, comm, nullptr),
                  weftSuccess);
        for (size_t i = 0; i < n * count; ++i)
          ASSERT_EQ(out[i], valueOf(static_cast<int>(i / count), i % count)) << i;
      }
      std::vector<int32_t> send(n * small), out(n * small, -1);
      for (size_t i = 0; i < send.size(); ++i)
        send[i] = valueOf(rank, i);
      ASSERT_EQ(weftAllToAll(send.data(), out.data(), small, weftInt32, comm, nullptr),
                weftSuccess);
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_EQ(out[i], valueOf(static_cast<int>(i / small), rank * small + i % small)) << i;
      std::vector<int32_t> b(small, -1);
      if (rank == 0) b.assign(small, 7);
      ASSERT_EQ(weftBroadcast(b.data(), b.data(), small, weftInt32, 0, comm, nullptr), weftSuccess);
      EXPECT_EQ(b, std::vector<int32_t>(small, 7));
      EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
    });
    expectAllOk(results);
    for (int rank = 0; rank < n; ++rank) {
      std::string text = logs.take(rank);
      const bool band = *mode == 0;
      EXPECT_EQ(
          text.find("all_gather #0 (100003 x int32, staged or single copy") != std::string::npos,
          band)
          << text;
      EXPECT_EQ(
          text.find("all_to_all #2 (100003 x int32, staged or single copy") != std::string::npos,
          band)
          << text;
      EXPECT_NE(text.find("all_gather #1 (1048576 x int32, staged"), std::string::npos) << text;
      EXPECT_TRUE(logged(text, "broadcast", "staged)")) << text;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, SingleCopy,
                         ::testing::Values(SingleCopyCase::kAllowed,
                                           SingleCopyCase::kRefusedByOneRank,
                                           SingleCopyCase::kTwoRanksWeftMem),
                         [](const auto& info) {
                           switch (info.param) {
                             case SingleCopyCase::kRefusedByOneRank:
                               return "RefusedByOneRank";
                             case SingleCopyCase::kTwoRanksWeftMem:
                               return "TwoRanksWeftMem";
                             default:
                               return "Allowed";
                           }
                         });

// Buffers from weftMemAlloc on every rank: every collective above the direct size goes mapped
// (the trace says so) and is exact, also after the buffers are freed and allocated again (the
// peers' mappings of the old ones must not serve the new). One rank on the heap makes them all
// stage, but for broadcasts from another root, which read only the root's buffer.
class Mapped : public ::testing::TestWithParam<bool> {};

TEST_P(Mapped, IsExactAndTraced) {
  const bool oneOnHeap = GetParam();
  const RankFiles logs("mapped-test");
  const size_t block = 100003;
  auto results = runProcesses(
      3,
      {{"WEFT_DEBUG", "TRACE"},
       {"WEFT_DEBUG_SUBSYS", "COLL"},
       {"WEFT_SHM_SINGLE_COPY_BYTES", "0"}},  // all-gathers this size would go
      [&](int rank) {
        logs.route(rank);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
        weftMemAllocInForce() = !(oneOnHeap && rank == 2);
        for (int round = 0; round < 3; ++round) {  // new buffers each round
          Ints send(3 * block), out(3 * block);
          for (size_t i = 0; i < send.size(); ++i)
            send[i] = valueOf(rank, i + static_cast<size_t>(round));
          auto value = [&](int r, size_t i) { return valueOf(r, i + static_cast<size_t>(round)); };
          ASSERT_EQ(
              weftAllReduce(send.data(), out.data(), 3 * block, weftInt32, weftSum, comm, nullptr),
              weftSuccess)
              << weftGetLastError(comm);
          for (size_t i = 0; i < 3 * block; ++i)
            ASSERT_EQ(out[i], value(0, i) + value(1, i) + value(2, i)) << "all_reduce " << i;
          ASSERT_EQ(
              weftReduceScatter(send.data(), out.data(), block, weftInt32, weftSum, comm, nullptr),
              weftSuccess);
          for (size_t i = 0; i < block; ++i) {
            const size_t at = rank * block + i;
            ASSERT_EQ(out[i], value(0, at) + value(1, at) + value(2, at)) << "reduce_scatter";
          }
          ASSERT_EQ(
              weftReduce(send.data(), out.data(), block, weftInt32, weftSum, 1, comm, nullptr),
              weftSuccess);
          for (size_t i = 0; i < block && rank == 1; ++i)
            ASSERT_EQ(out[i], value(0, i) + value(1, i) + value(2, i)) << "reduce " << i;
          ASSERT_EQ(weftAllToAll(send.data(), out.data(), block, weftInt32, comm, nullptr),
                    weftSuccess);
          for (size_t i = 0; i < 3 * block; ++i) {
            ASSERT_EQ(out[i], value(static_cast<int>(i / block), rank * block + i % block))
                << "all_to_all " << i;
          }
          ASSERT_EQ(weftAllGather(send.data(), out.data(), block, weftInt32, comm, nullptr),
                    weftSuccess);
          for (size_t i = 0; i < 3 * block; ++i)
            ASSERT_EQ(out[i], value(static_cast<int>(i / block), i % block)) << "all_gather";
          for (int root : {0, 2}) {
            ASSERT_EQ(
                weftBroadcast(send.data(), out.data(), 3 * block, weftInt32, root, comm, nullptr),
                weftSuccess);
            for (size_t i = 0; i < 3 * block; ++i)
              ASSERT_EQ(out[i], value(root, i)) << "broadcast from " << root << ", " << i;
          }
        }
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = logs.take(rank);
    for (const char* coll :
         {"all_reduce", "reduce_scatter", "reduce", "all_to_all", "all_gather", "broadcast"}) {
      size_t wentMapped = 0;
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line);) {
        wentMapped += line.find(" " + std::string(coll) + " #") != std::string::npos &&
                      line.find("went mapped") != std::string::npos;
      }
      // A broadcast needs only the root's buffer: from rank 0 it goes mapped either way.
      const bool broadcast = std::string(coll) == "broadcast";
      const size_t expected = broadcast ? (oneOnHeap ? 3u : 6u) : (oneOnHeap ? 0u : 3u);
      EXPECT_EQ(wentMapped, expected) << coll << "\n" << text;
      EXPECT_TRUE(logged(text, coll, "staged)") || logged(text, coll, "staged, streamed)"))
          << coll << "\n"
          << text;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, Mapped, ::testing::Bool(), [](const auto& info) {
  return info.param ? "OneRankOnTheHeap" : "EveryRank";
});

// Ranks that disagree on the count of a staged all-reduce get an error, not a hang or a copy
// of the wrong size.
TEST(Paths, MismatchedStagedCountsFail) {
  auto results = runProcesses(2, {{"WEFT_TIMEOUT", "20"}}, [](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
    const size_t count = (1u << 20) + static_cast<size_t>(rank);
    std::vector<float> v(count, 1.0f);
    weftResult_t r = weftAllReduce(v.data(), v.data(), count, weftFloat32, weftSum, comm, nullptr);
    EXPECT_EQ(r, weftInvalidUsage) << weftGetErrorString(r) << ": " << weftGetLastError(comm);
    EXPECT_EQ(weftCommAbort(comm), weftSuccess);
  });
  expectAllOk(results);
}

// A WEFT_ALGO value as a test's name: "^mapped,singlecopy" is not_mapped_singlecopy.
std::string testNameOf(const char* algo) {
  std::string name;
  for (const char* p = algo; *p != '\0'; ++p) {
    if (std::isalnum(static_cast<unsigned char>(*p))) name += *p;
    if (*p == '^') name += "not_";
    if (*p == ';' || *p == ',') name += "_";
  }
  return name.empty() ? "default" : name;
}

// WEFT_ALGO names the shared-memory paths as it names the algorithms: a path where it fits the
// call; an algorithm alone leaves the paths out.
struct AlgoCase {
  const char* algo;
  const char* small;    // the path of a 4 KiB all-reduce
  const char* mid;      // of a 64 KiB one
  const char* large;    // of a 4 MiB one ("" where the cost model picks among the schedules)
  const char* barrier;  // of a barrier
};

class PathsByName : public ::testing::TestWithParam<AlgoCase> {};

TEST_P(PathsByName, WeftAlgoChoosesThem) {
  const AlgoCase c = GetParam();
  const RankFiles logs("paths-by-name-test");
  auto results = runProcesses(
      3, {{"WEFT_DEBUG", "TRACE"}, {"WEFT_DEBUG_SUBSYS", "COLL"}, {"WEFT_ALGO", c.algo}},
      [&](int rank) {
        logs.route(rank);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
        allReduce(comm, rank, 1024);
        allReduce(comm, rank, 16384);
        allReduce(comm, rank, 1u << 20);
        ASSERT_EQ(weftBarrier(comm, nullptr), weftSuccess);
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = logs.take(rank);
    EXPECT_TRUE(logged(text, "all_reduce", std::string("int32 sum, ") + c.small + ")")) << text;
    EXPECT_TRUE(logged(text, "all_reduce", std::string("int32 sum, ") + c.mid + ")")) << text;
    const std::string large = "(1048576 x int32 sum, ";
    const size_t at = text.find(large);
    ASSERT_NE(at, std::string::npos) << text;
    if (*c.large != '\0') {
      EXPECT_EQ(text.compare(at + large.size(), strlen(c.large), c.large), 0) << text;
    } else {
      EXPECT_NE(text.compare(at + large.size(), 6, "staged"), 0) << text;
      EXPECT_NE(text.compare(at + large.size(), 6, "direct"), 0) << text;
    }
    EXPECT_TRUE(logged(text, "barrier", std::string(", ") + c.barrier + ")")) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, PathsByName,
    // ring and staged have no barrier: it keeps every path and algorithm
    ::testing::Values(AlgoCase{"ring", "ring", "ring", "ring", "direct"},
                      AlgoCase{"direct", "direct", "direct", "", "direct"},
                      AlgoCase{"staged", "staged", "staged", "staged", "direct"},
                      AlgoCase{"^staged", "direct", "direct", "", "direct"},
                      AlgoCase{"^direct", "staged", "staged", "staged", "dissemination"},
                      AlgoCase{"allreduce:^direct", "staged", "staged", "staged", "direct"}),
    [](const auto& info) { return testNameOf(info.param.algo); });

// WEFT_ALGO names the ways of a staged call too. With every buffer in weftMemAlloc memory, an
// all-gather in the single-copy band (512K per rank) and one past it (4M), and a 4M all-reduce
// (which has no single copy), each checked.
struct WayCase {
  const char* algo;
  const char* gather;  // what the all-gathers' trace says they went: "mapped", "single copy", ""
  const char* reduce;  // the all-reduce's
};

class WaysByName : public ::testing::TestWithParam<WayCase> {};

TEST_P(WaysByName, WeftAlgoChoosesThem) {
  const WayCase c = GetParam();
  const RankFiles logs("ways-by-name-test");
  auto results = runProcesses(
      3, {{"WEFT_DEBUG", "TRACE"}, {"WEFT_DEBUG_SUBSYS", "COLL"}, {"WEFT_ALGO", c.algo}},
      [&](int rank) {
        logs.route(rank);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
        weftMemAllocInForce() = true;
        for (size_t block : {size_t{128} << 10, size_t{1} << 20}) {
          Ints send(block), out(3 * block, -1);
          for (size_t i = 0; i < block; ++i)
            send[i] = valueOf(rank, i);
          ASSERT_EQ(weftAllGather(send.data(), out.data(), block, weftInt32, comm, nullptr),
                    weftSuccess)
              << weftGetLastError(comm);
          for (size_t i = 0; i < out.size(); ++i)
            ASSERT_EQ(out[i], valueOf(static_cast<int>(i / block), i % block)) << "all_gather";
        }
        const size_t count = size_t{1} << 20;
        Ints send(count), sum(count, -1);
        for (size_t i = 0; i < count; ++i)
          send[i] = valueOf(rank, i);
        ASSERT_EQ(weftAllReduce(send.data(), sum.data(), count, weftInt32, weftSum, comm, nullptr),
                  weftSuccess);
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(sum[i], sumOf(i)) << "all_reduce, element " << i;
        weftMemAllocInForce() = false;
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  // How many of coll's calls the trace says went `way`.
  const auto went = [](const std::string& text, const std::string& coll, const std::string& way) {
    size_t n = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      n += line.find(" " + coll + " #") != std::string::npos &&
           line.find("went " + way) != std::string::npos;
    }
    return n;
  };
  for (int rank = 0; rank < 3; ++rank) {
    const std::string text = logs.take(rank);
    for (const char* way : {"mapped", "single copy"}) {
      EXPECT_EQ(went(text, "all_gather", way), c.gather == std::string(way) ? 2u : 0u)
          << way << "\n"
          << text;
      EXPECT_EQ(went(text, "all_reduce", way), c.reduce == std::string(way) ? 1u : 0u)
          << way << "\n"
          << text;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, WaysByName,
    ::testing::Values(WayCase{"", "mapped", "mapped"}, WayCase{"mapped", "mapped", "mapped"},
                      WayCase{"singlecopy", "single copy", "mapped"}, WayCase{"staged", "", ""},
                      WayCase{"^mapped,singlecopy", "", ""},
                      WayCase{"allgather:singlecopy;staged", "single copy", ""}),
    [](const auto& info) { return testNameOf(info.param.algo); });

}  // namespace
}  // namespace weft::test
