// weftRecvAnySource across processes, over each transport: every rank's messages arrive once,
// in each sender's order, with the right sender; a peer whose next message belongs to a
// collective is passed over; misuse, a missing sender and a gone peer give clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

// Message `index` from `rank`: values that differ between ranks, messages and positions.
std::vector<int32_t> message(size_t count, int rank, int index) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<int32_t>(i % 1013) * 7 + rank * 100003 + index * 1000003;
  return v;
}

EnvList transportEnv(const std::string& transport) {
  if (transport == "ucx") return {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_NET", "ucx"}};
  return {{"WEFT_TRANSPORT", transport}};
}

std::vector<std::string> transports() {
  std::vector<std::string> out{"shm", "tcp"};
#ifdef WEFT_HAVE_UCX
  out.push_back("ucx");
#endif
  return out;
}

class RecvAnySource : public ::testing::TestWithParam<std::string> {
 protected:
  EnvList env(const char* timeoutSec) const {
    EnvList e = transportEnv(GetParam());
    e.emplace_back("WEFT_TIMEOUT", timeoutSec);
    return e;
  }
};

// Ranks 1-3 each send three messages to rank 0, blocking, some larger than a link's buffer;
// rank 0 takes nine from any source.
TEST_P(RecvAnySource, EveryMessageArrivesOnceInEachSendersOrder) {
  const int nranks = 4, perSender = 3;
  const size_t count = 300000;
  auto results = runProcesses(nranks, env("60"), [&](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    if (rank == 0) {
      std::map<int, int> next;  // sender -> index of its next message
      for (int k = 0; k < (nranks - 1) * perSender; ++k) {
        std::vector<int32_t> got(count, -1);
        int source = -7;
        ASSERT_EQ(weftRecvAnySource(got.data(), count, weftInt32, &source, comm, nullptr),
                  weftSuccess)
            << weftGetLastError(comm);
        ASSERT_GE(source, 1);
        ASSERT_LT(source, nranks);
        ASSERT_LT(next[source], perSender) << "a fourth message from rank " << source;
        ASSERT_TRUE(got == message(count, source, next[source]))
            << "message " << next[source] << " from rank " << source << " differs";
        ++next[source];
      }
    } else {
      for (int i = 0; i < perSender; ++i) {
        const std::vector<int32_t> out = message(count, rank, i);
        ASSERT_EQ(weftSend(out.data(), count, weftInt32, 0, comm, nullptr), weftSuccess)
            << weftGetLastError(comm);
      }
    }
    // The communicator goes on as usual afterwards.
    int32_t one = 1, sum = 0;
    ASSERT_EQ(weftAllReduce(&one, &sum, 1, weftInt32, weftSum, comm, nullptr), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(sum, nranks);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

// Rank 2 is already in an all-reduce, whose first message may be at the head of its link to
// rank 0; rank 1 sends later. The receive must take rank 1's message, and the all-reduce then
// finishes with the right sum. (Over shm the all-reduce goes through shared areas, not the
// links: there, tcp and ucx are what would catch a receive that took rank 2's message.)
TEST_P(RecvAnySource, PassesOverAPeerAheadInACollective) {
  const size_t count = 1 << 16;
  auto results = runProcesses(3, env("60"), [&](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::vector<int32_t> got(count, -1);
      int source = -1;
      ASSERT_EQ(weftRecvAnySource(got.data(), count, weftInt32, &source, comm, nullptr),
                weftSuccess)
          << weftGetLastError(comm);
      EXPECT_EQ(source, 1);
      EXPECT_TRUE(got == message(count, 1, 0));
    } else if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      const std::vector<int32_t> out = message(count, 1, 0);
      ASSERT_EQ(weftSend(out.data(), count, weftInt32, 0, comm, nullptr), weftSuccess)
          << weftGetLastError(comm);
    }
    std::vector<int32_t> mine(count, rank + 1), sum(count, 0);
    ASSERT_EQ(weftAllReduce(mine.data(), sum.data(), count, weftInt32, weftSum, comm, nullptr),
              weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(sum.front(), 6);
    EXPECT_EQ(sum.back(), 6);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

// On a stream, the sender's rank is there once the stream is synchronized.
TEST_P(RecvAnySource, OnAStreamTheSourceIsSetBySynchronize) {
  auto results = runProcesses(2, env("60"), [&](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    weftStream_t stream = nullptr;
    ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
    std::vector<int32_t> buf = message(1000, rank, 5);
    int source = -1;
    if (rank == 0) {
      ASSERT_EQ(weftRecvAnySource(buf.data(), buf.size(), weftInt32, &source, comm, stream),
                weftSuccess);
    } else {
      ASSERT_EQ(weftSend(buf.data(), buf.size(), weftInt32, 0, comm, stream), weftSuccess);
    }
    ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess) << weftGetLastError(comm);
    if (rank == 0) {
      EXPECT_EQ(source, 1);
      EXPECT_TRUE(buf == message(1000, 1, 5));
    }
    EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

// Misuse is refused at the call, before anything moves; a count that differs from the send's is
// reported by the receive, naming both sizes.
TEST_P(RecvAnySource, MisuseAndMismatchedCountsAreClearErrors) {
  auto results = runProcesses(2, env("60"), [&](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    std::vector<int32_t> buf(100, rank);
    int source = -1;
    if (rank == 0) {
      EXPECT_EQ(weftRecvAnySource(buf.data(), 100, weftInt32, nullptr, comm, nullptr),
                weftInvalidArgument);
      EXPECT_NE(std::string(weftGetLastError(comm)).find("source must not be NULL"),
                std::string::npos);
      EXPECT_EQ(weftRecvAnySource(buf.data(), 0, weftInt32, &source, comm, nullptr),
                weftInvalidArgument);
      EXPECT_EQ(weftRecv(buf.data(), 100, weftInt32, -1, comm, nullptr), weftInvalidArgument);
      EXPECT_NE(std::string(weftGetLastError(comm)).find("peer -1 is out of range"),
                std::string::npos);
      ASSERT_EQ(weftGroupStart(), weftSuccess);
      EXPECT_EQ(weftRecvAnySource(buf.data(), 100, weftInt32, &source, comm, nullptr),
                weftInvalidUsage);
      EXPECT_NE(std::string(weftGetLastError(comm)).find("cannot be part of a group"),
                std::string::npos);
      ASSERT_EQ(weftGroupEnd(), weftInvalidUsage);  // the group reports its failed call
      EXPECT_EQ(source, -1);
      EXPECT_EQ(weftRecvAnySource(buf.data(), 50, weftInt32, &source, comm, nullptr),
                weftInvalidUsage);
      const std::string error = weftGetLastError(comm);
      EXPECT_NE(error.find("rank 1 sent 400 bytes where rank 0 expected 200"), std::string::npos)
          << error;
    } else {
      // The peer of a failed receive may see its send end either way.
      weftSend(buf.data(), 100, weftInt32, 0, comm, nullptr);
    }
    weftCommDestroy(comm);
  });
  expectAllOk(results);
}

// Nobody sends: the receive times out, saying what it waited for.
TEST_P(RecvAnySource, WithoutASenderItTimesOut) {
  auto results = runProcesses(2, env("1"), [&](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    if (rank == 0) {
      std::vector<int32_t> buf(10);
      int source = -1;
      const auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(weftRecvAnySource(buf.data(), 10, weftInt32, &source, comm, nullptr), weftTimeout);
      const std::string error = weftGetLastError(comm);
      EXPECT_NE(error.find("a receive of 40 bytes from any rank"), std::string::npos) << error;
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(3));
    }
    weftCommDestroy(comm);
  });
  expectAllOk(results);
}

// A peer that dies without sending ends the receive with an error within the timeout.
TEST_P(RecvAnySource, APeerThatDiesEndsItWithAnError) {
  auto results = runProcesses(3, env("20"), [&](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    if (rank == 2) _exit(0);  // gone, without a word
    if (rank == 0) {
      std::vector<int32_t> buf(10);
      int source = -1;
      const auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(weftRecvAnySource(buf.data(), 10, weftInt32, &source, comm, nullptr),
                weftRemoteError)
          << weftGetLastError(comm);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    weftCommDestroy(comm);
  });
  expectAllOk(results);
}

INSTANTIATE_TEST_SUITE_P(Transports, RecvAnySource, ::testing::ValuesIn(transports()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace weft::test
