// PutStream over a loopback pair with a small ring, so headers and payloads arrive in pieces:
// puts land where they were aimed and raise their signal only once whole, in order; a close
// ends the stream; and a malformed put from the wire fails the receiver before a byte of it
// lands.
#include "transports/put_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "transports/loopback/loopback_link.h"

namespace weft {
namespace {

constexpr int kSignals = 8;

struct Side {
  std::vector<char> part;
  std::atomic<uint64_t> signals[kSignals] = {};
  PutTarget target() { return PutTarget{part.data(), part.size(), signals, kSignals}; }
};

// Moves both streams until `from` has sent what it was given; false if either fails.
bool pump(PutStream& from, PutStream& to) {
  for (int i = 0; i < 100000 && from.sending(); ++i) {
    bool progressed = false;
    if (!from.progressSend(&progressed).ok() || !to.progressReceive(&progressed).ok()) return false;
  }
  bool progressed = false;
  return !from.sending() && to.progressReceive(&progressed).ok();
}

TEST(PutStream, PutsLandInOrderAndRaiseTheirSignalsOnceWhole) {
  auto [a, b] = makeLoopbackPair(64);  // a header and a half
  Side sa, sb;
  sa.part.assign(16, 0);
  sb.part.assign(4096, 0);
  PutStream sender(a.get(), 1, sa.target()), receiver(b.get(), 0, sb.target());
  std::vector<char> data(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<char>(i * 7 + 1);

  sender.startPut(data.data(), data.size(), 3000, 5);
  // Part of the way: the signal waits for the last byte.
  bool progressed = false;
  ASSERT_TRUE(sender.progressSend(&progressed).ok());
  ASSERT_TRUE(receiver.progressReceive(&progressed).ok());
  EXPECT_TRUE(progressed);
  EXPECT_TRUE(sender.sending());
  EXPECT_EQ(sb.signals[5].load(), 0u);
  ASSERT_TRUE(pump(sender, receiver));
  EXPECT_EQ(sb.signals[5].load(), 1u);
  EXPECT_EQ(std::string(sb.part.data() + 3000, 1000), std::string(data.data(), 1000));
  EXPECT_EQ(sb.part[2999], 0);

  // A put of nothing only signals; a later put over the same bytes overwrites them.
  sender.startPut(nullptr, 0, 0, 0);
  ASSERT_TRUE(pump(sender, receiver));
  EXPECT_EQ(sb.signals[0].load(), 1u);
  const char x[3] = {'x', 'y', 'z'};
  sender.startPut(x, 3, 3000, 5);
  ASSERT_TRUE(pump(sender, receiver));
  EXPECT_EQ(sb.signals[5].load(), 2u);
  EXPECT_EQ(std::string(sb.part.data() + 3000, 4), std::string("xyz") + data[3]);

  EXPECT_FALSE(receiver.peerClosed());
  sender.startClose();
  ASSERT_TRUE(pump(sender, receiver));
  EXPECT_TRUE(sender.closeSent());
  EXPECT_TRUE(receiver.peerClosed());
}

// Writes raw bytes into the link as a hostile peer would, and returns the receiver's verdict.
std::string receiveRaw(const PutStream::Header& h, Side* side) {
  auto [a, b] = makeLoopbackPair(1024);
  std::vector<char> wire(sizeof(h) + 16, 'P');
  std::memcpy(wire.data(), &h, sizeof(h));
  size_t written = 0;
  EXPECT_TRUE(a->write(wire.data(), wire.size(), &written).ok());
  EXPECT_EQ(written, wire.size());
  PutStream receiver(b.get(), 3, side->target());
  bool progressed = false;
  const Status s = receiver.progressReceive(&progressed);
  return s.ok() ? "" : s.message();
}

TEST(PutStream, MalformedPutsFailBeforeAByteLands) {
  const PutStream::Header good{
      PutStream::kMagic, PutStream::kVersion, PutStream::kPut, 1, 0, 100, 16};
  Side side;
  side.part.assign(128, 0);
  EXPECT_EQ(receiveRaw(good, &side), "");
  EXPECT_EQ(side.part[100], 'P');
  EXPECT_EQ(side.signals[1].load(), 1u);

  struct Case {
    PutStream::Header header;
    const char* says;
  };
  const Case cases[] = {
      {{0x12345678u, PutStream::kVersion, PutStream::kPut, 1, 0, 0, 16}, "bad header"},
      {{PutStream::kMagic, 99, PutStream::kPut, 1, 0, 0, 16}, "bad header"},
      {{PutStream::kMagic, PutStream::kVersion, 7, 1, 0, 0, 16}, "unknown kind"},
      {{PutStream::kMagic, PutStream::kVersion, PutStream::kPut, kSignals, 0, 0, 16},
       "does not exist"},
      {{PutStream::kMagic, PutStream::kVersion, PutStream::kPut, 1, 0, 120, 16}, "outside"},
      {{PutStream::kMagic, PutStream::kVersion, PutStream::kPut, 1, 0, UINT64_MAX - 8, 16},
       "outside"},
      {{PutStream::kMagic, PutStream::kVersion, PutStream::kPut, 1, 0, 0, UINT64_MAX}, "outside"},
      // A close carries nothing: one that says otherwise must not write a byte either.
      {{PutStream::kMagic, PutStream::kVersion, PutStream::kClose, 0, 0, 100, 8}, "close"},
      {{PutStream::kMagic, PutStream::kVersion, PutStream::kClose, 0, 0, 0, 8}, "close"},
      {{PutStream::kMagic, PutStream::kVersion, PutStream::kClose, 1, 0, 0, 0}, "close"},
  };
  for (const Case& c : cases) {
    Side fresh;
    fresh.part.assign(128, 0);
    const std::string why = receiveRaw(c.header, &fresh);
    EXPECT_NE(why.find(c.says), std::string::npos) << why;
    EXPECT_NE(why.find("rank 3"), std::string::npos) << why;
    for (char ch : fresh.part)
      ASSERT_EQ(ch, 0) << why;
    for (const auto& sig : fresh.signals)
      EXPECT_EQ(sig.load(), 0u);
  }
}

}  // namespace
}  // namespace weft
