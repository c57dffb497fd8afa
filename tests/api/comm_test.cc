// Communicators as threads of one process: split, several communicators at once, groups of
// sends and receives in any posting order, one thread driving many ranks, streams, and
// non-blocking init.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace {

// Runs fn(rank) on one thread per communicator.
void onEachRank(const std::vector<weftComm_t>& comms, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < static_cast<int>(comms.size()); ++r)
    threads.emplace_back(fn, r);
  for (auto& t : threads)
    t.join();
}

class Comms : public ::testing::Test {
 protected:
  void init(int n) {
    comms_.assign(static_cast<size_t>(n), nullptr);
    ASSERT_EQ(weftCommInitAll(comms_.data(), n, nullptr), weftSuccess) << weftGetLastError(nullptr);
  }
  void TearDown() override {
    for (weftComm_t c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(weftCommDestroy(c), weftSuccess);
      }
    }
  }
  std::vector<weftComm_t> comms_;
};

TEST_F(Comms, SplitByColorAndKey) {
  init(6);
  std::vector<weftComm_t> sub(6, nullptr);
  onEachRank(comms_, [&](int r) {
    // Colour by parity; key reverses the order; rank 5 opts out.
    int color = r == 5 ? WEFT_SPLIT_NOCOLOR : r % 2;
    ASSERT_EQ(weftCommSplit(comms_[r], color, -r, &sub[r], nullptr), weftSuccess)
        << weftGetLastError(comms_[r]);
    if (r == 5) {
      EXPECT_EQ(sub[r], nullptr);
      return;
    }
    int n = 0;
    int rank = -1;
    ASSERT_EQ(weftCommCount(sub[r], &n), weftSuccess);
    ASSERT_EQ(weftCommUserRank(sub[r], &rank), weftSuccess);
    std::vector<int> members;
    for (int p = 4 - (r % 2 == 0 ? 0 : 1); p >= 0; p -= 2)
      members.push_back(p);  // by key
    if (r % 2 == 1) members = {3, 1};
    EXPECT_EQ(n, static_cast<int>(members.size()));
    EXPECT_EQ(members[rank], r);
    int mine = r + 1;
    int sum = 0;
    ASSERT_EQ(weftAllReduce(&mine, &sum, 1, weftInt32, weftSum, sub[r], nullptr), weftSuccess);
    int expected = 0;
    for (int p : members)
      expected += p + 1;
    EXPECT_EQ(sum, expected);
  });
  for (weftComm_t c : sub) {
    if (c != nullptr) {
      EXPECT_EQ(weftCommDestroy(c), weftSuccess);
    }
  }
}

TEST_F(Comms, SeveralCommunicatorsAtOnce) {
  init(3);
  std::vector<weftComm_t> second(3, nullptr);
  ASSERT_EQ(weftCommInitAll(second.data(), 3, nullptr), weftSuccess);
  onEachRank(comms_, [&](int r) {
    for (int iter = 0; iter < 20; ++iter) {
      int64_t a = r * 10 + iter;
      int64_t b = r * 100 + iter;
      int64_t sa = 0;
      int64_t sb = 0;
      // Opposite order on alternate ranks would deadlock a shared channel; separate
      // communicators keep their traffic apart.
      ASSERT_EQ(weftAllReduce(&a, &sa, 1, weftInt64, weftSum, comms_[r], nullptr), weftSuccess);
      ASSERT_EQ(weftAllReduce(&b, &sb, 1, weftInt64, weftMax, second[r], nullptr), weftSuccess);
      EXPECT_EQ(sa, 30 + 3 * iter);
      EXPECT_EQ(sb, 200 + iter);
    }
  });
  for (weftComm_t c : second)
    EXPECT_EQ(weftCommDestroy(c), weftSuccess);
}

// Every rank sends a large message to the next and receives from the previous. Without a group
// the blocking sends would wait for receives nobody has posted yet.
void ringExchange(const std::vector<weftComm_t>& comms, bool recvFirst) {
  const int n = static_cast<int>(comms.size());
  const size_t count = 3u << 20;  // bigger than any transport buffer
  onEachRank(comms, [&](int r) {
    std::vector<int32_t> out(count);
    std::vector<int32_t> in(count, -1);
    std::iota(out.begin(), out.end(), r * 1000);
    int next = (r + 1) % n;
    int prev = (r + n - 1) % n;
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    if (recvFirst) {
      ASSERT_EQ(weftRecv(in.data(), count, weftInt32, prev, comms[r], nullptr), weftSuccess);
      ASSERT_EQ(weftSend(out.data(), count, weftInt32, next, comms[r], nullptr), weftSuccess);
    } else {
      ASSERT_EQ(weftSend(out.data(), count, weftInt32, next, comms[r], nullptr), weftSuccess);
      ASSERT_EQ(weftRecv(in.data(), count, weftInt32, prev, comms[r], nullptr), weftSuccess);
    }
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(comms[r]);
    for (size_t i = 0; i < count; i += 4099)
      ASSERT_EQ(in[i], prev * 1000 + int32_t(i));
    ASSERT_EQ(in[count - 1], prev * 1000 + int32_t(count - 1));
  });
}

TEST_F(Comms, GroupedRingSendRecvBothOrders) {
  init(4);
  ringExchange(comms_, false);
  ringExchange(comms_, true);
}

// Send and receive through one buffer in a group, as MPI_Sendrecv_replace: the send takes the
// old contents, the buffer ends with what arrived. Large enough that doing the receive only
// after the send would deadlock.
TEST_F(Comms, GroupedSendRecvInPlace) {
  init(3);
  const size_t count = 3u << 20;
  onEachRank(comms_, [&](int r) {
    std::vector<int32_t> buf(count);
    std::iota(buf.begin(), buf.end(), r * 1000);
    const int next = (r + 1) % 3;
    const int prev = (r + 2) % 3;
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftSend(buf.data(), count, weftInt32, next, comms_[r], nullptr), weftSuccess);
    ASSERT_EQ(weftRecv(buf.data(), count, weftInt32, prev, comms_[r], nullptr), weftSuccess);
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(comms_[r]);
    for (size_t i = 0; i < count; i += 4099)
      ASSERT_EQ(buf[i], prev * 1000 + int32_t(i));
    ASSERT_EQ(buf.back(), prev * 1000 + int32_t(count - 1));
  });
}

TEST_F(Comms, SendRecvToSelfAndPairs) {
  init(2);
  onEachRank(comms_, [&](int r) {
    double self = r + 0.5;
    double selfIn = 0;
    double peerIn = 0;
    double mine = r * 2.0;
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftSend(&self, 1, weftFloat64, r, comms_[r], nullptr), weftSuccess);
    ASSERT_EQ(weftRecv(&peerIn, 1, weftFloat64, 1 - r, comms_[r], nullptr), weftSuccess);
    ASSERT_EQ(weftSend(&mine, 1, weftFloat64, 1 - r, comms_[r], nullptr), weftSuccess);
    ASSERT_EQ(weftRecv(&selfIn, 1, weftFloat64, r, comms_[r], nullptr), weftSuccess);
    ASSERT_EQ(weftGroupEnd(), weftSuccess);
    EXPECT_EQ(selfIn, r + 0.5);
    EXPECT_EQ(peerIn, (1 - r) * 2.0);
  });
}

TEST_F(Comms, OneThreadDrivesAllRanksInAGroup) {
  init(4);
  std::vector<std::vector<float>> data(4, std::vector<float>(100000));
  for (int r = 0; r < 4; ++r)
    std::fill(data[r].begin(), data[r].end(), float(r + 1));
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(weftAllReduce(data[r].data(), data[r].data(), data[r].size(), weftFloat32, weftSum,
                            comms_[r], nullptr),
              weftSuccess);
  }
  ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(data[r][0], 10.0f);
    EXPECT_EQ(data[r].back(), 10.0f);
  }
}

TEST_F(Comms, StreamsRunInOrderAndOverlap) {
  init(2);
  std::atomic<bool> rank1Issued{false};
  onEachRank(comms_, [&](int r) {
    weftStream_t stream = nullptr;
    ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
    // Rank 0 joins only after rank 1 has queued everything and looked: rank 1's calls must
    // have returned while their work could not yet have run.
    while (r == 0 && !rank1Issued.load())
      std::this_thread::yield();
    std::vector<int64_t> buf(1u << 18, r + 1);
    // Each in-place sum doubles the previous result: out of order or overlapping runs give
    // another number.
    for (int k = 0; k < 8; ++k) {
      ASSERT_EQ(
          weftAllReduce(buf.data(), buf.data(), buf.size(), weftInt64, weftSum, comms_[r], stream),
          weftSuccess);
    }
    if (r == 1) {
      EXPECT_EQ(weftStreamQuery(stream), weftInProgress);
      rank1Issued.store(true);
    }
    ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess) << weftGetLastError(comms_[r]);
    EXPECT_EQ(weftStreamQuery(stream), weftSuccess);
    EXPECT_EQ(buf.front(), 3 << 7);
    EXPECT_EQ(buf.back(), 3 << 7);
    // A blocking call after stream work on the same communicator waits its turn.
    int64_t x = r;
    ASSERT_EQ(weftAllReduce(&x, &x, 1, weftInt64, weftSum, comms_[r], stream), weftSuccess);
    int64_t y = 10;
    ASSERT_EQ(weftAllReduce(&y, &y, 1, weftInt64, weftSum, comms_[r], nullptr), weftSuccess);
    ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess);
    EXPECT_EQ(x, 1);
    EXPECT_EQ(y, 20);
    ASSERT_EQ(weftStreamDestroy(stream), weftSuccess);
  });
}

TEST_F(Comms, FinalizeThenDestroy) {
  init(2);
  onEachRank(comms_, [&](int r) {
    EXPECT_EQ(weftBarrier(comms_[r], nullptr), weftSuccess);
    EXPECT_EQ(weftCommFinalize(comms_[r]), weftSuccess);
    EXPECT_EQ(weftBarrier(comms_[r], nullptr), weftInvalidUsage);
  });
}

TEST(NonBlockingInit, PollUntilReady) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  std::vector<weftComm_t> comms(2, nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      weftConfig_t config = WEFT_CONFIG_INITIALIZER;
      config.blocking = 0;
      config.commName = "nonblocking";
      weftResult_t res = weftCommInitRankConfig(&comms[r], 2, id, r, &config);
      ASSERT_TRUE(res == weftInProgress || res == weftSuccess) << weftGetErrorString(res);
      weftResult_t state = weftInProgress;
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (state == weftInProgress && std::chrono::steady_clock::now() < until) {
        ASSERT_EQ(weftCommGetAsyncError(comms[r], &state), weftSuccess);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      EXPECT_EQ(state, weftSuccess);
      int v = r + 1;
      EXPECT_EQ(weftAllReduce(&v, &v, 1, weftInt32, weftSum, comms[r], nullptr), weftSuccess);
      EXPECT_EQ(v, 3);
    });
  }
  for (auto& t : threads)
    t.join();
  for (weftComm_t c : comms)
    EXPECT_EQ(weftCommDestroy(c), weftSuccess);
}

// A caller built before weftConfig_t.logCalls existed passes a config that ends before it.
TEST(Config, OneBuiltBeforeLogCallsIsAccepted) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.size = offsetof(weftConfig_t, logCalls);
  config.logCalls = 77;  // beyond the caller's struct: never read
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitRankConfig(&comm, 1, id, 0, &config), weftSuccess)
      << weftGetLastError(nullptr);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

TEST(GroupInit, InitSeveralRanksFromOneThread) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  std::vector<weftComm_t> comms(3, nullptr);
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  for (int r = 0; r < 3; ++r)
    ASSERT_EQ(weftCommInitRank(&comms[r], 3, id, r), weftSuccess);
  ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
  int values[3] = {1, 2, 3};
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(weftAllReduce(&values[r], &values[r], 1, weftInt32, weftMax, comms[r], nullptr),
              weftSuccess);
  }
  ASSERT_EQ(weftGroupEnd(), weftSuccess);
  EXPECT_EQ(values[0] + values[1] + values[2], 9);
  for (weftComm_t c : comms)
    EXPECT_EQ(weftCommDestroy(c), weftSuccess);
}

}  // namespace
