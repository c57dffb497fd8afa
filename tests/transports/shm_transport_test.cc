// The shm transport across real processes: traffic, alignment, peer death, and no leftovers.
#include "transports/shm/shm_transport.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "tests/transports/forbid_cross_memory.h"
#include "tests/transports/multi_process.h"
#include "tests/transports/traffic.h"
#include "transports/channel.h"
#include "transports/cross_memory.h"
#include "transports/shm/shm_segment.h"

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

std::set<std::string> devShmEntries() {
  std::set<std::string> names;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

// Our segment is an anonymous memfd, visible only in our fd table.
Status expectMemfdSegment() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return Status(weftSystemError, "cannot list /proc/self/fd");
  bool found = false;
  while (dirent* e = readdir(d)) {
    char target[256] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    if (readlink(path.c_str(), target, sizeof(target) - 1) > 0 &&
        strstr(target, "memfd:weft-shm") != nullptr) {
      found = true;
    }
  }
  closedir(d);
  return found ? okStatus() : Status(weftInternalError, "no memfd:weft-shm segment in fd table");
}

void expectAllOk(const std::vector<RankExit>& exits) {
  for (size_t r = 0; r < exits.size(); ++r) {
    EXPECT_TRUE(exits[r].ok()) << "rank " << r << ": " << exits[r].describe();
  }
}

Status exchangeAllPairs(RankInfo& info) {
  TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
  std::vector<int> peers = allOthers(info.rank, info.nranks);
  std::vector<std::unique_ptr<Link>> links;
  WEFT_RETURN_IF_ERROR(shm::connect(ctx, peers, &links));
  if (links.size() != peers.size()) return Status(weftInternalError, "wrong number of links");
  for (const auto& l : links) {
    if (strcmp(l->kind(), "shm") != 0) return Status(weftInternalError, "not an shm link");
  }
  WEFT_RETURN_IF_ERROR(expectMemfdSegment());
  WEFT_RETURN_IF_ERROR(test::exchangeMessages(ctx, peers, links, test::mixedSizes()));
  // Nobody closes before everyone is done reading.
  std::vector<Blob> ignored;
  return info.allGather({}, &ignored);
}

TEST(ShmTransport, RingCapacityIsAPowerOfTwoOfAtLeastAPage) {
  EXPECT_EQ(shm::ringCapacityFor(0), shm::kPageBytes);
  EXPECT_EQ(shm::ringCapacityFor(5000), 8192u);
  EXPECT_EQ(shm::ringCapacityFor(1u << 20), 1u << 20);
}

// A segment's description comes from another process: every field that sizes a mapping is
// checked before anything is mapped, and a bad one is an error naming the rank, not a crash.
TEST(ShmTransport, MalformedSegmentBlobsAreRejected) {
  auto blobOf = [](shm::SegmentBlobHeader h, uint64_t ringOffset) {
    Blob blob(sizeof(h) + sizeof(shm::SegmentBlobRing));
    memcpy(blob.data(), &h, sizeof(h));
    shm::SegmentBlobRing ring{0, 0, ringOffset};
    memcpy(blob.data() + sizeof(h), &ring, sizeof(ring));
    return blob;
  };
  const size_t page = shm::kPageBytes;
  shm::SegmentBlobHeader good{shm::kSegmentBlobMagic,
                              shm::kSegmentVersion,
                              0,
                              static_cast<int32_t>(getpid()),
                              3,
                              0,
                              page,
                              1,
                              0,
                              {page, page, 2 * page}};
  const uint64_t ringAt = 5 * page;  // after the header page and the regions
  good.segmentBytes = ringAt + 2 * page;
  shm::SegmentInfo info;
  ASSERT_TRUE(shm::parseSegmentBlob(blobOf(good, ringAt), 1, &info).ok());
  EXPECT_EQ(info.regionBytes[2], 2 * page);
  ASSERT_EQ(info.rings.size(), 1u);

  auto rejected = [&](shm::SegmentBlobHeader h, uint64_t offset, const char* what) {
    Status st = shm::parseSegmentBlob(blobOf(h, offset), 1, &info);
    EXPECT_FALSE(st.ok()) << what;
    EXPECT_NE(st.message().find("rank 1"), std::string::npos) << what << ": " << st.message();
  };
  shm::SegmentBlobHeader h = good;
  h.regionBytes[1] = page + 1;
  rejected(h, ringAt, "a region of no whole pages");
  h = good;
  h.regionBytes[0] = (size_t{1} << 30) + page;
  rejected(h, ringAt, "a region over 1 GiB");
  h = good;
  h.segmentBytes = 4 * page;
  rejected(h, ringAt, "a segment smaller than its header and regions");
  rejected(good, good.segmentBytes, "a ring past the segment's end");
  rejected(good, ringAt + 1, "a ring off a page");
  h = good;
  h.version = shm::kSegmentVersion - 1;
  rejected(h, ringAt, "another version");
  Blob cut = blobOf(good, ringAt);
  cut.pop_back();
  EXPECT_FALSE(shm::parseSegmentBlob(cut, 1, &info).ok());
  EXPECT_FALSE(shm::parseSegmentBlob(Blob(10), 1, &info).ok());
}

TEST(ShmTransport, TwoRanksExchangeManySizesBothWays) {
  expectAllOk(runRanks(2, exchangeAllPairs));
}

TEST(ShmTransport, FourRanksExchangeAllPairs) {
  std::set<std::string> before = devShmEntries();
  expectAllOk(runRanks(4, exchangeAllPairs));
  std::set<std::string> after = devShmEntries();
  for (const auto& name : after) {
    EXPECT_TRUE(before.count(name)) << "/dev/shm/" << name << " appeared during the run";
  }
}

TEST(ShmTransport, EightRanksOnTwoCoresExchangeAllPairs) {
  expectAllOk(runRanks(8, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    std::vector<int> peers = allOthers(info.rank, info.nranks);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(shm::connect(ctx, peers, &links));
    WEFT_RETURN_IF_ERROR(test::exchangeMessages(ctx, peers, links, {0, 5, 4097, 300'001}));
    std::vector<Blob> ignored;
    return info.allGather({}, &ignored);
  }));
}

TEST(ShmTransport, RawStreamKeepsPeekAlignment) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    ctx.shmRingBytes = 4096;  // wraps often
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(shm::connect(ctx, {1 - info.rank}, &links));
    const size_t bytes = 3u << 20;
    if (info.rank == 0) return test::sendRawStream(*links[0], 0, 1, bytes, ctx.deadline);
    return test::receiveRawStream(*links[0], 0, 1, bytes, ctx.deadline);
  }));
}

TEST(ShmTransport, RankWithoutPeersStillJoinsTheGathers) {
  expectAllOk(runRanks(3, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    std::vector<int> peers;
    if (info.rank < 2) peers = {1 - info.rank};
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(shm::connect(ctx, peers, &links));
    if (links.size() != peers.size()) return Status(weftInternalError, "wrong number of links");
    WEFT_RETURN_IF_ERROR(test::exchangeMessages(ctx, peers, links, {0, 1, 100'000}));
    std::vector<Blob> ignored;
    return info.allGather({}, &ignored);
  }));
}

TEST(ShmTransport, UnreachableSegmentFailsEveryRankClearly) {
  test::RunOptions options;
  options.onGather = [](int round, std::vector<Blob>& blobs) {
    if (round != 0) return;
    // Point rank 1's description at an fd it does not have.
    shm::SegmentBlobHeader h;
    memcpy(&h, blobs[1].data(), sizeof(h));
    h.fd = 999'999;
    memcpy(blobs[1].data(), &h, sizeof(h));
  };
  expectAllOk(runRanks(
      3,
      [](RankInfo& info) {
        TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
        std::vector<std::unique_ptr<Link>> links;
        Status s = shm::connect(ctx, allOthers(info.rank, info.nranks), &links);
        if (s.ok()) return Status(weftInternalError, "connect succeeded");
        if (!links.empty()) return Status(weftInternalError, "links left after a failure");
        if (info.rank != 1 && s.message().find("WEFT_TRANSPORT=tcp") == std::string::npos) {
          return errorf(weftInternalError, "unhelpful error: %s", s.message().c_str());
        }
        return okStatus();
      },
      options));
}

TEST(ShmTransport, KilledPeerIsReportedByCheckPeerAndLeaksNothing) {
  std::set<std::string> before = devShmEntries();
  auto exits = runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(shm::connect(ctx, {1 - info.rank}, &links));
    if (info.rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let rank 0 start waiting
      raise(SIGKILL);
    }
    auto start = Clock::now();
    Status s = test::awaitFailure(ctx, *links[0], 1, true, Deadline::after(10'000));
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (s.code() != weftRemoteError) {
      return errorf(weftInternalError, "expected a remote error, got: %s", s.message().c_str());
    }
    if (s.message().find("exited") == std::string::npos || ms > 3000) {
      return errorf(weftInternalError, "after %lld ms: %s", static_cast<long long>(ms),
                    s.message().c_str());
    }
    return okStatus();
  });
  EXPECT_TRUE(exits[0].ok()) << exits[0].describe();
  EXPECT_TRUE(exits[1].killedBy(SIGKILL)) << exits[1].describe();
  for (const auto& name : devShmEntries()) {
    EXPECT_TRUE(before.count(name)) << "/dev/shm/" << name << " appeared during the run";
  }
}

TEST(ShmTransport, FarewellsAreNamed) {
  expectAllOk(runRanks(3, [](RankInfo& info) {
    return test::farewellsAreNamed(test::testContext(info.rank, info.nranks, info.allGather),
                                   shm::connect);
  }));
}

TEST(ShmTransport, ClosedPeerDeliversWhatItSentThenReportsClosed) {
  expectAllOk(runRanks(2, [](RankInfo& info) {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(shm::connect(ctx, {1 - info.rank}, &links));
    const std::vector<size_t> sizes = {12'345};
    if (info.rank == 1) {
      // Send one message (it fits the ring), then close and leave at once.
      std::vector<char> data(sizes[0]);
      test::fillPayload(1, 0, 0, data.data(), data.size());
      Channel channel(links[0].get(), ctx.commTag, 1, 0);
      OutgoingMessage m;
      m.data = data.data();
      m.bytes = data.size();
      bool done = false;
      WEFT_RETURN_IF_ERROR(channel.progressSend(m, &done));
      if (!done) return Status(weftInternalError, "the message did not fit the ring");
      links[0]->close();
      return okStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 1 is gone by now
    WEFT_RETURN_IF_ERROR(links[0]->checkPeer());                  // its message is still to be read
    Channel channel(links[0].get(), ctx.commTag, 0, 1);
    std::vector<char> data(sizes[0]);
    IncomingMessage m;
    m.data = data.data();
    m.bytes = data.size();
    bool done = false;
    WEFT_RETURN_IF_ERROR(channel.progressRecv(m, &done));
    std::vector<char> expected(sizes[0]);
    test::fillPayload(1, 0, 0, expected.data(), expected.size());
    if (!done || data != expected) return Status(weftInternalError, "message lost");
    if (links[0]->checkPeer().code() != weftRemoteError) {
      return Status(weftInternalError, "checkPeer missed the close");
    }
    size_t written = 0;
    if (links[0]->write("x", 1, &written).code() != weftRemoteError) {
      return Status(weftInternalError, "write missed the close");
    }
    const void* view = nullptr;
    size_t avail = 0;
    if (links[0]->peek(&view, &avail).code() != weftRemoteError) {
      return Status(weftInternalError, "peek missed the close");
    }
    return okStatus();
  }));
}

// Each rank's window is its peers' too: what one writes in its control area and regions, the
// others read, with the sizes every rank asked for (whole pages); the control area starts at zero.
TEST(ShmTransport, WindowsAreShared) {
  expectAllOk(runRanks(3, [](RankInfo& info) -> Status {
    TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
    ctx.shmWindowRegions = {4096, 2 * 4096 - 100, 3 * 4096};
    const std::array<size_t, kWindowRegions> pages = {4096, 2 * 4096, 3 * 4096};
    std::vector<int> peers = allOthers(info.rank, 3);
    std::vector<std::unique_ptr<Link>> links;
    WEFT_RETURN_IF_ERROR(shm::connect(ctx, peers, &links));
    const Window* mine = links[0]->ownWindow();
    if (mine->regionBytes != pages) {
      return errorf(weftInternalError, "regions of %zu, %zu and %zu bytes", mine->regionBytes[0],
                    mine->regionBytes[1], mine->regionBytes[2]);
    }
    const std::vector<char> zeros(kWindowControlBytes, 0);
    if (memcmp(mine->control, zeros.data(), zeros.size()) != 0) {
      return Status(weftInternalError, "the control area does not start at zero");
    }
    test::fillPayload(info.rank, 0, 0, mine->control, kWindowControlBytes);
    for (size_t k = 0; k < kWindowRegions; ++k)
      test::fillPayload(info.rank, static_cast<int>(k) + 1, 0, mine->regions[k], pages[k]);
    std::vector<Blob> all;
    WEFT_RETURN_IF_ERROR(info.allGather({}, &all));  // everyone has written
    for (size_t i = 0; i < peers.size(); ++i) {
      const Window* theirs = links[i]->peerWindow();
      std::vector<char> expected(kWindowControlBytes);
      test::fillPayload(peers[i], 0, 0, expected.data(), expected.size());
      bool same = memcmp(theirs->control, expected.data(), expected.size()) == 0 &&
                  theirs->regionBytes == pages && theirs->owner->pid > 0 &&
                  theirs->owner->pid != mine->owner->pid;
      for (size_t k = 0; k < kWindowRegions && same; ++k) {
        expected.resize(pages[k]);
        test::fillPayload(peers[i], static_cast<int>(k) + 1, 0, expected.data(), pages[k]);
        same = memcmp(theirs->regions[k], expected.data(), pages[k]) == 0;
      }
      if (!same) return errorf(weftInternalError, "rank %d's window reads wrong here", peers[i]);
    }
    return info.allGather({}, &all);  // nobody unmaps while others read
  }));
}

// Each rank publishes whether it may read every peer's memory, and may then read their
// buffers, wherever they are, with one copy; a rank whose kernel refuses says so, and the group
// sees it.
Status checkCrossMemory(RankInfo& info, int refusing) {
  if (info.rank == refusing && !test::forbidCrossMemory()) {
    return Status(weftSystemError, "could not install the seccomp filter");
  }
  TransportContext ctx = test::testContext(info.rank, info.nranks, info.allGather);
  std::vector<int> peers = allOthers(info.rank, info.nranks);
  std::vector<std::unique_ptr<Link>> links;
  WEFT_RETURN_IF_ERROR(shm::connect(ctx, peers, &links));
  std::vector<int32_t> buffer(100003);
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer[i] = static_cast<int32_t>(i) * (info.rank + 1);
  const uint64_t address = addressOf(buffer.data());
  Blob mine(sizeof(address));
  memcpy(mine.data(), &address, sizeof(address));
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(info.allGather(mine, &all));
  const WindowOwner& own = *links[0]->ownWindow()->owner;
  if (own.pid != getpid() || own.readsPeers.load() != (info.rank == refusing ? 0u : 1u)) {
    return errorf(weftInternalError, "own flags: pid %d, readsPeers %u", own.pid,
                  own.readsPeers.load());
  }
  for (size_t i = 0; i < peers.size(); ++i) {
    const WindowOwner& theirs = *links[i]->peerWindow()->owner;
    if (theirs.readsPeers.load() != (peers[i] == refusing ? 0u : 1u)) {
      return errorf(weftInternalError, "rank %d's readsPeers reads %u here", peers[i],
                    theirs.readsPeers.load());
    }
    if (info.rank == refusing) continue;
    uint64_t at = 0;
    memcpy(&at, all[peers[i]].data(), sizeof(at));
    std::vector<int32_t> got(buffer.size());
    WEFT_RETURN_IF_ERROR(readProcessMemory(theirs.pid, got.data(), at, got.size() * 4));
    for (size_t k = 0; k < got.size(); ++k) {
      if (got[k] != static_cast<int32_t>(k) * (peers[i] + 1)) {
        return errorf(weftInternalError, "rank %d's buffer reads wrong at %zu", peers[i], k);
      }
    }
  }
  return info.allGather({}, &all);  // nobody frees its buffer while others read
}

TEST(ShmTransport, PeersMayReadEachOthersBuffers) {
  expectAllOk(runRanks(3, [](RankInfo& info) { return checkCrossMemory(info, -1); }));
}

TEST(ShmTransport, ARankThatMayNotReadItsPeersSaysSo) {
  expectAllOk(runRanks(3, [](RankInfo& info) { return checkCrossMemory(info, 1); }));
}

}  // namespace
}  // namespace weft
