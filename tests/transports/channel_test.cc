// Channel over a loopback pair with a tiny ring, so that headers and payloads arrive in pieces:
// a header read ahead (peekHeader, for a receive from any source) is taken by the receive that
// follows, checked as any other, and counted once.
#include "transports/channel.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "transports/loopback/loopback_link.h"

namespace weft {
namespace {

constexpr uint64_t kTag = 77;

// Moves `out` from a to b as far as the ring allows; true once all is sent.
bool pump(Channel& from, OutgoingMessage& out) {
  bool done = false;
  EXPECT_TRUE(from.progressSend(out, &done).ok());
  return done;
}

TEST(Channel, AHeaderReadAheadIsTakenByTheReceiveAndCountedOnce) {
  auto [a, b] = makeLoopbackPair(32);  // more than half a header, less than a whole one
  Channel sender(a.get(), kTag, 0, 1), receiver(b.get(), kTag, 1, 0);
  std::vector<int32_t> data(100), got(100, -1);
  std::iota(data.begin(), data.end(), 5);
  OutgoingMessage out;
  out.data = data.data();
  out.bytes = sizeof(int32_t) * data.size();
  out.flags = kPointToPointMessage;

  // The header arrives in two pieces; the look-ahead reports it only when whole.
  const MessageHeader* header = nullptr;
  EXPECT_FALSE(pump(sender, out));
  ASSERT_TRUE(receiver.peekHeader(&header).ok());
  EXPECT_EQ(header, nullptr);
  EXPECT_FALSE(pump(sender, out));
  ASSERT_TRUE(receiver.peekHeader(&header).ok());
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->flags, kPointToPointMessage);
  EXPECT_EQ(header->bytes, out.bytes);
  ASSERT_TRUE(receiver.peekHeader(&header).ok());  // again: the same header, nothing read
  ASSERT_NE(header, nullptr);

  IncomingMessage in;
  in.data = got.data();
  in.bytes = out.bytes;
  in.flags = kPointToPointMessage;
  bool received = false, sent = false;
  while (!received) {
    if (!sent) sent = pump(sender, out);
    ASSERT_TRUE(receiver.progressRecv(in, &received).ok());
  }
  EXPECT_EQ(got, data);
  EXPECT_EQ(receiver.bytesReceived(), sender.bytesSent());
  EXPECT_EQ(receiver.recvSequence(), 1u);
}

TEST(Channel, AReceiveOfAnotherSizeAfterALookAheadIsRefused) {
  auto [a, b] = makeLoopbackPair(1024);
  Channel sender(a.get(), kTag, 0, 1), receiver(b.get(), kTag, 1, 0);
  std::vector<int32_t> data(100, 3), got(50, -1);
  OutgoingMessage out;
  out.data = data.data();
  out.bytes = sizeof(int32_t) * data.size();
  ASSERT_TRUE(pump(sender, out));
  const MessageHeader* header = nullptr;
  ASSERT_TRUE(receiver.peekHeader(&header).ok());
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->flags, 0);  // a collective's message carries no flag

  IncomingMessage in;
  in.data = got.data();
  in.bytes = sizeof(int32_t) * got.size();
  bool done = false;
  Status s = receiver.progressRecv(in, &done);
  EXPECT_EQ(s.code(), weftInvalidUsage);
  EXPECT_NE(s.message().find("rank 0 sent 400 bytes where rank 1 expected 200"), std::string::npos)
      << s.message();
  EXPECT_EQ(got, std::vector<int32_t>(50, -1));  // nothing copied
}

// A message stamped for another call, or a point-to-point one where a collective's is expected,
// is refused before any payload byte is copied, its header kept for the caller's message.
TEST(Channel, AMessageOfAnotherCallIsRefused) {
  const CallStamp ours{1, 100, 7};
  for (auto [theirs, flags] :
       {std::pair{CallStamp{2, 100, 7}, uint16_t{0}}, std::pair{CallStamp{1, 101, 7}, uint16_t{0}},
        std::pair{CallStamp{1, 100, 8}, uint16_t{0}}, std::pair{ours, kPointToPointMessage}}) {
    auto [a, b] = makeLoopbackPair(1024);
    Channel sender(a.get(), kTag, 0, 1), receiver(b.get(), kTag, 1, 0);
    std::vector<int32_t> data(100, 3), got(100, -1);
    OutgoingMessage out;
    out.data = data.data();
    out.bytes = sizeof(int32_t) * data.size();
    out.call = theirs;
    out.flags = flags;
    ASSERT_TRUE(pump(sender, out));
    IncomingMessage in;
    in.data = got.data();
    in.bytes = out.bytes;
    in.call = ours;
    bool done = false;
    Status s = receiver.progressRecv(in, &done);
    EXPECT_EQ(s.code(), weftInvalidUsage) << s.message();
    EXPECT_FALSE(callMatches(in));
    EXPECT_EQ(in.header.call, theirs);
    EXPECT_EQ(got, std::vector<int32_t>(100, -1));
  }
}

}  // namespace
}  // namespace weft
