// The tcp transport across real processes and loopback sockets: traffic over one and several
// sockets, alignment, strangers, peer death, deadlines and aborts.
#include "transports/tcp/tcp_transport.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "tests/transports/multi_process.h"
#include "tests/transports/traffic.h"
#include "transports/channel.h"
#include "transports/tcp/tcp_wire.h"

namespace weft {
namespace {

using test::RankExit;
using test::RankInfo;
using test::runRanks;

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

std::function<Status(RankInfo&)> exchangeAllPairs(int nSockets,
                                                  std::vector<size_t> sizes = test::mixedSizes()) {
  return [nSockets, sizes](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    ctx.nSocketsPerPeer = nSockets;
    std::vector<int> peers = allOthers(info.rank, info.nranks);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(tcp::connect(ctx, peers, &links));
    if (links.size() != peers.size()) return Status(weftInternalError, "wrong number of links");
    for (const auto& l : links) {
      if (strcmp(l->kind(), "tcp") != 0) return Status(weftInternalError, "not a tcp link");
    }
    WEFT_RETURN_IF_ERROR(test::exchangeMessages(ctx, peers, links, sizes));
    std::vector<Blob> ignored;
    return info.allGather({}, &ignored);  // nobody closes before everyone is done reading
  };
}

TEST(TcpWire, HelloValidation) {
  TransportContext me = test::testContext(2, 4, nullptr);
  me.nSocketsPerPeer = 2;
  TransportContext sender = me;
  sender.rank = 1;
  const tcp::Hello good = tcp::makeHello(sender, 2, 1);
  EXPECT_EQ(tcp::helloProblem(good, me), "");
  auto problemWith = [&](auto change) {
    tcp::Hello h = good;
    change(h);
    return tcp::helloProblem(h, me);
  };
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.magic = 0x47474747; }), "");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.version = 99; }), "");
  EXPECT_EQ(problemWith([](tcp::Hello& h) { h.secret[15] ^= 1; }), "wrong secret");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.commTag ^= 1; }), "");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.toRank = 3; }), "");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.fromRank = 4; }), "");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.fromRank = -1; }), "");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.socketCount = 3; }), "");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.socketIndex = 2; }), "");
  EXPECT_NE(problemWith([](tcp::Hello& h) { h.socketIndex = -1; }), "");
}

TEST(TcpWire, AddressBlobRoundTripsAndRejectsGarbage) {
  SockAddr a;
  ASSERT_TRUE(SockAddr::parse("127.0.0.1:4242", &a).ok());
  SockAddr b;
  bool listening = false;
  ASSERT_TRUE(tcp::decodeAddress(tcp::encodeAddress(&a), 0, &b, &listening).ok());
  EXPECT_TRUE(listening);
  EXPECT_EQ(b.toString(), "127.0.0.1:4242");
  ASSERT_TRUE(tcp::decodeAddress(tcp::encodeAddress(nullptr), 0, &b, &listening).ok());
  EXPECT_FALSE(listening);
  EXPECT_FALSE(tcp::decodeAddress(Blob(7, 1), 0, &b, &listening).ok());
  Blob bad = tcp::encodeAddress(&a);
  bad[0] ^= 0xff;
  EXPECT_FALSE(tcp::decodeAddress(bad, 0, &b, &listening).ok());
}

TEST(TcpTransport, TwoRanksOneSocketExchangeManySizesBothWays) {
  expectAllOk(runRanks(2, exchangeAllPairs(1)));
}

TEST(TcpTransport, FourRanksThreeSocketsExchangeAllPairs) {
  expectAllOk(runRanks(4, exchangeAllPairs(3)));
}

TEST(TcpTransport, EightRanksOnTwoCoresExchangeAllPairs) {
  expectAllOk(runRanks(8, exchangeAllPairs(2, {0, 5, 4097, 300'001})));
}

TEST(TcpTransport, RawStreamOverThreeSocketsKeepsPeekAlignment) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    ctx.nSocketsPerPeer = 3;
    return test::rawStreamBetweenTwo(ctx, tcp::connect, 5u << 20);
  }));
}

TEST(TcpTransport, FarewellsAreNamed) {
  expectAllOk(runRanks(3, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    ctx.nSocketsPerPeer = 2;
    return test::farewellsAreNamed(ctx, tcp::connect);
  }));
}

TEST(TcpTransport, RankWithoutPeersStillJoinsTheGather) {
  expectAllOk(runRanks(3, [](RankInfo& info) {
    return test::rankWithoutPeers(test::testContext(info.rank, info.nranks, info.allGather),
                                  tcp::connect);
  }));
}

// A connection from outside the communicator, watched until rank 2 hangs up on it.
struct Stranger {
  const char* what;
  int fd = -1;
  bool mustBeRefused = true;  // false: silent, it may linger until the listener closes
  std::atomic<long long> closedAfterMs{-1};
  std::atomic<long long> bytesBack{0};
};

int connectTo(const SockAddr& address) {
  int fd = socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, address.raw(), address.length) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void watchStrangers(std::vector<Stranger>* strangers, Clock::time_point start) {
  for (;;) {
    bool open = false;
    for (auto& s : *strangers) {
      if (s.closedAfterMs >= 0) continue;
      char buffer[64];
      ssize_t n = recv(s.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n > 0) s.bytesBack += n;
      if (n == 0 || (n < 0 && errno != EAGAIN)) {
        s.closedAfterMs =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
      } else {
        open = true;
      }
    }
    if (!open || Clock::now() - start > std::chrono::seconds(10)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Makes the rank sleep ms after the address gather, before it connects to its peers.
void connectLate(RankInfo& info, int ms) {
  auto gather = info.allGather;
  auto calls = std::make_shared<int>(0);  // shared by every copy of the function
  info.allGather = [gather, calls, ms](const Blob& mine, std::vector<Blob>* all) {
    Status s = gather(mine, all);
    if ((*calls)++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return s;
  };
}

TEST(TcpTransport, StrangersAreRefusedWhileRanksConnect) {
  std::vector<Stranger> strangers(5);
  strangers[0].what = "garbage";
  strangers[1].what = "wrong secret";
  strangers[2].what = "wrong communicator";
  strangers[3].what = "short garbage, then hang-up";
  strangers[4].what = "silent";
  strangers[4].mustBeRefused = false;
  std::thread watcher;
  Clock::time_point start;

  test::RunOptions options;
  options.onGather = [&](int round, std::vector<Blob>& blobs) {
    if (round != 0) return;
    // Before the ranks even learn the addresses, strangers queue up at rank 2's listener.
    SockAddr rank2;
    bool listening = false;
    ASSERT_TRUE(tcp::decodeAddress(blobs[2], 2, &rank2, &listening).ok());
    TransportContext forged = test::testContext(0, 3, nullptr);
    forged.nSocketsPerPeer = 2;
    for (auto& s : strangers) {
      s.fd = connectTo(rank2);
      ASSERT_GE(s.fd, 0) << s.what;
    }
    char garbage[sizeof(tcp::Hello)];
    memset(garbage, 'G', sizeof(garbage));
    ASSERT_EQ(send(strangers[0].fd, garbage, sizeof(garbage), MSG_NOSIGNAL), 48);
    forged.secret[0] ^= 0x55;
    tcp::Hello h = tcp::makeHello(forged, 2, 0);
    ASSERT_EQ(send(strangers[1].fd, &h, sizeof(h), MSG_NOSIGNAL), 48);
    forged.secret[0] ^= 0x55;
    forged.commTag += 1;
    h = tcp::makeHello(forged, 2, 1);
    ASSERT_EQ(send(strangers[2].fd, &h, sizeof(h), MSG_NOSIGNAL), 48);
    ASSERT_EQ(send(strangers[3].fd, garbage, 10, MSG_NOSIGNAL), 10);
    shutdown(strangers[3].fd, SHUT_WR);
    start = Clock::now();
    watcher = std::thread(watchStrangers, &strangers, start);
  };
  auto body = exchangeAllPairs(2, {0, 7, 200'003});
  auto exits = runRanks(
      3,
      [&body](RankInfo& info) {
        // Rank 1 connects to rank 2 late, so rank 2 must deal with the strangers while it
        // waits: what closes them early is the check, not the end of the handshake.
        if (info.rank == 1) connectLate(info, 2000);
        return body(info);
      },
      options);
  expectAllOk(exits);
  ASSERT_TRUE(watcher.joinable());
  watcher.join();
  for (auto& s : strangers) {
    EXPECT_EQ(s.bytesBack.load(), 0) << s.what << " got an answer";
    EXPECT_GE(s.closedAfterMs.load(), 0) << s.what << " is still connected";
    if (s.mustBeRefused) {
      EXPECT_LT(s.closedAfterMs.load(), 1500) << s.what << " lingered";
    }
    close(s.fd);
  }
}

// More silent strangers than the listener holds at once queue up before a late real peer: the
// oldest are dropped to make room, so the real peer still gets in.
TEST(TcpTransport, AFloodOfSilentStrangersDoesNotKeepALatePeerOut) {
  std::vector<int> silent;
  test::RunOptions options;
  options.onGather = [&](int round, std::vector<Blob>& blobs) {
    if (round != 0) return;
    SockAddr rank1;
    bool listening = false;
    ASSERT_TRUE(tcp::decodeAddress(blobs[1], 1, &rank1, &listening).ok());
    for (int i = 0; i < 100; ++i) {
      silent.push_back(connectTo(rank1));
      ASSERT_GE(silent.back(), 0);
    }
  };
  auto body = exchangeAllPairs(1, {0, 7, 4096});
  auto exits = runRanks(
      2,
      [&body](RankInfo& info) {
        if (info.rank == 0) connectLate(info, 500);  // once the strangers are queued
        return body(info);
      },
      options);
  expectAllOk(exits);
  for (int fd : silent)
    close(fd);
}

TEST(TcpTransport, KilledPeerIsReportedByRead) {
  auto exits = runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    ctx.nSocketsPerPeer = 2;
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(tcp::connect(ctx, {1 - info.rank}, &links));
    if (info.rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let rank 0 start waiting
      raise(SIGKILL);
    }
    auto start = Clock::now();
    Status s = test::awaitFailure(ctx, *links[0], 1, false, Deadline::after(10'000));
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (s.code() != weftRemoteError || s.message().find("closed") == std::string::npos ||
        ms > 3000) {
      return errorf(weftInternalError, "after %lld ms: code %d, %s", static_cast<long long>(ms),
                    s.code(), s.message().c_str());
    }
    return okStatus();
  });
  EXPECT_TRUE(exits[0].ok()) << exits[0].describe();
  EXPECT_TRUE(exits[1].killedBy(SIGKILL)) << exits[1].describe();
}

TEST(TcpTransport, ClosedPeerDeliversWhatItSentThenReportsClosed) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    ctx.nSocketsPerPeer = 2;
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(tcp::connect(ctx, {1 - info.rank}, &links));
    if (info.rank == 1) return test::sendOneThenClose(ctx, *links[0], 12'345);
    return test::readOneThenSeeClosed(ctx, *links[0], 12'345);
  }));
}

// Rank 1 publishes a listener that never accepts: the connection completes in the kernel's
// backlog, but no hello answer ever comes.
Status silentRank(RankInfo& info) {
  Socket listener;
  SockAddr bound;
  SockAddr address;
  WEFT_RETURN_IF_ERROR(SockAddr::parse("127.0.0.1:0", &address));
  WEFT_RETURN_IF_ERROR(listenSocket(address, &listener, &bound));
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(info.allGather(tcp::encodeAddress(&bound), &all));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past rank 0's deadline
  return okStatus();
}

TEST(TcpTransport, PeerThatNeverAnswersHitsTheDeadline) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    if (info.rank == 1) return silentRank(info);
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather, 800);
    std::vector<std::unique_ptr<Link>> links;
    auto start = Clock::now();
    Status s = tcp::connect(ctx, {1}, &links);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (s.code() != weftTimeout || s.message().find("rank 1") == std::string::npos || ms > 2000) {
      return errorf(weftInternalError, "after %lld ms: %s", static_cast<long long>(ms),
                    s.message().c_str());
    }
    return okStatus();
  }));
}

TEST(TcpTransport, AbortStopsConnecting) {
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
    Status s = tcp::connect(ctx, {1}, &links);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    aborter.join();
    if (s.ok() || s.message().find("abort") == std::string::npos || ms > 2000) {
      return errorf(weftInternalError, "after %lld ms: %s", static_cast<long long>(ms),
                    s.message().c_str());
    }
    return okStatus();
  }));
}

}  // namespace
}  // namespace weft
