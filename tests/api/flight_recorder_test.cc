// The flight recorder on its own: what it keeps, in what order, how states move, and that a
// snapshot taken while another thread records sees only whole records.
#include "src/comm/flight_recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace weft {
namespace {

RecordedCall collectiveCall(uint64_t what) {
  RecordedCall c;
  c.what = what;
  c.count = what * 10;
  c.collective = 0;  // numbered by the recorder
  return c;
}

RecordedCall sendCall() {
  RecordedCall c;
  c.what = 7;
  c.count = 3;
  c.collective = -1;
  return c;
}

TEST(FlightRecorder, KeepsTheLastCallsOldestFirstAndNumbersCollectivesOnly) {
  FlightRecorder r(4);
  std::vector<uint64_t> ids;
  ids.push_back(r.add(collectiveCall(1)));  // collective 0
  ids.push_back(r.add(sendCall()));
  ids.push_back(r.add(collectiveCall(2)));  // collective 1
  ids.push_back(r.add(collectiveCall(3)));  // collective 2
  ids.push_back(r.add(sendCall()));
  ids.push_back(r.add(collectiveCall(4)));  // collective 3
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  std::vector<CallRecord> kept = r.snapshot();
  ASSERT_EQ(kept.size(), 4u);  // the first two were overwritten
  EXPECT_EQ(kept[0].id, 3u);
  EXPECT_EQ(kept[0].call.what, 2u);
  EXPECT_EQ(kept[0].call.count, 20u);
  EXPECT_EQ(kept[0].call.collective, 1);
  EXPECT_EQ(kept[1].call.collective, 2);
  EXPECT_EQ(kept[2].call.collective, -1);
  EXPECT_EQ(kept[3].call.collective, 3);
  for (const CallRecord& c : kept) {
    EXPECT_EQ(c.state, CallState::kEnqueued);
    EXPECT_GT(c.enqueuedNs, 0);
    EXPECT_EQ(c.startedNs, 0);
  }
}

TEST(FlightRecorder, StatesMoveOnlyForRecordsStillKept) {
  FlightRecorder r(2);
  const uint64_t a = r.add(collectiveCall(1));
  const uint64_t b = r.add(collectiveCall(2));
  r.start(a, 0x51);
  r.finish(a);
  r.start(b, 0x61);
  r.fail(b, 6);
  const uint64_t c = r.add(collectiveCall(3));  // overwrites a
  r.start(a, 0x71);                             // a is gone: no effect on c
  std::vector<CallRecord> kept = r.snapshot();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].id, b);
  EXPECT_EQ(kept[0].state, CallState::kFailed);
  EXPECT_EQ(kept[0].result, 6);
  EXPECT_EQ(kept[0].how, 0x61u);
  EXPECT_LE(kept[0].startedNs, kept[0].endedNs);
  EXPECT_EQ(kept[1].id, c);
  EXPECT_EQ(kept[1].state, CallState::kEnqueued);
  EXPECT_EQ(kept[1].how, 0u);
}

TEST(FlightRecorder, OffRecordsNothing) {
  FlightRecorder r(0);
  EXPECT_EQ(r.add(collectiveCall(1)), 0u);
  r.start(0, 1);
  r.finish(0);
  EXPECT_TRUE(r.snapshot().empty());
}

// A record's fields belong together: what = its collective number + 1, count = 10 * what. A
// snapshot that mixed two records' fields would break that.
TEST(FlightRecorder, SnapshotsWhileRecordingSeeWholeRecords) {
  FlightRecorder r(16);
  std::atomic<bool> done{false};
  std::atomic<bool> looked{false};  // the reader has seen records: on a loaded machine it may
                                    // not run at all before 200,000 are written
  std::thread writer([&] {
    for (uint64_t i = 1; i <= 200'000 || (!looked.load() && i <= 100'000'000); ++i) {
      const uint64_t id = r.add(collectiveCall(i));
      r.start(id, i);
      r.finish(id);
    }
    done = true;
  });
  size_t seen = 0;
  while (!done.load()) {
    uint64_t last = 0;
    for (const CallRecord& c : r.snapshot()) {
      ASSERT_GT(c.id, last);
      last = c.id;
      ASSERT_EQ(c.call.what, static_cast<uint64_t>(c.call.collective) + 1);
      ASSERT_EQ(c.call.count, c.call.what * 10);
      ASSERT_EQ(c.id, c.call.what);
      ++seen;
    }
    if (seen > 0) looked = true;
  }
  writer.join();
  EXPECT_GT(seen, 0u);
}

}  // namespace
}  // namespace weft
