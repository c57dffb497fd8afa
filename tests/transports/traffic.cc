#include "tests/transports/traffic.h"

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "src/base/wait.h"
#include "transports/channel.h"

namespace weft::test {
namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Stream byte at position pos of the raw stream from -> to.
uint8_t rawByte(int from, int to, uint64_t pos) {
  return static_cast<uint8_t>(
      (pos * 131 + pos / 251 + static_cast<uint64_t>(from) * 7 + static_cast<uint64_t>(to) * 13) &
      0xff);
}

// Copies payload pieces and checks the alignment rule: payloads start 8-aligned in the stream,
// so a piece at payload offset o must sit at an address that is o modulo 8.
class CheckingSink : public PayloadSink {
 public:
  explicit CheckingSink(char* dst) : dst_(dst) {}
  void accept(size_t offset, const void* data, size_t bytes) override {
    if ((reinterpret_cast<uintptr_t>(data) - offset) % 8 != 0) misaligned_ = true;
    memcpy(dst_ + offset, data, bytes);
  }
  bool misaligned() const { return misaligned_; }

 private:
  char* dst_;
  bool misaligned_ = false;
};

struct PeerTraffic {
  Channel channel;
  int peer = -1;
  size_t nextSend = 0;
  size_t nextRecv = 0;
  bool sending = false;
  bool receiving = false;
  std::vector<char> outData;
  std::vector<char> inData;
  OutgoingMessage out;
  IncomingMessage in;
  std::unique_ptr<CheckingSink> sink;
};

size_t progressMark(const PeerTraffic& t) {
  return t.nextSend + t.nextRecv + t.out.headerSent + t.out.sent + t.in.headerReceived +
         t.in.received;
}

Status stepSend(const TransportContext& ctx, PeerTraffic& t, const std::vector<size_t>& sizes) {
  if (t.nextSend >= sizes.size()) return okStatus();
  if (!t.sending) {
    t.outData.resize(sizes[t.nextSend]);
    fillPayload(ctx.rank, t.peer, t.nextSend, t.outData.data(), t.outData.size());
    t.out = OutgoingMessage();
    t.out.data = t.outData.data();
    t.out.bytes = t.outData.size();
    t.sending = true;
  }
  bool done = false;
  WEFT_RETURN_IF_ERROR(t.channel.progressSend(t.out, &done));
  if (done) {
    t.sending = false;
    ++t.nextSend;
  }
  return okStatus();
}

Status checkReceived(const TransportContext& ctx, PeerTraffic& t) {
  std::vector<char> expected(t.inData.size());
  fillPayload(t.peer, ctx.rank, t.nextRecv, expected.data(), expected.size());
  if (expected != t.inData) {
    size_t at = 0;
    while (expected[at] == t.inData[at])
      ++at;
    return errorf(weftInternalError, "rank %d: message %zu from rank %d (%zu bytes) differs at %zu",
                  ctx.rank, t.nextRecv, t.peer, expected.size(), at);
  }
  if (t.sink && t.sink->misaligned()) {
    return errorf(weftInternalError, "rank %d: peeked a misaligned view from rank %d (message %zu)",
                  ctx.rank, t.peer, t.nextRecv);
  }
  return okStatus();
}

Status stepRecv(const TransportContext& ctx, PeerTraffic& t, const std::vector<size_t>& sizes) {
  if (t.nextRecv >= sizes.size()) return okStatus();
  if (!t.receiving) {
    t.inData.assign(sizes[t.nextRecv], 0);
    t.in = IncomingMessage();
    t.in.bytes = t.inData.size();
    t.sink.reset();
    if (t.nextRecv % 2 == 1) {
      t.sink = std::make_unique<CheckingSink>(t.inData.data());
      t.in.sink = t.sink.get();
    } else {
      t.in.data = t.inData.data();
    }
    t.receiving = true;
  }
  bool done = false;
  WEFT_RETURN_IF_ERROR(t.channel.progressRecv(t.in, &done));
  if (done) {
    WEFT_RETURN_IF_ERROR(checkReceived(ctx, t));
    t.receiving = false;
    ++t.nextRecv;
  }
  return okStatus();
}

}  // namespace

void fillPayload(int from, int to, size_t index, void* data, size_t bytes) {
  uint64_t state = (static_cast<uint64_t>(from) << 40) ^ (static_cast<uint64_t>(to) << 20) ^ index ^
                   (bytes << 24);
  char* out = static_cast<char*>(data);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t v = splitmix(state);
    memcpy(out + i, &v, 8);
  }
  if (i == bytes) return;  // out may be null when bytes is 0
  uint64_t v = splitmix(state);
  memcpy(out + i, &v, bytes - i);
}

std::vector<size_t> mixedSizes() {
  return {0,
          1,
          7,
          8,
          4096,
          4097,
          13,
          65539,
          3u << 20 | 5,
          1u << 20,
          100'001,
          (5u << 20) + 1,
          64 * 1024 - 1,
          0};
}

TransportContext testContext(int rank, int nranks,
                             std::function<Status(const Blob&, std::vector<Blob>*)> allGather,
                             int64_t deadlineMs) {
  TransportContext ctx;
  ctx.rank = rank;
  ctx.nranks = nranks;
  ctx.commTag = 0x5745465454455354ull;
  for (size_t i = 0; i < ctx.secret.size(); ++i)
    ctx.secret[i] = static_cast<uint8_t>(0xa0 + i);
  ctx.deadline = Deadline::after(deadlineMs);
  SockAddr loopback;
  (void)SockAddr::parse("127.0.0.1:0", &loopback);
  ctx.localAddress = loopback;
  ctx.shmRingBytes = 64 * 1024;  // small, so large messages fill the rings
  ctx.allGather = std::move(allGather);
  return ctx;
}

Status exchangeMessages(const TransportContext& ctx, const std::vector<int>& peers,
                        const std::vector<std::unique_ptr<Link>>& links,
                        const std::vector<size_t>& sizes) {
  std::vector<PeerTraffic> traffic(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    traffic[i].peer = peers[i];
    traffic[i].channel = Channel(links[i].get(), ctx.commTag, ctx.rank, peers[i]);
  }
  Backoff backoff;
  auto lastProgress = Clock::now();
  for (;;) {
    bool finished = true;
    bool moved = false;
    for (auto& t : traffic) {
      size_t before = progressMark(t);
      WEFT_RETURN_IF_ERROR(stepSend(ctx, t, sizes));
      WEFT_RETURN_IF_ERROR(stepRecv(ctx, t, sizes));
      moved = moved || progressMark(t) != before;
      finished = finished && t.nextSend == sizes.size() && t.nextRecv == sizes.size();
    }
    if (finished) return okStatus();
    if (moved) {
      backoff.reset();
      lastProgress = Clock::now();
      continue;
    }
    if (Clock::now() - lastProgress > std::chrono::milliseconds(100)) {
      for (size_t i = 0; i < links.size(); ++i)
        WEFT_RETURN_IF_ERROR(links[i]->checkPeer());
    }
    if (ctx.deadline.expired()) {
      std::string state;
      for (const auto& t : traffic) {
        state += strprintf(" [rank %d: sent %zu, received %zu]", t.peer, t.nextSend, t.nextRecv);
      }
      return errorf(weftTimeout, "rank %d: exchange timed out:%s", ctx.rank, state.c_str());
    }
    backoff.pause();
  }
}

Status sendRawStream(Link& link, int from, int to, size_t bytes, Deadline deadline) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i)
    data[i] = rawByte(from, to, i);
  static const size_t kPieces[] = {1, 3, 5, 7, 13, 4099, 65537, 100'003, 11};
  size_t pos = 0;
  size_t piece = 0;
  Backoff backoff;
  while (pos < bytes) {
    size_t want = std::min(kPieces[piece++ % std::size(kPieces)], bytes - pos);
    size_t done = 0;
    while (done < want) {
      size_t n = 0;
      WEFT_RETURN_IF_ERROR(link.write(data.data() + pos + done, want - done, &n));
      done += n;
      if (n > 0) {
        backoff.reset();
        continue;
      }
      if (deadline.expired()) return Status(weftTimeout, "raw stream: writing timed out");
      backoff.pause();
    }
    pos += want;
  }
  return okStatus();
}

Status receiveRawStream(Link& link, int from, int to, size_t bytes, Deadline deadline) {
  static const size_t kPieces[] = {5, 1, 4097, 3, 70'001, 9, 11, 262'147};
  uint64_t pos = 0;
  size_t piece = 0;
  std::vector<uint8_t> buffer;
  Backoff backoff;
  while (pos < bytes) {
    size_t want = std::min(kPieces[piece % std::size(kPieces)], static_cast<size_t>(bytes - pos));
    bool usePeek = piece % 2 == 1;
    size_t got = 0;
    if (usePeek) {
      const void* view = nullptr;
      size_t avail = 0;
      WEFT_RETURN_IF_ERROR(link.peek(&view, &avail));
      if (avail > 0 && (reinterpret_cast<uintptr_t>(view) - pos) % 8 != 0) {
        return errorf(weftInternalError, "raw stream: peek at position %llu gave address %p",
                      static_cast<unsigned long long>(pos), view);
      }
      got = std::min(avail, want);
      buffer.assign(static_cast<const uint8_t*>(view), static_cast<const uint8_t*>(view) + got);
      link.consume(got);
    } else {
      buffer.resize(want);
      WEFT_RETURN_IF_ERROR(link.read(buffer.data(), want, &got));
    }
    for (size_t i = 0; i < got; ++i) {
      if (buffer[i] != rawByte(from, to, pos + i)) {
        return errorf(weftInternalError, "raw stream: byte %llu differs",
                      static_cast<unsigned long long>(pos + i));
      }
    }
    pos += got;
    if (got > 0) {
      ++piece;
      backoff.reset();
      continue;
    }
    if (deadline.expired()) return Status(weftTimeout, "raw stream: reading timed out");
    backoff.pause();
  }
  return okStatus();
}

Status awaitFailure(const TransportContext& ctx, Link& link, int peer, bool useCheckPeer,
                    Deadline deadline) {
  Channel channel(&link, ctx.commTag, ctx.rank, peer);
  char buffer[64];
  IncomingMessage in;
  in.data = buffer;
  in.bytes = sizeof(buffer);
  Backoff backoff;
  auto lastCheck = Clock::now();
  while (!deadline.expired()) {
    bool done = false;
    WEFT_RETURN_IF_ERROR(channel.progressRecv(in, &done));
    if (done) return Status(weftInternalError, "a message arrived from a peer that should be gone");
    if (useCheckPeer && Clock::now() - lastCheck > std::chrono::milliseconds(20)) {
      WEFT_RETURN_IF_ERROR(link.checkPeer());
      lastCheck = Clock::now();
    }
    backoff.pause();
  }
  return okStatus();
}

Status sendOneThenClose(const TransportContext& ctx, Link& link, size_t bytes) {
  std::vector<char> data(bytes);
  fillPayload(1, 0, 0, data.data(), data.size());
  Channel channel(&link, ctx.commTag, 1, 0);
  OutgoingMessage m;
  m.data = data.data();
  m.bytes = data.size();
  bool done = false;
  WEFT_RETURN_IF_ERROR(channel.progressSend(m, &done));
  if (!done) return Status(weftInternalError, "the message did not fit the link at once");
  link.close();
  return okStatus();
}

Status readOneThenSeeClosed(const TransportContext& ctx, Link& link, size_t bytes) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 1 is gone by now
  WEFT_RETURN_IF_ERROR(link.checkPeer());                       // its message is still to be read
  Channel channel(&link, ctx.commTag, 0, 1);
  std::vector<char> data(bytes);
  IncomingMessage m;
  m.data = data.data();
  m.bytes = data.size();
  bool done = false;
  Backoff backoff;
  while (!done && !ctx.deadline.expired()) {
    WEFT_RETURN_IF_ERROR(channel.progressRecv(m, &done));
    backoff.pause();
  }
  std::vector<char> expected(bytes);
  fillPayload(1, 0, 0, expected.data(), expected.size());
  if (data != expected) return Status(weftInternalError, "message lost");
  if (link.checkPeer().code() != weftRemoteError) {
    return Status(weftInternalError, "checkPeer missed the close");
  }
  size_t got = 0;
  char byte;
  if (link.read(&byte, 1, &got).code() != weftRemoteError) {
    return Status(weftInternalError, "read missed the close");
  }
  return okStatus();
}

Status farewellsAreNamed(const TransportContext& ctx, ConnectFn connect) {
  std::vector<int> peers;
  for (int r = 0; r < 3; ++r) {
    if (r != ctx.rank) peers.push_back(r);
  }
  std::vector<std::unique_ptr<Link>> links;
  WEFT_RETURN_IF_ERROR(connect(ctx, peers, &links));
  const std::string why = "rank 2 of 3: all_reduce #4: timed out";
  // A message past kFarewellBytes is cut there.
  const std::string longWhy = why + std::string(kFarewellBytes, '.');
  if (ctx.rank != 0) {
    links[0]->sayFarewell(Farewell{2, ctx.rank == 1 ? why : longWhy});
    for (auto& l : links)
      l->close();
    return okStatus();
  }
  for (size_t i = 0; i < links.size(); ++i) {
    const int peer = peers[i];
    Status s;
    while (s.ok() && !ctx.deadline.expired()) {
      char byte = 0;
      size_t got = 0;
      s = links[i]->read(&byte, 1, &got);
      if (s.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::string expected = peer == 1 ? "rank 1 closed the link after rank 2 failed: " + why
                                           : "rank 2 failed: " + longWhy.substr(0, kFarewellBytes);
    if (s.code() != weftRemoteError || s.message() != expected) {
      return errorf(weftInternalError, "rank %d's close read as [%s], not [%s]", peer,
                    s.message().c_str(), expected.c_str());
    }
    Farewell f = links[i]->receivedFarewell();
    if (f.origin != 2 || f.message != (peer == 1 ? why : longWhy.substr(0, kFarewellBytes))) {
      return errorf(weftInternalError, "rank %d's farewell came back as %d [%s]", peer, f.origin,
                    f.message.c_str());
    }
  }
  return okStatus();
}

Status rawStreamBetweenTwo(const TransportContext& ctx, ConnectFn connect, size_t bytes) {
  std::vector<std::unique_ptr<Link>> links;
  WEFT_RETURN_IF_ERROR(connect(ctx, {1 - ctx.rank}, &links));
  if (ctx.rank == 0) {
    WEFT_RETURN_IF_ERROR(sendRawStream(*links[0], 0, 1, bytes, ctx.deadline));
  } else {
    WEFT_RETURN_IF_ERROR(receiveRawStream(*links[0], 0, 1, bytes, ctx.deadline));
  }
  std::vector<Blob> ignored;
  return ctx.allGather({}, &ignored);
}

Status rankWithoutPeers(const TransportContext& ctx, ConnectFn connect) {
  std::vector<int> peers;
  if (ctx.rank > 0) peers = {3 - ctx.rank};  // 1 <-> 2; rank 0 has none
  std::vector<std::unique_ptr<Link>> links;
  WEFT_RETURN_IF_ERROR(connect(ctx, peers, &links));
  if (links.size() != peers.size()) return Status(weftInternalError, "wrong number of links");
  WEFT_RETURN_IF_ERROR(exchangeMessages(ctx, peers, links, {0, 1, 300'001}));
  std::vector<Blob> ignored;
  return ctx.allGather({}, &ignored);
}

}  // namespace weft::test
