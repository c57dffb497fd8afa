// Two processes over real tcp sockets, with sends paced against receives
// (WEFT_SOCKET_PACE_BYTES, Executor::sendBudget): exchanges far larger than the pace arrive
// whole, and a send whose answer comes only in the peer's next call still finishes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

// Bytes from `rank`, differing at every position and between ranks.
std::vector<uint8_t> pattern(size_t bytes, int rank) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i)
    v[i] = static_cast<uint8_t>((i * 131 + i / 251 + static_cast<size_t>(rank) * 17) & 0xFF);
  return v;
}

struct Pace {
  const char* variable;  // WEFT_SOCKET_PACE_BYTES
  size_t bytes;
};

class TcpPacing : public ::testing::TestWithParam<Pace> {};

TEST_P(TcpPacing, ExchangesArriveWholeAndLateAnswersFinish) {
  const Pace pace = GetParam();
  const size_t big = (6u << 20) + 40, small = 1000;
  const RankFiles logs("tcp-pacing-test");
  auto results = runProcesses(
      2,
      {{"WEFT_TRANSPORT", "tcp"},
       {"WEFT_TIMEOUT", "60"},
       {"WEFT_SOCKET_PACE_BYTES", pace.variable},
       {"WEFT_DEBUG", "INFO"},
       {"WEFT_DEBUG_SUBSYS", "NET"}},
      [&](int rank) {
        logs.route(rank);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        const int peer = 1 - rank;

        // Both directions at once, in one group.
        std::vector<uint8_t> out = pattern(big, rank), in(big, 0);
        ASSERT_EQ(weftGroupStart(), weftSuccess);
        ASSERT_EQ(weftSend(out.data(), big, weftUint8, peer, comm, nullptr), weftSuccess);
        ASSERT_EQ(weftRecv(in.data(), big, weftUint8, peer, comm, nullptr), weftSuccess);
        ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(comm);
        ASSERT_TRUE(in == pattern(big, peer)) << "rank " << rank << ": the exchange differs";

        // Rank 0 awaits the answer in the call that sends; rank 1 answers in its next call.
        std::vector<uint8_t> answer(small, 0);
        if (rank == 0) {
          ASSERT_EQ(weftGroupStart(), weftSuccess);
          ASSERT_EQ(weftSend(out.data(), big, weftUint8, peer, comm, nullptr), weftSuccess);
          ASSERT_EQ(weftRecv(answer.data(), small, weftUint8, peer, comm, nullptr), weftSuccess);
          ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(comm);
          ASSERT_TRUE(answer == pattern(small, peer)) << "the answer differs";
        } else {
          std::fill(in.begin(), in.end(), 0);
          ASSERT_EQ(weftRecv(in.data(), big, weftUint8, peer, comm, nullptr), weftSuccess)
              << weftGetLastError(comm);
          ASSERT_TRUE(in == pattern(big, peer)) << "the late-answered message differs";
          answer = pattern(small, rank);
          ASSERT_EQ(weftSend(answer.data(), small, weftUint8, peer, comm, nullptr), weftSuccess)
              << weftGetLastError(comm);
        }

        // An all-reduce whose two halves cross at once, checked against sums made here.
        const size_t count = (3u << 20) + 7;
        std::vector<int32_t> mine(count), sum(count, 0);
        for (size_t i = 0; i < count; ++i)
          mine[i] = static_cast<int32_t>(i % 9973) * (rank + 1);
        ASSERT_EQ(weftAllReduce(mine.data(), sum.data(), count, weftInt32, weftSum, comm, nullptr),
                  weftSuccess)
            << weftGetLastError(comm);
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(sum[i], static_cast<int32_t>(i % 9973) * 3) << "element " << i;
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      },
      120);
  expectAllOk(results);
  // The variable reached the links.
  const std::string line = "sends paced to " + std::to_string(pace.bytes) + " bytes";
  for (int rank = 0; rank < 2; ++rank) {
    std::string text = logs.take(rank);
    EXPECT_NE(text.find(line), std::string::npos) << text;
  }
}

// The default pace, a small one (many holds a call), and pacing off.
INSTANTIATE_TEST_SUITE_P(Paces, TcpPacing,
                         ::testing::Values(Pace{"512K", 512u << 10}, Pace{"4K", 4u << 10},
                                           Pace{"0", 0}),
                         [](const ::testing::TestParamInfo<Pace>& info) {
                           return "pace_" + std::to_string(info.param.bytes);
                         });

}  // namespace
}  // namespace weft::test
