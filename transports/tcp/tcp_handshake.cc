#include "transports/tcp/tcp_handshake.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "src/base/log.h"
#include "transports/tcp/tcp_options.h"
#include "transports/tcp/tcp_wire.h"

namespace weft::tcp {
namespace {

constexpr int kPollSliceMs = 50;
constexpr int kRetryDelayMs = 50;
// Connections held at once; past this many, the oldest that has not shown a valid hello goes,
// so strangers can neither exhaust fds nor keep a late real peer out.
constexpr size_t kMaxPending = 64;

bool retryableConnectError(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
         err == ECONNRESET || err == EAGAIN;
}

bool wouldBlock(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

// A connection we open to a higher rank.
struct Outgoing {
  enum State { kIdle, kConnecting, kSending, kReceiving, kDone };
  size_t peer = 0;
  int index = 0;
  Socket socket;
  State state = kIdle;
  Hello hello{};
  Hello answer{};
  size_t moved = 0;
  Clock::time_point retryAt{};
  short revents = 0;
};

// A connection a lower rank (or a stranger) opened to us.
struct Incoming {
  Socket socket;
  SockAddr from;
  Hello hello{};
  size_t got = 0;
  bool answering = false;
  Hello answer{};
  size_t sent = 0;
  size_t peer = 0;
  int index = 0;
  Clock::time_point expires{};
  short revents = 0;
};

class Handshake {
 public:
  Handshake(const TransportContext& ctx, const Socket& listener, const std::vector<PeerPlan>& peers,
            std::vector<std::vector<Socket>>* sockets)
      : ctx_(ctx), listener_(listener), peers_(peers), sockets_(sockets) {}

  Status run();

 private:
  bool finished() const;
  Status waitForEvents();
  std::string missing() const;

  Status startConnect(Outgoing& o);
  Status stepOutgoing(Outgoing& o);
  Status sendHello(Outgoing& o);
  Status receiveAnswer(Outgoing& o);
  Status rejected(const Outgoing& o, const char* what) const;

  void acceptNew();
  // False when the connection is finished with (taken into a link or dropped).
  bool stepIncoming(Incoming& in);
  bool readHello(Incoming& in);
  bool sendAnswer(Incoming& in);
  void drop(Incoming& in, const std::string& why);

  const TransportContext& ctx_;
  const Socket& listener_;
  const std::vector<PeerPlan>& peers_;
  std::vector<std::vector<Socket>>* sockets_;
  std::vector<Outgoing> outgoing_;
  std::vector<Incoming> incoming_;
  std::vector<std::vector<bool>> claimed_;  // incoming slots with a valid hello
  size_t incomingLeft_ = 0;
  bool listenerReady_ = false;
};

Status Handshake::run() {
  const int n = ctx_.nSocketsPerPeer;
  sockets_->clear();
  sockets_->resize(peers_.size());
  claimed_.assign(peers_.size(), std::vector<bool>(n, false));
  for (size_t i = 0; i < peers_.size(); ++i) {
    (*sockets_)[i].resize(n);
    for (int k = 0; k < n; ++k) {
      if (peers_[i].weConnect) {
        Outgoing o;
        o.peer = i;
        o.index = k;
        o.hello = makeHello(ctx_, peers_[i].rank, k);
        outgoing_.push_back(std::move(o));
      } else {
        ++incomingLeft_;
      }
    }
  }
  while (!finished()) {
    if (ctx_.abort != nullptr && ctx_.abort->load(std::memory_order_relaxed)) {
      return abortedStatus().withContext("tcp: connecting");
    }
    if (ctx_.deadline.expired()) {
      return errorf(weftTimeout, "tcp: rank %d timed out connecting; still missing: %s", ctx_.rank,
                    missing().c_str());
    }
    for (auto& o : outgoing_) {
      if (o.state == Outgoing::kIdle && Clock::now() >= o.retryAt) {
        WEFT_RETURN_IF_ERROR(startConnect(o));
      }
    }
    WEFT_RETURN_IF_ERROR(waitForEvents());
    if (listenerReady_) acceptNew();
    for (auto& o : outgoing_) {
      if (o.revents != 0) WEFT_RETURN_IF_ERROR(stepOutgoing(o));
    }
    std::erase_if(incoming_, [this](Incoming& in) { return !stepIncoming(in); });
  }
  return okStatus();
}

bool Handshake::finished() const {
  return incomingLeft_ == 0 && std::all_of(outgoing_.begin(), outgoing_.end(), [](const auto& o) {
           return o.state == Outgoing::kDone;
         });
}

Status Handshake::waitForEvents() {
  std::vector<pollfd> fds;
  if (incomingLeft_ > 0) fds.push_back({listener_.fd(), POLLIN, 0});
  for (const auto& o : outgoing_) {
    short events = o.state == Outgoing::kReceiving ? POLLIN : POLLOUT;
    bool waiting = o.state == Outgoing::kConnecting || o.state == Outgoing::kSending ||
                   o.state == Outgoing::kReceiving;
    fds.push_back({waiting ? o.socket.fd() : -1, events, 0});
  }
  for (const auto& in : incoming_) {
    fds.push_back({in.socket.fd(), static_cast<short>(in.answering ? POLLOUT : POLLIN), 0});
  }
  int rc = poll(fds.data(), fds.size(), ctx_.deadline.remainingMs(kPollSliceMs));
  if (rc < 0 && errno != EINTR) return systemError("tcp: poll", errno);
  size_t at = 0;
  listenerReady_ = incomingLeft_ > 0 && rc > 0 && fds[at++].revents != 0;
  for (auto& o : outgoing_)
    o.revents = rc > 0 ? fds[at++].revents : 0;
  for (auto& in : incoming_)
    in.revents = rc > 0 ? fds[at++].revents : 0;
  return okStatus();
}

std::string Handshake::missing() const {
  std::string out;
  for (const auto& o : outgoing_) {
    if (o.state == Outgoing::kDone) continue;
    out += strprintf("%s%s to rank %d at %s (socket %d)", out.empty() ? "" : ", ",
                     o.state == Outgoing::kReceiving ? "an answer" : "a connection",
                     peers_[o.peer].rank, peers_[o.peer].address.toString().c_str(), o.index);
  }
  for (size_t i = 0; i < peers_.size(); ++i) {
    for (size_t k = 0; k < claimed_[i].size() && !peers_[i].weConnect; ++k) {
      if (!(*sockets_)[i][k].valid()) {
        out += strprintf("%sa connection from rank %d (socket %zu)", out.empty() ? "" : ", ",
                         peers_[i].rank, k);
      }
    }
  }
  return out;
}

Status Handshake::startConnect(Outgoing& o) {
  const SockAddr& address = peers_[o.peer].address;
  int fd = socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return systemError("tcp: socket", errno);
  o.socket = Socket(fd);
  setBufferSizes(fd, kSocketBufferBytes);  // before connect, so the window scale fits
  o.moved = 0;
  if (::connect(fd, address.raw(), address.length) == 0) {
    o.state = Outgoing::kSending;
    return sendHello(o);
  }
  int err = errno;
  if (err == EINPROGRESS) {
    o.state = Outgoing::kConnecting;
    return okStatus();
  }
  if (!retryableConnectError(err)) {
    return errorf(weftSystemError, "tcp: connecting to rank %d at %s failed: %s",
                  peers_[o.peer].rank, address.toString().c_str(), strerror(err));
  }
  o.socket.close();
  o.retryAt = Clock::now() + std::chrono::milliseconds(kRetryDelayMs);
  return okStatus();
}

Status Handshake::stepOutgoing(Outgoing& o) {
  if (o.state == Outgoing::kConnecting) {
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(o.socket.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      if (!retryableConnectError(err)) {
        return errorf(weftSystemError, "tcp: connecting to rank %d at %s failed: %s",
                      peers_[o.peer].rank, peers_[o.peer].address.toString().c_str(),
                      strerror(err));
      }
      WEFT_INFO(kNet, "tcp: connecting to rank %d at %s: %s; retrying", peers_[o.peer].rank,
                peers_[o.peer].address.toString().c_str(), strerror(err));
      o.socket.close();
      o.state = Outgoing::kIdle;
      o.retryAt = Clock::now() + std::chrono::milliseconds(kRetryDelayMs);
      return okStatus();
    }
    o.state = Outgoing::kSending;
  }
  if (o.state == Outgoing::kSending) return sendHello(o);
  if (o.state == Outgoing::kReceiving) return receiveAnswer(o);
  return okStatus();
}

Status Handshake::rejected(const Outgoing& o, const char* what) const {
  return errorf(weftRemoteError,
                "tcp: rank %d at %s %s during the handshake: it refused our hello (do all ranks "
                "run the same Weft version with the same WEFT_NSOCKS_PERPEER?) or is not that rank",
                peers_[o.peer].rank, peers_[o.peer].address.toString().c_str(), what);
}

Status Handshake::sendHello(Outgoing& o) {
  while (o.moved < sizeof(Hello)) {
    ssize_t n = send(o.socket.fd(), reinterpret_cast<const char*>(&o.hello) + o.moved,
                     sizeof(Hello) - o.moved, MSG_NOSIGNAL);
    if (n < 0 && wouldBlock(errno)) return okStatus();
    if (n <= 0) return rejected(o, "closed the connection");
    o.moved += static_cast<size_t>(n);
  }
  o.state = Outgoing::kReceiving;
  o.moved = 0;
  return okStatus();
}

Status Handshake::receiveAnswer(Outgoing& o) {
  while (o.moved < sizeof(Hello)) {
    ssize_t n = recv(o.socket.fd(), reinterpret_cast<char*>(&o.answer) + o.moved,
                     sizeof(Hello) - o.moved, 0);
    if (n < 0 && wouldBlock(errno)) return okStatus();
    if (n <= 0) return rejected(o, "closed the connection");
    o.moved += static_cast<size_t>(n);
  }
  std::string problem = helloProblem(o.answer, ctx_);
  if (problem.empty() &&
      (o.answer.fromRank != peers_[o.peer].rank || o.answer.socketIndex != o.index)) {
    problem = strprintf("it is rank %d socket %d", o.answer.fromRank, o.answer.socketIndex);
  }
  if (!problem.empty()) {
    return errorf(weftRemoteError, "tcp: %s, where rank %d should listen, answered wrongly: %s",
                  peers_[o.peer].address.toString().c_str(), peers_[o.peer].rank, problem.c_str());
  }
  setNoDelay(o.socket.fd());
  (*sockets_)[o.peer][o.index] = std::move(o.socket);
  o.state = Outgoing::kDone;
  return okStatus();
}

void Handshake::acceptNew() {
  for (;;) {
    Incoming in;
    Status s = acceptNow(listener_, &in.socket, &in.from);
    if (!s.ok()) WEFT_WARN(kNet, "tcp: rank %d: %s", ctx_.rank, s.message().c_str());
    if (!in.socket.valid()) return;
    if (incoming_.size() >= kMaxPending) {
      // The oldest that has sent nothing, else the oldest whose hello is not yet whole (a real
      // peer sends its hello as soon as it connects, and this one's was tried at accept).
      auto oldest = std::find_if(incoming_.begin(), incoming_.end(),
                                 [](const Incoming& i) { return !i.answering && i.got == 0; });
      if (oldest == incoming_.end()) {
        oldest = std::find_if(incoming_.begin(), incoming_.end(),
                              [](const Incoming& i) { return !i.answering; });
      }
      if (oldest == incoming_.end()) {  // every one is a real peer's, being answered
        drop(in, "too many connections at once");
        continue;
      }
      drop(*oldest, "the oldest of too many unauthenticated connections");
      incoming_.erase(oldest);
    }
    in.expires = Clock::now() + std::chrono::milliseconds(kHelloTimeoutMs);
    in.revents = POLLIN;  // try reading at once: the hello often came with the connection
    if (stepIncoming(in)) incoming_.push_back(std::move(in));
  }
}

bool Handshake::stepIncoming(Incoming& in) {
  if (in.revents != 0) {
    if (!in.answering && !readHello(in)) return false;
    if (in.answering) return sendAnswer(in);
  }
  if (Clock::now() >= in.expires) {
    drop(in, strprintf("no valid hello within %d ms", kHelloTimeoutMs));
    return false;
  }
  return true;
}

bool Handshake::readHello(Incoming& in) {
  while (in.got < sizeof(Hello)) {
    ssize_t n = recv(in.socket.fd(), reinterpret_cast<char*>(&in.hello) + in.got,
                     sizeof(Hello) - in.got, 0);
    if (n < 0 && wouldBlock(errno)) return true;
    if (n <= 0) {
      drop(in, strprintf("closed after %zu of %zu hello bytes", in.got, sizeof(Hello)));
      return false;
    }
    in.got += static_cast<size_t>(n);
  }
  std::string problem = helloProblem(in.hello, ctx_);
  size_t peer = peers_.size();
  for (size_t i = 0; i < peers_.size() && problem.empty(); ++i) {
    if (peers_[i].rank == in.hello.fromRank && !peers_[i].weConnect) peer = i;
  }
  if (problem.empty() && peer == peers_.size()) {
    problem = strprintf("rank %d does not connect to this rank over tcp", in.hello.fromRank);
  }
  if (problem.empty() && claimed_[peer][in.hello.socketIndex]) {
    problem = strprintf("duplicate of rank %d socket %d", in.hello.fromRank, in.hello.socketIndex);
  }
  if (!problem.empty()) {
    drop(in, problem);
    return false;
  }
  in.peer = peer;
  in.index = in.hello.socketIndex;
  claimed_[peer][in.index] = true;
  in.answering = true;
  in.answer = makeHello(ctx_, peers_[peer].rank, in.index);
  return true;
}

bool Handshake::sendAnswer(Incoming& in) {
  while (in.sent < sizeof(Hello)) {
    ssize_t n = send(in.socket.fd(), reinterpret_cast<const char*>(&in.answer) + in.sent,
                     sizeof(Hello) - in.sent, MSG_NOSIGNAL);
    if (n < 0 && wouldBlock(errno)) return true;
    if (n <= 0) {
      drop(in, strprintf("failed while answering: %s", strerror(errno)));
      return false;
    }
    in.sent += static_cast<size_t>(n);
  }
  setNoDelay(in.socket.fd());
  setBufferSizes(in.socket.fd(), kSocketBufferBytes);
  (*sockets_)[in.peer][in.index] = std::move(in.socket);
  --incomingLeft_;
  return false;
}

void Handshake::drop(Incoming& in, const std::string& why) {
  if (in.answering) claimed_[in.peer][in.index] = false;  // the slot is free again
  WEFT_WARN(kNet, "tcp: rank %d refused a connection from %s: %s", ctx_.rank,
            in.from.toString().c_str(), why.c_str());
  in.socket.close();
}

}  // namespace

Status establishSockets(const TransportContext& ctx, const Socket& listener,
                        const std::vector<PeerPlan>& peers,
                        std::vector<std::vector<Socket>>* sockets) {
  return Handshake(ctx, listener, peers, sockets).run();
}

}  // namespace weft::tcp
