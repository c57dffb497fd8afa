// Opens and authenticates every socket of a rank's tcp links in one non-blocking poll loop:
// connections to higher ranks are started all at once (the peers' kernels complete them from the
// listen backlog) while connections from lower ranks are accepted, so no order can deadlock.
// A connection that does not present a valid hello is logged and closed; accepting goes on.
#pragma once

#include <vector>

#include "src/base/socket.h"
#include "transports/transport.h"

namespace weft::tcp {

struct PeerPlan {
  int rank = -1;
  SockAddr address;        // where it listens; used when we connect
  bool weConnect = false;  // true when this rank is the lower one
};

// An incoming connection must present its hello within this, or it is dropped. (Answers to our
// own hellos are awaited until ctx.deadline.)
constexpr int kHelloTimeoutMs = 5000;

// (*sockets)[i][k] becomes socket k of the link to peers[i], handshake done.
Status establishSockets(const TransportContext& ctx, const Socket& listener,
                        const std::vector<PeerPlan>& peers,
                        std::vector<std::vector<Socket>>* sockets);

}  // namespace weft::tcp
