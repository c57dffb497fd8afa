// Pacing (Executor::sendBudget): over links that pace, the sends to a peer run at most paceBytes
// ahead of the receives from it once one is arriving, and calls that pair up differently on the
// two ranks (an answer that comes only in a later call) still finish.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
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

// One rank's calls with the other, made one after another: each call is its messages in
// schedule order, (true, n) a send of n bytes and (false, n) a receive.
using Call = std::vector<std::pair<bool, size_t>>;

class Caller {
 public:
  Caller(int rank, Channel* channel, std::vector<Call> calls)
      : rank_(rank), calls_(std::move(calls)) {
    channels_[1 - rank] = channel;
  }

  bool done() const { return next_ == calls_.size() && !running_; }
  std::string describeWait() const { return running_ ? executor_.describeWait() : "nothing"; }

  // Moves the current call on, first starting the next one where the last is done.
  bool progress() {
    if (!running_) {
      if (next_ == calls_.size()) return false;
      startCall(calls_[next_++]);
    }
    bool progressed = false;
    EXPECT_TRUE(executor_.progress(&progressed).ok());
    if (executor_.done()) finishCall();
    return progressed || !running_;
  }

  // What arrived, message by message, and what was sent, in the order each went.
  std::vector<std::vector<char>> received, sent;

 private:
  void startCall(const Call& call) {
    Schedule schedule;
    size_t sendAt = 0, recvAt = 0;
    for (const auto& [isSend, bytes] : call) {
      if (isSend) {
        schedule.send(1 - rank_, {kSendBuf, sendAt}, bytes);
        sendAt += bytes;
      } else {
        schedule.recv(1 - rank_, {kRecvBuf, recvAt}, bytes);
        recvAt += bytes;
      }
    }
    buffers_.send.resize(sendAt);
    for (size_t i = 0; i < sendAt; ++i)
      buffers_.send[i] = static_cast<char>(i * 7 + sent.size() * 13 + rank_ * 101);
    buffers_.recv.assign(recvAt, 0);
    call_ = call;
    running_ = true;
    EXPECT_TRUE(executor_.start(schedule, buffers_.views(), nullptr, channels_.data(), 2).ok());
  }

  void finishCall() {
    running_ = false;
    size_t sendAt = 0, recvAt = 0;
    for (const auto& [isSend, bytes] : call_) {
      auto& from = isSend ? buffers_.send : buffers_.recv;
      size_t& at = isSend ? sendAt : recvAt;
      (isSend ? sent : received).emplace_back(from.begin() + at, from.begin() + at + bytes);
      at += bytes;
    }
  }

  int rank_;
  std::vector<Call> calls_;
  std::array<Channel*, 2> channels_{};
  size_t next_ = 0;
  bool running_ = false;
  Call call_;
  Rank buffers_;
  Executor executor_;
};

// Runs both ranks' calls over the two ends of a link until both are done, and checks that every
// message arrived whole; fails, naming what each waits for, if neither can move.
void expectCallsFinish(Link* end0, Link* end1, const std::vector<Call>& calls0,
                       const std::vector<Call>& calls1) {
  Channel c0(end0, 1, 0, 1), c1(end1, 1, 1, 0);
  Caller zero(0, &c0, calls0), one(1, &c1, calls1);
  while (!zero.done() || !one.done()) {
    bool moved = zero.progress();
    moved = one.progress() || moved;
    ASSERT_TRUE(moved) << "rank 0 waits: " << zero.describeWait()
                       << "\nrank 1 waits: " << one.describeWait();
  }
  EXPECT_TRUE(zero.received == one.sent);
  EXPECT_TRUE(one.received == zero.sent);
}

// The same over a loopback pair with room for 16K each way, paced at 4K.
void expectCallsFinish(const std::vector<Call>& calls0, const std::vector<Call>& calls1) {
  auto [a, b] = makeLoopbackPair(16u << 10, 4096);
  expectCallsFinish(a.get(), b.get(), calls0, calls1);
}

// Two ranks send each other `bytes` at once over links with room for a quarter of it; returns the
// larger of their leads.
size_t exchangeLead(size_t bytes, size_t pace) {
  const size_t incoming = sizeof(MessageHeader) + bytes;  // bytes is a multiple of the padding
  auto [a, b] = makeLoopbackPair(64u << 10, pace);
  CountingLink la(std::move(a), incoming), lb(std::move(b), incoming);
  const Call both = {{true, bytes}, {false, bytes}};
  expectCallsFinish(&la, &lb, {both}, {both});
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
  const size_t big = 256u << 10;
  expectCallsFinish({{{true, big}, {false, 1024}}}, {{{false, big}}, {{true, 1024}}});
}

// As above, but rank 1's next call both answers and receives a second large message from rank
// 0's call. Counting the lead from the start of each call only, rank 0 would still count the
// first message against rank 1's answer, which rank 1 sends only as its own lead allows: both
// would hold.
TEST(ExecutorPacing, CallsThatPairUpAcrossCallBoundariesDoNotDeadlock) {
  const size_t big = 256u << 10;
  expectCallsFinish({{{true, big}, {true, big}, {false, big}}},
                    {{{false, big}}, {{true, big}, {false, big}}});
}

}  // namespace
}  // namespace weft
