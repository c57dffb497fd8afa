#include "transports/tcp/tcp_link.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "transports/tcp/tcp_options.h"

namespace weft::tcp {
namespace {

static_assert(kStagingBytes % 8 == 0, "staging must keep stream alignment");

// The farewell on its socket: this header, then `bytes` of message.
struct FarewellHeader {
  uint32_t magic;
  int32_t origin;
  uint32_t bytes;
};
constexpr uint32_t kFarewellMagic = 0x59424657u;  // "WFBY"
// How long a closed stream waits for the farewell sent before it closed.
constexpr int kFarewellWaitMs = 100;

bool wouldBlock(int err) {
  return err == EAGAIN || err == EWOULDBLOCK;
}

// Whether fd has bytes, an error or a hang-up for recv() to report. Unlike recv(), poll() reads a
// tcp socket's state without taking the socket's lock.
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) != 0;
}

}  // namespace

TcpLink::TcpLink(int peer, std::vector<Socket> sockets, size_t paceBytes)
    : peer_(peer),
      sockets_(std::move(sockets)),
      paceBytes_(paceBytes),
      staging_(new uint64_t[kStagingBytes / sizeof(uint64_t)]) {
  farewellSocket_ = std::move(sockets_.back());
  sockets_.pop_back();
}

TcpLink::~TcpLink() {
  close();
}

size_t TcpLink::socketFor(uint64_t pos) const {
  return static_cast<size_t>((pos / kStripeBytes) % sockets_.size());
}

size_t TcpLink::pieceAt(uint64_t pos, size_t want) const {
  if (sockets_.size() == 1) return want;
  return std::min(want, kStripeBytes - static_cast<size_t>(pos % kStripeBytes));
}

Status TcpLink::connectionError(size_t socket, int err) {
  if (err == 0) {
    return farewellError(
        peer_, readFarewell(kFarewellWaitMs),
        errorf(weftRemoteError, "tcp connection to rank %d closed (socket %zu)", peer_, socket));
  }
  if (err == ECONNRESET || err == EPIPE || err == ENOTCONN || err == ETIMEDOUT) {
    return farewellError(
        peer_, readFarewell(kFarewellWaitMs),
        errorf(weftRemoteError, "tcp connection to rank %d closed (socket %zu): %s", peer_, socket,
               strerror(err)));
  }
  return systemError(strprintf("tcp socket %zu to rank %d", socket, peer_).c_str(), err);
}

void TcpLink::sayFarewell(const Farewell& why) {
  if (closed_ || why.origin < 0 || !farewellSocket_.valid()) return;
  const std::string text = why.message.substr(0, kFarewellBytes);
  FarewellHeader h{kFarewellMagic, why.origin, static_cast<uint32_t>(text.size())};
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof(h));
  bytes += text;
  // A few hundred bytes into an idle connection's empty buffer: one call sends them all.
  ssize_t sent =
      ::send(farewellSocket_.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)sent;
}

Farewell TcpLink::readFarewell(int waitMs) {
  const auto complete = [this] {
    if (farewellIn_.size() < sizeof(FarewellHeader)) return false;
    FarewellHeader h;
    memcpy(&h, farewellIn_.data(), sizeof(h));
    return farewellIn_.size() >= sizeof(h) + std::min<size_t>(h.bytes, kFarewellBytes);
  };
  const size_t want = sizeof(FarewellHeader) + kFarewellBytes;
  bool ended = false;
  while (!complete() && !ended && farewellSocket_.valid() && !closed_) {
    pollfd p{farewellSocket_.fd(), POLLIN, 0};
    if (poll(&p, 1, waitMs) <= 0) break;
    char buf[sizeof(FarewellHeader) + kFarewellBytes];
    const ssize_t n = ::recv(farewellSocket_.fd(), buf, want - farewellIn_.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    ended = n <= 0;
    if (n > 0) farewellIn_.append(buf, static_cast<size_t>(n));
  }
  Farewell f;
  if (!complete()) return f;
  FarewellHeader h;
  memcpy(&h, farewellIn_.data(), sizeof(h));
  if (h.magic != kFarewellMagic || h.origin < 0) return f;
  f.origin = h.origin;
  f.message = farewellIn_.substr(sizeof(h), std::min<size_t>(h.bytes, kFarewellBytes));
  return f;
}

Status TcpLink::write(const void* data, size_t bytes, size_t* written) {
  *written = 0;
  if (closed_) return errorf(weftRemoteError, "tcp link to rank %d was closed", peer_);
  const char* src = static_cast<const char*>(data);
  while (*written < bytes) {
    size_t s = socketFor(sent_);
    size_t want = pieceAt(sent_, bytes - *written);
    ssize_t n = ::send(sockets_[s].fd(), src + *written, want, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (wouldBlock(errno)) break;
      return connectionError(s, errno);
    }
    sent_ += static_cast<uint64_t>(n);
    *written += static_cast<size_t>(n);
    if (static_cast<size_t>(n) < want) break;  // that socket's buffer is full
  }
  return okStatus();
}

// Receives in stripe order; stops at the first socket with nothing for us yet. Once a socket
// has run dry, poll() asks before recv() does: a recv() that finds nothing still takes the
// socket's lock, and a receiver asking in a loop holds off the sender's CPU, which takes the
// same lock to queue each packet on a local link.
Status TcpLink::receive(char* dst, size_t bytes, size_t* got) {
  *got = 0;
  if (closed_) return errorf(weftRemoteError, "tcp link to rank %d was closed", peer_);
  while (*got < bytes) {
    size_t s = socketFor(received_);
    if (drained_ && !readable(sockets_[s].fd())) break;
    drained_ = false;
    size_t want = pieceAt(received_, bytes - *got);
    ssize_t n = ::recv(sockets_[s].fd(), dst + *got, want, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && wouldBlock(errno)) {
      drained_ = true;
      break;
    }
    // What arrived counts; a closed or broken socket shows again on the next call.
    if (n <= 0 && *got > 0) break;
    if (n < 0) return connectionError(s, errno);
    if (n == 0) return connectionError(s, 0);  // EOF: the peer will send no more
    received_ += static_cast<uint64_t>(n);
    *got += static_cast<size_t>(n);
    if (static_cast<size_t>(n) < want) {
      drained_ = true;
      break;
    }
  }
  return okStatus();
}

Status TcpLink::fillStaging() {
  char* base = reinterpret_cast<char*>(staging_.get());
  size_t offset = static_cast<size_t>(received_ % kStagingBytes);
  size_t room = std::min(kStagingBytes - staged(), kStagingBytes - offset);
  size_t got = 0;
  return receive(base + offset, room, &got);
}

Status TcpLink::peek(const void** data, size_t* bytes) {
  *data = nullptr;
  *bytes = 0;
  if (staged() == 0) WEFT_RETURN_IF_ERROR(fillStaging());
  size_t offset = static_cast<size_t>(stagedFrom_ % kStagingBytes);
  *bytes = std::min(staged(), kStagingBytes - offset);
  if (*bytes > 0) *data = reinterpret_cast<char*>(staging_.get()) + offset;
  return okStatus();
}

Status TcpLink::read(void* data, size_t bytes, size_t* got) {
  *got = 0;
  char* out = static_cast<char*>(data);
  // Bytes an earlier peek() staged come first.
  while (*got < bytes && staged() > 0) {
    size_t offset = static_cast<size_t>(stagedFrom_ % kStagingBytes);
    size_t n = std::min({bytes - *got, staged(), kStagingBytes - offset});
    memcpy(out + *got, reinterpret_cast<char*>(staging_.get()) + offset, n);
    stagedFrom_ += n;
    *got += n;
  }
  if (*got == bytes) return okStatus();
  size_t direct = 0;
  Status s = receive(out + *got, bytes - *got, &direct);
  *got += direct;
  stagedFrom_ = received_;  // nothing is staged now
  // Bytes already delivered count; the error shows on the next call.
  return *got > 0 ? okStatus() : s;
}

Status TcpLink::checkPeer() {
  if (closed_) return errorf(weftRemoteError, "tcp link to rank %d was closed", peer_);
  bool unread = staged() > 0;
  int hungUp = -1;
  for (size_t s = 0; s < sockets_.size(); ++s) {
    pollfd p{sockets_[s].fd(), POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) <= 0) continue;
    if (p.revents & POLLERR) {
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(sockets_[s].fd(), SOL_SOCKET, SO_ERROR, &err, &len);
      return connectionError(s, err != 0 ? err : ECONNRESET);
    }
    if (p.revents & (POLLHUP | POLLRDHUP)) hungUp = static_cast<int>(s);
    int pending = 0;
    if (ioctl(sockets_[s].fd(), FIONREAD, &pending) == 0 && pending > 0) unread = true;
  }
  // A peer that sent its last bytes and closed is fine until those bytes are read.
  if (hungUp >= 0 && !unread) return connectionError(static_cast<size_t>(hungUp), 0);
  return okStatus();
}

void TcpLink::close() {
  if (closed_) return;
  closed_ = true;
  // The peer sees EOF at once, even while a copy of the fd lives on elsewhere.
  for (auto& s : sockets_)
    s.shutdown();
  farewellSocket_.shutdown();
}

}  // namespace weft::tcp
