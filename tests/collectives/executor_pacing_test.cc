// Pacing (Executor::sendBudget): over links that pace, the sends to a peer run at most paceBytes
// ahead of the receives from it once one is arriving, and an exchange whose answer comes only in
// a later call still finishes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "collectives/executor.h"
#include "transports/channel.h"
#include "transports/loopback/loopback_link.h"

namespace weft {
namespace {

// Passes everything to another link, and records how far each write took it ahead of its reads
// while a message of `incoming` bytes (header included) was arriving.
class CountingLink : public Link {
 public:
  CountingLink(std::unique_ptr<Link> inner, size_t incoming)
      : inner_(std::move(inner)), incoming_(incoming) {}

  Status write(const void* data, size_t bytes, size_t* written) override {
    Status s = inner_->write(data, bytes, written);
    wrote_ += *written;
    if (read_ > 0 && read_ < incoming_ && wrote_ > read_) {
      maxLead_ = std::max(maxLead_, wrote_ - read_);
    }
    return s;
  }
  Status peek(const void** data, size_t* bytes) override { return inner_->peek(data, bytes); }
  void consume(size_t bytes) override {
    inner_->consume(bytes);
    read_ += bytes;
  }
  Status read(void* data, size_t bytes, size_t* got) override {
    Status s = inner_->read(data, bytes, got);
    read_ += *got;
    return s;
  }
  size_t paceBytes() const override { return inner_->paceBytes(); }
  void close() override { inner_->close(); }
  const char* kind() const override { return "counting"; }

  size_t maxLead() const { return maxLead_; }

 private:
  std::unique_ptr<Link> inner_;
  size_t incoming_;
  size_t wrote_ = 0;
  size_t read_ = 0;
  size_t maxLead_ = 0;
};

struct Rank {
  std::vector<char> send, recv;
  std::vector<BufferView> views() {
    return {{send.data(), send.size(), 1}, {recv.data(), recv.size(), 1}, {nullptr, 0, 1}};
  }
};

// Runs the executors in turn until all are done; false if a whole round moves nothing.
bool runToEnd(const std::vector<Executor*>& executors) {
  for (;;) {
    bool all = true, any = false;
    for (Executor* e : executors) {
      if (e->done()) continue;
      bool progressed = false;
      EXPECT_TRUE(e->progress(&progressed).ok());
      any = any || progressed;
      all = all && e->done();
    }
    if (all) return true;
    if (!any) return false;
  }
}

// Two ranks send each other `bytes` at once over links with room for a quarter of it; returns the
// larger of their leads.
size_t exchangeLead(size_t bytes, size_t pace) {
  const size_t incoming = sizeof(MessageHeader) + bytes;  // bytes is a multiple of the padding
  auto [a, b] = makeLoopbackPair(64u << 10, pace);
  CountingLink la(std::move(a), incoming), lb(std::move(b), incoming);
  Channel ca(&la, 1, 0, 1), cb(&lb, 1, 1, 0);
  Channel* channels0[2] = {nullptr, &ca};
  Channel* channels1[2] = {&cb, nullptr};
  Rank r[2];
  for (int i = 0; i < 2; ++i) {
    r[i].send.resize(bytes);
    r[i].recv.assign(bytes, 0);
    std::iota(r[i].send.begin(), r[i].send.end(), static_cast<char>(i * 7));
  }
  Executor e[2];
  for (int i = 0; i < 2; ++i) {
    Schedule s;
    s.send(1 - i, {kSendBuf, 0}, bytes);
    s.recv(1 - i, {kRecvBuf, 0}, bytes);
    EXPECT_TRUE(e[i].start(s, r[i].views(), nullptr, i == 0 ? channels0 : channels1, 2).ok());
  }
  EXPECT_TRUE(runToEnd({&e[0], &e[1]}));
  EXPECT_EQ(r[0].recv, r[1].send);
  EXPECT_EQ(r[1].recv, r[0].send);
  return std::max(la.maxLead(), lb.maxLead());
}

TEST(ExecutorPacing, SendsRunAtMostThePaceAheadOfAnArrivingReceive) {
  const size_t bytes = 256u << 10, pace = 4096;
  EXPECT_LE(exchangeLead(bytes, pace), pace);
  // Unpaced, the same exchange runs further ahead: the bound above is pacing's doing.
  EXPECT_GT(exchangeLead(bytes, 0), 4 * pace);
}

// Rank 0 sends a large message and awaits a small answer in the same call; rank 1 receives the
// large one in one call and answers in the next, as a user's separate calls may. A limit that held
// rank 0's sends while the answer was merely posted would wait forever.
TEST(ExecutorPacing, AnAnswerThatComesInALaterCallDoesNotStallTheSend) {
  const size_t big = 256u << 10, small = 1024, pace = 4096;
  auto [a, b] = makeLoopbackPair(16u << 10, pace);
  Channel ca(a.get(), 1, 0, 1), cb(b.get(), 1, 1, 0);
  Channel* channels0[2] = {nullptr, &ca};
  Channel* channels1[2] = {&cb, nullptr};
  Rank r0, r1;
  r0.send.assign(big, 3);
  r0.recv.assign(small, 0);
  r1.send.assign(small, 9);
  r1.recv.assign(big, 0);

  Executor sender, receiver, answerer;
  Schedule both, first, second;
  both.send(1, {kSendBuf, 0}, big);
  both.recv(1, {kRecvBuf, 0}, small);
  first.recv(0, {kRecvBuf, 0}, big);
  second.send(0, {kSendBuf, 0}, small);
  ASSERT_TRUE(sender.start(both, r0.views(), nullptr, channels0, 2).ok());
  ASSERT_TRUE(receiver.start(first, r1.views(), nullptr, channels1, 2).ok());
  ASSERT_TRUE(runToEnd({&sender, &receiver}) || receiver.done())
      << "rank 0 waits: " << sender.describeWait();
  ASSERT_TRUE(receiver.done()) << "rank 1 waits: " << receiver.describeWait();
  ASSERT_TRUE(answerer.start(second, r1.views(), nullptr, channels1, 2).ok());
  ASSERT_TRUE(runToEnd({&sender, &answerer}));
  EXPECT_EQ(r1.recv, r0.send);
  EXPECT_EQ(r0.recv, r1.send);
}

}  // namespace
}  // namespace weft
