// TrafficStats: what one thread files, any other reads and resets meanwhile; a read never
// goes below a reset (the counters wrapping to 2^64), and counting goes on past it.
#include "src/comm/traffic_stats.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace weft {
namespace {

TEST(TrafficStats, FilesCallsBytesAndTraffic) {
  TrafficStats stats;
  stats.current()->sent = 100;
  stats.current()->received = 40;
  stats.file(weftStatsAllReduce, 1, 8, true, true);
  stats.current()->sent = 7;
  stats.file(weftStatsSend, 2, 7, true, false);
  weftCommStats_t s{};
  stats.read(&s);
  EXPECT_EQ(s.byKind[weftStatsAllReduce].calls, 1u);
  EXPECT_EQ(s.byKind[weftStatsAllReduce].bytes, 8u);
  EXPECT_EQ(s.byKind[weftStatsAllReduce].bytesSent, 100u);
  EXPECT_EQ(s.byKind[weftStatsAllReduce].bytesReceived, 40u);
  EXPECT_EQ(s.byKind[weftStatsSend].calls, 2u);
  EXPECT_EQ(s.total.calls, 3u);
  EXPECT_EQ(s.total.bytesSent, 107u);
  EXPECT_EQ(stats.current()->sent, 0u);

  stats.reset();
  stats.read(&s);
  EXPECT_EQ(s.total.calls, 0u);
  EXPECT_EQ(s.total.bytesSent, 0u);
  stats.file(weftStatsAllReduce, 1, 8, true, true);
  stats.reset();
  stats.reset();
  stats.file(weftStatsAllReduce, 1, 8, true, true);
  stats.read(&s);
  EXPECT_EQ(s.byKind[weftStatsAllReduce].calls, 1u);
  EXPECT_EQ(s.byKind[weftStatsAllReduce].bytes, 8u);
}

TEST(TrafficStats, ReadsAndResetsBesideAFilingThread) {
  TrafficStats stats;
  constexpr uint64_t kCalls = 200000;
  std::atomic<bool> done{false};
  std::thread filer([&] {
    for (uint64_t i = 0; i < kCalls; ++i)
      stats.file(weftStatsAllGather, 1, 4, false, false);
    done.store(true);
  });
  uint64_t reads = 0;
  while (!done.load()) {
    if (reads % 3 == 0) stats.reset();
    weftCommStats_t s{};
    stats.read(&s);
    ASSERT_LE(s.byKind[weftStatsAllGather].calls, kCalls) << "after " << reads << " reads";
    ASSERT_EQ(s.byKind[weftStatsAllGather].bytes % 4, 0u);
    ++reads;
  }
  filer.join();
  stats.reset();
  stats.file(weftStatsAllGather, 1, 4, false, false);
  weftCommStats_t s{};
  stats.read(&s);
  EXPECT_EQ(s.byKind[weftStatsAllGather].calls, 1u);
  EXPECT_EQ(s.total.bytes, 4u);
}

}  // namespace
}  // namespace weft
