// HelloGate: accepts connections on a listener and reads a fixed-size hello from each, many at
// once. A silent or slow stranger holds only its own connection, for at most kHelloTimeoutMs,
// and past kMaxPendingHellos unfinished connections the oldest is dropped, so strangers cannot keep
// the real peers out: a real peer sends its hello as soon as it connects, and a connection's
// hello is read as far as it has come before the connection may be dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "src/base/socket.h"
#include "src/base/status.h"
#include "src/base/wait.h"

namespace weft {

constexpr int64_t kHelloTimeoutMs = 2000;
constexpr size_t kMaxPendingHellos = 64;

class HelloGate {
 public:
  HelloGate(const Socket& listener, size_t helloBytes)
      : listener_(listener), helloBytes_(helloBytes) {}

  // Waits until some connection has sent a whole hello: its socket, address and the hello's
  // bytes (helloBytes of them, at hello). weftTimeout at the deadline; abort stops it.
  Status next(Deadline deadline, const AbortFlag* abort, Socket* socket, SockAddr* from,
              void* hello);

 private:
  struct Pending {
    Socket socket;
    SockAddr from;
    std::vector<char> hello;
    size_t got = 0;
    Deadline expires;
  };
  enum class Read { kWhole, kPartial, kGone };
  // Reads what has arrived of p's hello.
  Read readSome(Pending& p) const;
  // Accepts up to kMaxPendingHellos waiting connections, reading each one's hello at once.
  Status acceptSome();
  void drop(size_t index, const char* why);

  const Socket& listener_;
  size_t helloBytes_;
  std::deque<Pending> pending_;  // oldest first
  std::deque<Pending> whole_;    // hellos read whole, not yet handed out
};

}  // namespace weft
