// RemotePuts over loopback links, with the peers' ends driven by hand in the test: a peer's put
// lands and raises its signal while nobody calls in; a stream that fails in the middle of a put
// fails that put; an abort closes every link; and finish() still closes with the live peers
// when another one has failed, then names the failed one.
#include "src/comm/remote_puts.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "transports/loopback/loopback_link.h"

namespace weft {
namespace {

constexpr int kSignals = 4;
constexpr int64_t kTimeoutMs = 10000;

// This rank's side: a part and the signals each peer raises, and the RemotePuts over the links.
struct Local {
  std::vector<char> part = std::vector<char>(4096, 0);
  std::atomic<uint64_t> signals[2][kSignals] = {};
  std::atomic<bool> aborted{false};
  std::vector<std::unique_ptr<Link>> peerEnds;  // the peers' ends of the links, by stream
  std::unique_ptr<RemotePuts> puts;

  explicit Local(int peers, size_t ringBytes = 4096) {
    std::vector<std::unique_ptr<Link>> links;
    std::vector<int> ranks;
    std::vector<PutTarget> targets;
    for (int p = 0; p < peers; ++p) {
      auto [mine, theirs] = makeLoopbackPair(ringBytes);
      links.push_back(std::move(mine));
      peerEnds.push_back(std::move(theirs));
      ranks.push_back(p + 1);
      targets.push_back(PutTarget{part.data(), part.size(), signals[p], kSignals});
    }
    EXPECT_TRUE(RemotePuts::start(std::move(links), ranks, targets, &aborted, &puts).ok());
  }
};

// Drives `stream` (a peer's end) until `done` holds or a few seconds pass.
template <typename Done>
bool drive(PutStream& stream, Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < until) {
    bool progressed = false;
    if (!stream.progressSend(&progressed).ok() || !stream.progressReceive(&progressed).ok()) {
      return false;
    }
    if (!progressed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

TEST(RemotePuts, APeersPutLandsWhileNobodyCallsIn) {
  Local local(1);
  std::vector<char> peerPart(64);
  std::atomic<uint64_t> peerSignals[kSignals] = {};
  PutStream peer(local.peerEnds[0].get(), 0, PutTarget{peerPart.data(), 64, peerSignals, kSignals});
  const std::string data = "landed while nobody called in";
  peer.startPut(data.data(), data.size(), 1000, 2);
  ASSERT_TRUE(drive(peer, [&] { return local.signals[0][2].load() == 1; }));
  EXPECT_EQ(std::string(local.part.data() + 1000, data.size()), data);
  // And this side's put reaches the peer.
  const std::string back = "and back";
  std::thread caller(
      [&] { EXPECT_TRUE(local.puts->put(1, back.data(), back.size(), 8, 1, kTimeoutMs).ok()); });
  EXPECT_TRUE(drive(peer, [&] { return peerSignals[1].load() == 1; }));
  caller.join();
  EXPECT_EQ(std::string(peerPart.data() + 8, back.size()), back);
}

TEST(RemotePuts, AStreamThatFailsMidPutFailsThePut) {
  Local local(1, 256);  // far less than the put: it goes in many pieces
  std::thread hostile([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const PutStream::Header bad{0xdeadbeefu, 1, 1, 0, 0, 0, 0};
    size_t written = 0;
    EXPECT_TRUE(local.peerEnds[0]->write(&bad, sizeof(bad), &written).ok());
  });
  std::vector<char> data(1 << 20, 'd');
  const Status s = local.puts->put(1, data.data(), data.size(), 0, 0, kTimeoutMs);
  hostile.join();
  EXPECT_EQ(s.code(), weftRemoteError) << s.message();
  EXPECT_NE(s.message().find("bad header"), std::string::npos) << s.message();
  EXPECT_FALSE(local.puts->failure(1).ok());
  // Later puts to that peer fail at once.
  EXPECT_FALSE(local.puts->put(1, data.data(), 8, 0, 0, kTimeoutMs).ok());
}

TEST(RemotePuts, AnAbortClosesTheLinksAndFailsThePuts) {
  Local local(1);
  local.aborted = true;
  const auto start = std::chrono::steady_clock::now();
  char x = 'x';
  const Status s = local.puts->put(1, &x, 1, 0, 0, kTimeoutMs);
  EXPECT_FALSE(s.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The peer's end finds the link closed.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Status peer;
  while (peer.ok() && std::chrono::steady_clock::now() < until) {
    char byte = 0;
    size_t got = 0;
    peer = local.peerEnds[0]->read(&byte, 1, &got);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(peer.ok());
}

TEST(RemotePuts, FinishClosesWithTheLivePeersAndNamesTheFailedOne) {
  Local local(2);
  const PutStream::Header bad{
      PutStream::kMagic, PutStream::kVersion, PutStream::kPut, 0, 0, 4000, 1000};  // past the part
  size_t written = 0;
  ASSERT_TRUE(local.peerEnds[0]->write(&bad, sizeof(bad), &written).ok());
  while (local.puts->failure(1).ok())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_NE(local.puts->failure(1).message().find("outside"), std::string::npos);
  EXPECT_TRUE(local.puts->failure(2).ok());

  std::vector<char> peerPart(64);
  std::atomic<uint64_t> peerSignals[kSignals] = {};
  PutStream live(local.peerEnds[1].get(), 0, PutTarget{peerPart.data(), 64, peerSignals, kSignals});
  Status finished;
  std::thread caller([&] { finished = local.puts->finish(kTimeoutMs); });
  EXPECT_TRUE(drive(live, [&] { return live.peerClosed(); }));  // the live peer got the close
  live.startClose();
  EXPECT_TRUE(drive(live, [&] { return !live.sending(); }));
  caller.join();
  EXPECT_NE(finished.message().find("rank 1"), std::string::npos) << finished.message();
}

}  // namespace
}  // namespace weft
