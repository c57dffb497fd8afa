#include "src/bootstrap/bootstrap.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/log.h"
#include "src/bootstrap/hello_gate.h"
#include "src/bootstrap/host_identity.h"

namespace weft {
namespace {

constexpr uint32_t kMaxBlobBytes = 64u << 20;

bool wouldBlock(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

// Sends `out` to one neighbour while receiving from the other, so that neither side's send
// waits on the other's receive however large the blobs are. Each message is a 4-byte length and
// the bytes.
Status exchange(const Socket& to, const Blob& out, const Socket& from, Blob* in, Deadline deadline,
                const AbortFlag* abort) {
  Blob message(4 + out.size());
  const auto length = static_cast<uint32_t>(out.size());
  memcpy(message.data(), &length, 4);
  if (!out.empty()) memcpy(message.data() + 4, out.data(), out.size());
  size_t sent = 0;
  uint8_t lengthBytes[4];
  size_t got = 0;  // counts the length prefix, then the payload
  uint32_t incoming = 0;
  bool haveLength = false;
  for (;;) {
    bool sendDone = sent == message.size();
    bool recvDone = haveLength && got == incoming;
    if (sendDone && recvDone) return okStatus();
    if (abort != nullptr && abort->load()) return abortedStatus();
    bool moved = false;
    if (!sendDone) {
      ssize_t n = ::send(to.fd(), message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        moved = true;
      } else if (n < 0 && !wouldBlock(errno)) {
        return Status(weftRemoteError, "bootstrap: the next rank closed its connection");
      }
    }
    if (!recvDone) {
      void* dst = haveLength ? static_cast<void*>(in->data() + got) : lengthBytes + got;
      size_t want = haveLength ? incoming - got : 4 - got;
      ssize_t n = ::recv(from.fd(), dst, want, 0);
      if (n > 0) {
        got += static_cast<size_t>(n);
        moved = true;
        if (!haveLength && got == 4) {
          memcpy(&incoming, lengthBytes, 4);
          if (incoming > kMaxBlobBytes) {
            return errorf(weftInternalError, "bootstrap: blob of %u bytes is too large", incoming);
          }
          in->assign(incoming, 0);
          haveLength = true;
          got = 0;
        }
      } else if (n == 0 || !wouldBlock(errno)) {
        return Status(weftRemoteError, "bootstrap: the previous rank closed its connection");
      }
    }
    if (moved) continue;
    if (deadline.expired()) return Status(weftTimeout, "bootstrap all-gather timed out");
    pollfd fds[2] = {{to.fd(), static_cast<short>(sendDone ? 0 : POLLOUT), 0},
                     {from.fd(), static_cast<short>(recvDone ? 0 : POLLIN), 0}};
    if (poll(fds, 2, deadline.remainingMs(50)) < 0 && errno != EINTR) {
      return systemError("poll", errno);
    }
  }
}

}  // namespace

Status Bootstrap::create(const UniqueIdData& id, const Options& options,
                         std::unique_ptr<Bootstrap>* out) {
  std::unique_ptr<Bootstrap> b(new Bootstrap(options));
  SockAddr bound;
  WEFT_RETURN_IF_ERROR(listenSocket(options.localAddress, &b->listener_, &bound));
  RankInfo mine;
  mine.listen = WireAddress::from(bound);
  mine.hostHash = hostHash();
  mine.pid = getpid();
  mine.locality = options.locality;
  gethostname(mine.hostname, sizeof(mine.hostname) - 1);
  WEFT_RETURN_IF_ERROR(b->meetAtRoot(id, mine));
  WEFT_RETURN_IF_ERROR(b->connectRing(id));
  b->listener_.close();
  *out = std::move(b);
  return okStatus();
}

Status Bootstrap::meetAtRoot(const UniqueIdData& id, const RankInfo& mine) {
  const SockAddr root = id.root.toSockAddr();
  Socket s;
  WEFT_RETURN_IF_ERROR(connectSocket(root, deadline(), options_.abort, &s)
                           .withContext("reaching the bootstrap root at " + root.toString()));
  RootHello hello;
  hello.secret = id.secret;
  hello.commTag = id.commTag;
  hello.rank = options_.rank;
  hello.nranks = options_.nranks;
  hello.info = mine;
  WEFT_RETURN_IF_ERROR(sendAll(s, &hello, sizeof(hello), deadline(), options_.abort));
  RootReply reply;
  WEFT_RETURN_IF_ERROR(recvAll(s, &reply, sizeof(reply), deadline(), options_.abort)
                           .withContext("waiting for all ranks at the bootstrap root"));
  if (reply.magic != kBootstrapMagic || reply.version != kBootstrapVersion) {
    return Status(weftInternalError, "bootstrap root sent a malformed reply");
  }
  reply.message[sizeof(reply.message) - 1] = '\0';
  if (reply.status != weftSuccess) {
    return errorf(static_cast<weftResult_t>(reply.status), "bootstrap root: %s", reply.message);
  }
  if (reply.nranks != options_.nranks) {
    return errorf(weftInternalError, "bootstrap root reports %d ranks, expected %d", reply.nranks,
                  options_.nranks);
  }
  ranks_.resize(static_cast<size_t>(options_.nranks));
  return recvAll(s, ranks_.data(), ranks_.size() * sizeof(RankInfo), deadline(), options_.abort);
}

Status Bootstrap::connectRing(const UniqueIdData& id) {
  const int n = options_.nranks;
  if (n == 1) return okStatus();
  const int next = (options_.rank + 1) % n;
  const int prev = (options_.rank + n - 1) % n;
  WEFT_RETURN_IF_ERROR(
      connectSocket(ranks_[next].listen.toSockAddr(), deadline(), options_.abort, &next_)
          .withContext(strprintf("connecting to rank %d", next)));
  RingHello hello;
  hello.secret = id.secret;
  hello.commTag = id.commTag;
  hello.fromRank = options_.rank;
  hello.toRank = next;
  WEFT_RETURN_IF_ERROR(sendAll(next_, &hello, sizeof(hello), deadline(), options_.abort));
  // Accept until the previous rank shows up; anyone else is refused and logged.
  const Deadline until = deadline();
  HelloGate gate(listener_, sizeof(RingHello));
  for (;;) {
    Socket s;
    SockAddr from;
    RingHello h;
    WEFT_RETURN_IF_ERROR(gate.next(until, options_.abort, &s, &from, &h)
                             .withContext(strprintf("waiting for rank %d to connect", prev)));
    if (h.magic == kBootstrapMagic && h.version == kBootstrapVersion && h.secret == id.secret &&
        h.commTag == id.commTag && h.fromRank == prev && h.toRank == options_.rank) {
      prev_ = std::move(s);
      return okStatus();
    }
    WEFT_WARN(kBootstrap,
              "bootstrap: refused a connection from %s: bad hello (wrong secret, communicator or "
              "rank)",
              from.toString().c_str());
  }
}

Status Bootstrap::allGather(const Blob& mine, std::vector<Blob>* all) {
  const int n = options_.nranks;
  const int rank = options_.rank;
  all->assign(static_cast<size_t>(n), Blob());
  (*all)[rank] = mine;
  Deadline until = deadline();
  for (int step = 0; step < n - 1; ++step) {
    int sendIndex = (rank - step + n) % n;
    int recvIndex = (rank - step - 1 + n) % n;
    WEFT_RETURN_IF_ERROR(
        exchange(next_, (*all)[sendIndex], prev_, &(*all)[recvIndex], until, options_.abort));
  }
  return okStatus();
}

Status Bootstrap::barrier() {
  std::vector<Blob> ignored;
  return allGather(Blob(), &ignored);
}

void Bootstrap::shutdown() {
  next_.shutdown();
  prev_.shutdown();
}

}  // namespace weft
