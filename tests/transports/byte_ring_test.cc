// ByteRing's end of stream: bytes written before a close are delivered before the close shows.
#include "transports/byte_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace weft {
namespace {

struct Ring {
  RingControl control;
  std::vector<char> data = std::vector<char>(64);
  ByteRing producer;
  ByteRing consumer;
  Ring() {
    ByteRing::initialize(&control);
    producer = ByteRing(&control, data.data(), data.size(), 16);
    consumer = ByteRing(&control, data.data(), data.size(), 16);
  }
};

std::string peekText(ByteRing& r, bool* open) {
  const void* view = nullptr;
  size_t bytes = 0;
  *open = r.peekUnlessEnded(&view, &bytes);
  return std::string(static_cast<const char*>(view), view == nullptr ? 0 : bytes);
}

TEST(ByteRing, WhatWasWrittenBeforeTheCloseIsDeliveredFirst) {
  Ring r;
  bool open = false;
  EXPECT_EQ(peekText(r.consumer, &open), "");  // leaves the consumer's view of the head stale
  EXPECT_TRUE(open);
  ASSERT_EQ(r.producer.write("last words", 10), 10u);
  r.producer.close();
  EXPECT_EQ(peekText(r.consumer, &open), "last words");
  EXPECT_TRUE(open);
  r.consumer.consume(10);
  EXPECT_EQ(peekText(r.consumer, &open), "");
  EXPECT_FALSE(open) << "closed and drained is the end";
}

TEST(ByteRing, AFarewellShowsOnceClosedAndOnlyTheFirstCounts) {
  Ring r;
  EXPECT_EQ(r.consumer.farewell().origin, -1);
  r.producer.leaveFarewell(Farewell{3, "rank 3 of 4: timed out"});
  EXPECT_EQ(r.consumer.farewell().origin, -1) << "not before the close";
  r.producer.leaveFarewell(Farewell{1, "later"});
  r.producer.close();
  Farewell f = r.consumer.farewell();
  EXPECT_EQ(f.origin, 3);
  EXPECT_EQ(f.message, "rank 3 of 4: timed out");
}

TEST(ByteRing, AClosedRingWithoutFarewellHasNone) {
  Ring r;
  r.producer.close();
  EXPECT_EQ(r.consumer.farewell().origin, -1);
}

TEST(ByteRing, OpenAndEmptyIsNotTheEnd) {
  Ring r;
  bool open = false;
  EXPECT_EQ(peekText(r.consumer, &open), "");
  EXPECT_TRUE(open);
}

}  // namespace
}  // namespace weft
