// The UCX transport across real processes, over UCX's tcp and its shared-memory transports
// (UCX_TLS), with the tcp transport's conformance checks: traffic of many sizes between all
// pairs, the peek alignment rule, hellos with a wrong secret, peer death, a peer closing after
// what it sent, deadlines and aborts.
#include "transports/ucx/ucx_transport.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "tests/transports/multi_process.h"
#include "tests/transports/traffic.h"
#include "transports/channel.h"
#include "transports/ucx/ucx_wire.h"
#include "transports/ucx/ucx_worker.h"

namespace weft {
namespace {

using test::RankExit;
using test::RankInfo;
using test::runRanks;
using Clock = std::chrono::steady_clock;

std::vector<int> allOthers(int rank, int nranks) {
  std::vector<int> peers;
  for (int r = 0; r < nranks; ++r) {
    if (r != rank) peers.push_back(r);
  }
  return peers;
}

void expectAllOk(const std::vector<RankExit>& exits) {
  for (size_t r = 0; r < exits.size(); ++r) {
    EXPECT_TRUE(exits[r].ok()) << "rank " << r << ": " << exits[r].describe();
  }
}

long long msSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

TEST(UcxWire, HelloValidation) {
  TransportContext me = test::testContext(2, 4, nullptr);
  TransportContext sender = me;
  sender.rank = 1;
  const ucx::Hello good = ucx::makeHello(sender, 2);
  EXPECT_EQ(ucx::helloProblem(good, sizeof(good), me, 1), "");
  auto problemWith = [&](auto change, size_t bytes = sizeof(ucx::Hello)) {
    ucx::Hello h = good;
    change(h);
    return ucx::helloProblem(h, bytes, me, 1);
  };
  EXPECT_NE(problemWith([](ucx::Hello&) {}, 10), "");
  EXPECT_NE(problemWith([](ucx::Hello& h) { h.magic = 0x47474747; }), "");
  EXPECT_NE(problemWith([](ucx::Hello& h) { h.version = 99; }), "");
  EXPECT_EQ(problemWith([](ucx::Hello& h) { h.secret[15] ^= 1; }), "wrong secret");
  EXPECT_NE(problemWith([](ucx::Hello& h) { h.commTag ^= 1; }), "");
  EXPECT_NE(problemWith([](ucx::Hello& h) { h.toRank = 3; }), "");
  EXPECT_NE(problemWith([](ucx::Hello& h) { h.fromRank = 3; }), "");
  EXPECT_NE(ucx::helloProblem(good, sizeof(good), me, 3), "") << "from another peer than named";
}

// UCX_TLS for every rank of a test: its tcp, or its shared-memory transports.
class UcxTransport : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { setenv("UCX_TLS", GetParam(), 1); }
  void TearDown() override { unsetenv("UCX_TLS"); }
};

std::function<Status(RankInfo&)> exchangeAllPairs(std::vector<size_t> sizes = test::mixedSizes()) {
  return [sizes](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    std::vector<int> peers = allOthers(info.rank, info.nranks);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(ucx::connect(ctx, peers, &links));
    if (links.size() != peers.size()) return Status(weftInternalError, "wrong number of links");
    for (const auto& l : links) {
      if (std::string(l->kind()) != "ucx") return Status(weftInternalError, "not a ucx link");
    }
    WEFT_RETURN_IF_ERROR(test::exchangeMessages(ctx, peers, links, sizes));
    std::vector<Blob> ignored;
    return info.allGather({}, &ignored);  // nobody closes before everyone is done reading
  };
}

TEST_P(UcxTransport, TwoRanksExchangeManySizesBothWays) {
  expectAllOk(runRanks(2, exchangeAllPairs()));
}

TEST_P(UcxTransport, FourRanksExchangeAllPairs) {
  expectAllOk(runRanks(4, exchangeAllPairs()));
}

TEST_P(UcxTransport, EightRanksOnTwoCoresExchangeAllPairs) {
  expectAllOk(runRanks(8, exchangeAllPairs({0, 1, 4097, 1'000'003})));
}

TEST_P(UcxTransport, RawStreamKeepsPeekAlignment) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    return test::rawStreamBetweenTwo(ctx, ucx::connect, 9u << 20);  // past the ring's size twice
  }));
}

TEST_P(UcxTransport, FarewellsAreNamed) {
  expectAllOk(runRanks(3, [](RankInfo& info) {
    return test::farewellsAreNamed(test::testContext(info.rank, info.nranks, info.allGather),
                                   ucx::connect);
  }));
}

TEST_P(UcxTransport, RankWithoutPeersStillJoinsTheGather) {
  expectAllOk(runRanks(3, [](RankInfo& info) {
    return test::rankWithoutPeers(test::testContext(info.rank, info.nranks, info.allGather),
                                  ucx::connect);
  }));
}

// Rank 1 knows the worker addresses (as a stranger who read them would) but not the secret:
// rank 0 refuses it, naming why, and neither link carries anything.
TEST_P(UcxTransport, AWrongSecretIsRefused) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather, 3000);
    if (info.rank == 1) ctx.secret[3] ^= 0x40;
    std::vector<std::unique_ptr<Link>> links;
    Status s = ucx::connect(ctx, {1 - info.rank}, &links);
    if (s.code() != weftRemoteError || s.message().find("wrong secret") == std::string::npos) {
      return errorf(weftInternalError, "rank %d connected or failed otherwise: %s", info.rank,
                    s.message().c_str());
    }
    return okStatus();
  }));
}

TEST_P(UcxTransport, KilledPeerIsReported) {
  if (std::string(GetParam()) == "sm") {
    GTEST_SKIP() << "UCX's shared-memory transports report no peer failure (the communicator's "
                    "timeout covers it; tests/api's failure tests check that)";
  }
  auto exits = runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(ucx::connect(ctx, {1 - info.rank}, &links));
    if (info.rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let rank 0 start waiting
      raise(SIGKILL);
    }
    auto start = Clock::now();
    Status s = test::awaitFailure(ctx, *links[0], 1, true, Deadline::after(15'000));
    const long long ms = msSince(start);
    if (s.code() != weftRemoteError || ms > 10'000) {
      return errorf(weftInternalError, "after %lld ms: code %d, %s", ms, s.code(),
                    s.message().c_str());
    }
    return okStatus();
  });
  EXPECT_TRUE(exits[0].ok()) << exits[0].describe();
  EXPECT_TRUE(exits[1].killedBy(SIGKILL)) << exits[1].describe();
}

TEST_P(UcxTransport, ClosedPeerDeliversWhatItSentThenReportsClosed) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(ucx::connect(ctx, {1 - info.rank}, &links));
    if (info.rank == 1) return test::sendOneThenClose(ctx, *links[0], 300'007);
    return test::readOneThenSeeClosed(ctx, *links[0], 300'007);
  }));
}

// Rank 1 publishes a worker's address but never connects back or says hello.
Status silentRank(RankInfo& info) {
  std::shared_ptr<ucx::UcxWorker> worker;
  WEFT_RETURN_IF_ERROR(ucx::UcxWorker::create(&worker));
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(info.allGather(worker->address(), &all));
  // Past rank 0's deadline; the worker's own thread answers UCX's connection meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  return okStatus();
}

TEST_P(UcxTransport, PeerThatNeverAnswersHitsTheDeadline) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    if (info.rank == 1) return silentRank(info);
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather, 800);
    std::vector<std::unique_ptr<Link>> links;
    auto start = Clock::now();
    Status s = ucx::connect(ctx, {1}, &links);
    const long long ms = msSince(start);
    if (s.code() != weftTimeout || s.message().find("hello") == std::string::npos || ms > 2000) {
      return errorf(weftInternalError, "after %lld ms: %s", ms, s.message().c_str());
    }
    return okStatus();
  }));
}

TEST_P(UcxTransport, AbortStopsConnecting) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    if (info.rank == 1) return silentRank(info);
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    AbortFlag abort{false};
    ctx.abort = &abort;
    std::thread aborter([&abort] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      abort.store(true);
    });
    std::vector<std::unique_ptr<Link>> links;
    auto start = Clock::now();
    Status s = ucx::connect(ctx, {1}, &links);
    aborter.join();
    const long long ms = msSince(start);
    if (s.code() != weftInvalidUsage || ms > 1200) {
      return errorf(weftInternalError, "after %lld ms: %s", ms, s.message().c_str());
    }
    return okStatus();
  }));
}

INSTANTIATE_TEST_SUITE_P(Tls, UcxTransport, ::testing::Values("tcp", "sm"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace weft
