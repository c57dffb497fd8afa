#include "transports/tcp/tcp_transport.h"

#include <set>

#include "src/base/log.h"
#include "transports/tcp/tcp_handshake.h"
#include "transports/tcp/tcp_link.h"
#include "transports/tcp/tcp_options.h"
#include "transports/tcp/tcp_wire.h"

namespace weft::tcp {
namespace {

Status checkArguments(const TransportContext& ctx, const std::vector<int>& peers) {
  if (ctx.nSocketsPerPeer < 1 || ctx.nSocketsPerPeer > 64) {
    return errorf(weftInvalidArgument, "tcp: %d sockets per peer (1 to 64 allowed)",
                  ctx.nSocketsPerPeer);
  }
  std::set<int> seen;
  for (int p : peers) {
    if (p < 0 || p >= ctx.nranks || p == ctx.rank || !seen.insert(p).second) {
      return errorf(weftInternalError, "tcp: bad peer list on rank %d (peer %d of %d ranks)",
                    ctx.rank, p, ctx.nranks);
    }
  }
  return okStatus();
}

Status listenOn(const TransportContext& ctx, Socket* listener, SockAddr* bound) {
  SockAddr address = ctx.localAddress;
  if (address.length == 0) {
    NetInterface ni;
    WEFT_RETURN_IF_ERROR(defaultInterface(&ni));
    address = ni.address;
    address.setPort(0);
  }
  WEFT_RETURN_IF_ERROR(listenSocket(address, listener, bound).withContext("tcp: listening"));
  // Accepted sockets inherit these; set before any peer connects so the window scale fits.
  setBufferSizes(listener->fd(), kSocketBufferBytes);
  return okStatus();
}

Status planPeers(const TransportContext& ctx, const std::vector<int>& peers,
                 const std::vector<Blob>& all, std::vector<PeerPlan>* plans) {
  if (all.size() != static_cast<size_t>(ctx.nranks)) {
    return errorf(weftInternalError, "tcp: all-gather returned %zu blobs for %d ranks", all.size(),
                  ctx.nranks);
  }
  for (int p : peers) {
    PeerPlan plan;
    plan.rank = p;
    plan.weConnect = ctx.rank < p;
    bool listening = false;
    WEFT_RETURN_IF_ERROR(decodeAddress(all[p], p, &plan.address, &listening));
    if (!listening) {
      return errorf(weftRemoteError, "tcp: rank %d does not listen (it failed to set up tcp)", p);
    }
    plans->push_back(plan);
  }
  return okStatus();
}

}  // namespace

Status connect(const TransportContext& ctx, const std::vector<int>& peers,
               std::vector<std::unique_ptr<Link>>* links) {
  links->clear();
  Status local = checkArguments(ctx, peers);
  Socket listener;
  SockAddr bound;
  if (local.ok() && !peers.empty()) local = listenOn(ctx, &listener, &bound);
  // Gather even after a local failure, so the others are not left waiting in the all-gather.
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(ctx.allGather(encodeAddress(listener.valid() ? &bound : nullptr), &all)
                           .withContext("tcp: exchanging addresses"));
  WEFT_RETURN_IF_ERROR(local);
  if (peers.empty()) return okStatus();
  WEFT_INFO(kNet, "tcp: rank %d listens on %s", ctx.rank, bound.toString().c_str());
  std::vector<PeerPlan> plans;
  WEFT_RETURN_IF_ERROR(planPeers(ctx, peers, all, &plans));
  // The stream's sockets and one for the farewell (TcpLink).
  TransportContext withFarewell = ctx;
  withFarewell.nSocketsPerPeer = ctx.nSocketsPerPeer + 1;
  std::vector<std::vector<Socket>> sockets;
  WEFT_RETURN_IF_ERROR(establishSockets(withFarewell, listener, plans, &sockets));
  listener.close();  // no stranger can reach us any more
  for (size_t i = 0; i < peers.size(); ++i) {
    links->push_back(
        std::make_unique<TcpLink>(peers[i], std::move(sockets[i]), ctx.socketPaceBytes));
  }
  WEFT_INFO(kNet, "tcp: connected to %zu peers with %d sockets each, sends paced to %zu bytes",
            peers.size(), ctx.nSocketsPerPeer, ctx.socketPaceBytes);
  return okStatus();
}

}  // namespace weft::tcp
