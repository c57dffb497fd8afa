// weftCommGetStats across processes: calls and sizes counted per kind on every path, and the
// bytes each rank sent and received against the volumes of the algorithms forced (ring over tcp
// and over shm's byte rings), conserved across ranks; bounds on shm's own paths; reset; misuse.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

constexpr int kRanks = 3;
constexpr size_t kBlock = 4096;  // int32 elements per rank's block

struct Path {
  const char* name;
  EnvList env;
  bool messages;  // every byte goes in messages over links, by rings
};

std::vector<Path> paths() {
  return {
      {"tcp_rings", {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_ALGO", "ring"}}, true},
      {"shm_rings",
       {{"WEFT_TRANSPORT", "shm"},
        {"WEFT_ALGO", "ring"},
        {"WEFT_DIRECT_BYTES", "0"},
        {"WEFT_SHM_STAGING_BYTES", "0"}},
       true},
      {"shm", {{"WEFT_TRANSPORT", "shm"}}, false},
  };
}

class Stats : public ::testing::TestWithParam<Path> {};

weftCommStats_t statsOf(weftComm_t comm) {
  weftCommStats_t s{};
  s.size = sizeof(s);
  EXPECT_EQ(weftCommGetStats(comm, &s), weftSuccess) << weftGetLastError(comm);
  return s;
}

// One call of each kind, then a send from rank 0 to rank 1 of 1000 int64.
void runOneOfEach(weftComm_t comm, int rank) {
  const size_t n = kRanks * kBlock;
  std::vector<int32_t> in(n, rank + 1), out(n, 0);
  ASSERT_EQ(weftAllReduce(in.data(), out.data(), n, weftInt32, weftSum, comm, nullptr),
            weftSuccess);
  ASSERT_EQ(out[n - 1], 6);
  ASSERT_EQ(weftReduceScatter(in.data(), out.data(), kBlock, weftInt32, weftSum, comm, nullptr),
            weftSuccess);
  ASSERT_EQ(weftAllGather(in.data(), out.data(), kBlock, weftInt32, comm, nullptr), weftSuccess);
  ASSERT_EQ(weftBroadcast(in.data(), out.data(), n, weftInt32, 0, comm, nullptr), weftSuccess);
  ASSERT_EQ(weftReduce(in.data(), out.data(), n, weftInt32, weftSum, 1, comm, nullptr),
            weftSuccess);
  ASSERT_EQ(weftAllToAll(in.data(), out.data(), kBlock, weftInt32, comm, nullptr), weftSuccess);
  ASSERT_EQ(weftBarrier(comm, nullptr), weftSuccess);
  std::vector<int64_t> msg(1000, 42);
  if (rank == 0) {
    ASSERT_EQ(weftSend(msg.data(), 1000, weftInt64, 1, comm, nullptr), weftSuccess);
  } else if (rank == 1) {
    ASSERT_EQ(weftRecv(msg.data(), 1000, weftInt64, 0, comm, nullptr), weftSuccess);
  }
}

TEST_P(Stats, CountsCallsSizesAndTraffic) {
  const Path& path = GetParam();
  EnvList env = path.env;
  env.emplace_back("WEFT_TIMEOUT", "60");
  auto results = runProcesses(kRanks, env, [&](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    // Nothing yet: init's own traffic belongs to no call.
    weftCommStats_t s = statsOf(comm);
    EXPECT_EQ(s.total.calls, 0u);
    EXPECT_EQ(s.total.bytesSent, 0u);
    EXPECT_EQ(s.total.bytesReceived, 0u);

    runOneOfEach(comm, rank);
    s = statsOf(comm);
    const uint64_t block = kBlock * sizeof(int32_t), whole = kRanks * block;
    const weftCallStats_t& ar = s.byKind[weftStatsAllReduce];
    const weftCallStats_t& rs = s.byKind[weftStatsReduceScatter];
    const weftCallStats_t& ag = s.byKind[weftStatsAllGather];
    const weftCallStats_t& bc = s.byKind[weftStatsBroadcast];
    const weftCallStats_t& rd = s.byKind[weftStatsReduce];
    const weftCallStats_t& aa = s.byKind[weftStatsAllToAll];
    for (weftStatsKind_t k : {weftStatsAllReduce, weftStatsReduceScatter, weftStatsAllGather,
                              weftStatsBroadcast, weftStatsReduce, weftStatsAllToAll}) {
      EXPECT_EQ(s.byKind[k].calls, 1u) << "kind " << k;
      EXPECT_EQ(s.byKind[k].bytes, whole) << "kind " << k;
    }
    EXPECT_EQ(s.byKind[weftStatsBarrier].calls, 1u);
    EXPECT_EQ(s.byKind[weftStatsBarrier].bytes, 0u);
    EXPECT_EQ(s.byKind[weftStatsSend].calls, rank == 0 ? 1u : 0u);
    EXPECT_EQ(s.byKind[weftStatsSend].bytes, rank == 0 ? 8000u : 0u);
    EXPECT_EQ(s.byKind[weftStatsRecv].calls, rank == 1 ? 1u : 0u);
    EXPECT_EQ(s.byKind[weftStatsRecv].bytes, rank == 1 ? 8000u : 0u);
    EXPECT_EQ(s.byKind[weftStatsSend].bytesSent, rank == 0 ? 8000u : 0u);
    EXPECT_EQ(s.byKind[weftStatsRecv].bytesReceived, rank == 1 ? 8000u : 0u);
    EXPECT_EQ(s.byKind[weftStatsSend].bytesReceived, 0u);
    EXPECT_EQ(s.byKind[weftStatsRecv].bytesSent, 0u);
    uint64_t calls = 0, sent = 0;
    for (const weftCallStats_t& k : s.byKind) {
      calls += k.calls;
      sent += k.bytesSent;
    }
    EXPECT_EQ(s.total.calls, calls);
    EXPECT_EQ(s.total.bytesSent, sent);

    const uint64_t others = kRanks - 1;
    if (path.messages) {
      // A ring all-reduce sends and receives 2(N-1)/N of the data; a ring reduce-scatter and
      // all-gather (N-1)/N.
      EXPECT_EQ(ar.bytesSent, 2 * others * block);
      EXPECT_EQ(ar.bytesReceived, 2 * others * block);
      EXPECT_EQ(rs.bytesSent, others * block);
      EXPECT_EQ(rs.bytesReceived, others * block);
      EXPECT_EQ(ag.bytesSent, others * block);
      EXPECT_EQ(ag.bytesReceived, others * block);
      EXPECT_EQ(bc.bytesReceived, rank == 0 ? 0u : whole);
      // Every rank sends each other its block, and the reduce's root gets the others' data.
      EXPECT_EQ(aa.bytesSent, others * block);
      EXPECT_EQ(aa.bytesReceived, others * block);
      if (rank == 1) {
        EXPECT_GE(rd.bytesReceived, others * whole / kRanks);
      }
    } else {
      // Shared memory: each rank must get what it lacks of the others' data, and reads no
      // peer's more than once.
      EXPECT_GE(ar.bytesReceived, others * whole / kRanks);
      EXPECT_LE(ar.bytesReceived, others * whole);
      EXPECT_GE(ar.bytesSent, others * whole / kRanks);
      // A rank's own block of a reduce-scatter or all-to-all never leaves it.
      EXPECT_EQ(rs.bytesReceived, others * block);
      EXPECT_EQ(rs.bytesSent, others * block);
      EXPECT_EQ(aa.bytesReceived, others * block);
      EXPECT_EQ(aa.bytesSent, others * block);
      EXPECT_EQ(ag.bytesReceived, others * block);
      // The reduce's root gets at least what it lacks of the others' data, and each of the
      // others gives some.
      if (rank == 1) {
        EXPECT_GE(rd.bytesReceived, others * whole / kRanks);
      } else {
        EXPECT_GE(rd.bytesSent, whole / kRanks);
      }
      EXPECT_EQ(bc.bytesReceived, rank == 0 ? 0u : whole);
      EXPECT_EQ(bc.bytesSent, rank == 0 ? whole : 0u);
    }

    // What all ranks sent of a collective, they received, where every byte is a message; and
    // what sends sent, receives received.
    std::vector<uint64_t> mine;
    for (int k = 0; k < weftStatsSend; ++k) {
      mine.push_back(s.byKind[k].bytesSent);
      mine.push_back(s.byKind[k].bytesReceived);
    }
    mine.push_back(s.byKind[weftStatsSend].bytesSent);
    mine.push_back(s.byKind[weftStatsRecv].bytesReceived);
    std::vector<uint64_t> all(mine.size() * kRanks);
    ASSERT_EQ(weftAllGather(mine.data(), all.data(), mine.size(), weftUint64, comm, nullptr),
              weftSuccess);
    if (path.messages) {
      for (size_t k = 0; k < mine.size(); k += 2) {
        uint64_t sentAll = 0, receivedAll = 0;
        for (int r = 0; r < kRanks; ++r) {
          sentAll += all[r * mine.size() + k];
          receivedAll += all[r * mine.size() + k + 1];
        }
        EXPECT_EQ(sentAll, receivedAll) << "kind " << k / 2;
      }
    }

    // Reset: zero, and counting goes on.
    ASSERT_EQ(weftCommResetStats(comm), weftSuccess);
    s = statsOf(comm);
    EXPECT_EQ(s.total.calls, 0u);
    EXPECT_EQ(s.total.bytesReceived, 0u);
    int32_t one = 1, sum = 0;
    ASSERT_EQ(weftAllReduce(&one, &sum, 1, weftInt32, weftSum, comm, nullptr), weftSuccess);
    s = statsOf(comm);
    EXPECT_EQ(s.byKind[weftStatsAllReduce].calls, 1u);
    EXPECT_EQ(s.byKind[weftStatsAllReduce].bytes, 4u);
    EXPECT_GE(s.byKind[weftStatsAllReduce].bytesReceived, 4u);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

// Calls on a stream are counted once they ran.
TEST_P(Stats, CountsStreamCallsOnceTheyRan) {
  EnvList env = GetParam().env;
  env.emplace_back("WEFT_TIMEOUT", "60");
  auto results = runProcesses(2, env, [&](int) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    weftStream_t stream = nullptr;
    ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
    std::vector<float> v(1 << 16, 1.0f);
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(weftAllReduce(v.data(), v.data(), v.size(), weftFloat32, weftSum, comm, stream),
                weftSuccess);
    }
    ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess) << weftGetLastError(comm);
    EXPECT_EQ(v[0], 32.0f);
    const weftCommStats_t s = statsOf(comm);
    EXPECT_EQ(s.byKind[weftStatsAllReduce].calls, 5u);
    EXPECT_EQ(s.byKind[weftStatsAllReduce].bytes, 5u * v.size() * sizeof(float));
    EXPECT_GE(s.byKind[weftStatsAllReduce].bytesReceived, 5u * v.size() * sizeof(float) / 2);
    ASSERT_EQ(weftStreamDestroy(stream), weftSuccess);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

INSTANTIATE_TEST_SUITE_P(Paths, Stats, ::testing::ValuesIn(paths()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(StatsMisuse, NullSizeAndHandleAreErrors) {
  auto results = runProcesses(1, {{"WEFT_TIMEOUT", "60"}}, [&](int) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    EXPECT_EQ(weftCommGetStats(comm, nullptr), weftInvalidArgument);
    EXPECT_NE(std::string(weftGetLastError(nullptr)).find("stats is NULL"), std::string::npos);
    weftCommStats_t s{};
    s.size = 4;
    EXPECT_EQ(weftCommGetStats(comm, &s), weftInvalidArgument);
    EXPECT_NE(std::string(weftGetLastError(nullptr)).find("too small"), std::string::npos);
    // A caller built with fewer kinds gets those, and nothing past them is written.
    int32_t x = 1;
    ASSERT_EQ(weftAllReduce(&x, &x, 1, weftInt32, weftSum, comm, nullptr), weftSuccess);
    ASSERT_EQ(weftBarrier(comm, nullptr), weftSuccess);
    memset(&s, 0x5a, sizeof(s));
    s.size = offsetof(weftCommStats_t, byKind) + 3 * sizeof(weftCallStats_t);
    ASSERT_EQ(weftCommGetStats(comm, &s), weftSuccess);
    EXPECT_EQ(s.total.calls, 2u);
    EXPECT_EQ(s.byKind[weftStatsAllReduce].calls, 1u);  // kind 2, the third
    EXPECT_EQ(s.byKind[weftStatsBarrier].calls, 0x5a5a5a5a5a5a5a5au);
    EXPECT_EQ(weftCommGetStats(nullptr, &s), weftInvalidArgument);
    EXPECT_EQ(weftCommResetStats(nullptr), weftInvalidArgument);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
