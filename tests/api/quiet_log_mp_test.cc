// weftConfig_t.logCalls = 0: a communicator for a tool's own bookkeeping whose calls leave no
// COLL log lines, blocking or on a stream, while the other communicators' calls keep theirs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

// An all-reduce of `count` int32 (each count is used once, so the log names it once).
void allReduce(weftComm_t comm, size_t count, weftStream_t stream) {
  std::vector<int32_t> v(count, 1), out(count, 0);
  ASSERT_EQ(weftAllReduce(v.data(), out.data(), count, weftInt32, weftSum, comm, stream),
            weftSuccess)
      << weftGetLastError(comm);
  if (stream != nullptr) {
    ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess);
  }
  ASSERT_EQ(out[count - 1], 2);
}

bool mentions(const std::string& log, size_t count) {
  return log.find("(" + std::to_string(count) + " x int32") != std::string::npos;
}

TEST(QuietLog, QuietCommunicatorsLeaveNoCollLines) {
  const RankFiles logs("quiet-log-test");
  auto results =
      runProcesses(2, {{"WEFT_DEBUG", "TRACE"}, {"WEFT_DEBUG_SUBSYS", "COLL"}}, [&](int rank) {
        logs.route(rank);
        weftComm_t loud = nullptr, quiet = nullptr, child = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&loud), weftSuccess);
        weftConfig_t config = WEFT_CONFIG_INITIALIZER;
        config.logCalls = 0;
        ASSERT_EQ(weftCommSplit(loud, 0, rank, &quiet, &config), weftSuccess);
        // A split without a config inherits the parent's setting.
        ASSERT_EQ(weftCommSplit(quiet, 0, rank, &child, nullptr), weftSuccess);
        weftStream_t stream = nullptr;
        ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
        allReduce(quiet, 771, nullptr);
        allReduce(quiet, 772, stream);
        allReduce(child, 773, nullptr);
        allReduce(loud, 774, nullptr);
        allReduce(loud, 775, stream);
        EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
        for (weftComm_t c : {child, quiet, loud})
          EXPECT_EQ(weftCommDestroy(c), weftSuccess);
      });
  expectAllOk(results);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string log = logs.take(rank);
    EXPECT_TRUE(mentions(log, 774)) << log;
    EXPECT_TRUE(mentions(log, 775)) << log;
    for (size_t quietCount : {771, 772, 773})
      EXPECT_FALSE(mentions(log, quietCount)) << quietCount << "\n" << log;
  }
}

}  // namespace
}  // namespace weft::test
