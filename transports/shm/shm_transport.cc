#include "transports/shm/shm_transport.h"

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "src/base/log.h"
#include "transports/cross_memory.h"
#include "transports/shm/process_watch.h"
#include "transports/shm/shm_link.h"
#include "transports/shm/shm_segment.h"

namespace weft::shm {
namespace {

Status checkPeers(const TransportContext& ctx, const std::vector<int>& peers) {
  std::set<int> seen;
  for (int p : peers) {
    if (p < 0 || p >= ctx.nranks || p == ctx.rank || !seen.insert(p).second) {
      return errorf(weftInternalError, "shm: bad peer list on rank %d (peer %d of %d ranks)",
                    ctx.rank, p, ctx.nranks);
    }
  }
  return okStatus();
}

// Whether this process may read the peer's memory (0, else an errno): the word at the peer's
// own address of its selfAddress, read through the kernel, must hold that address.
int probePeer(const SegmentInfo& info, const WindowOwner& peer) {
  if (peer.pid != info.pid) return ESRCH;
  return probeProcessMemory(info.pid, peer.selfAddress, peer.selfAddress);
}

Status connectPeer(const TransportContext& ctx, int peer, size_t index,
                   const std::shared_ptr<LocalSegment>& segment, const Blob& blob,
                   std::unique_ptr<Link>* link, int* unreadable) {
  SegmentInfo info;
  WEFT_RETURN_IF_ERROR(parseSegmentBlob(blob, peer, &info));
  if (info.rings.empty()) {
    return errorf(weftInternalError, "shm: rank %d published no segment (it failed to set one up)",
                  peer);
  }
  PeerRing ring;
  WEFT_RETURN_IF_ERROR(mapPeerRing(ctx, peer, info, &ring));
  *unreadable = probePeer(info, *ring.window.owner);
  PeerProcess process(info.pid);
  if (process.exited()) {
    return errorf(weftRemoteError, "shm: rank %d (pid %d) exited during connect", peer,
                  static_cast<int>(info.pid));
  }
  *link = std::make_unique<ShmLink>(peer, segment, index, std::move(ring), std::move(process));
  return okStatus();
}

Status connectPeers(const TransportContext& ctx, const std::vector<int>& peers,
                    const std::shared_ptr<LocalSegment>& segment, const std::vector<Blob>& all,
                    std::vector<std::unique_ptr<Link>>* links) {
  if (all.size() != static_cast<size_t>(ctx.nranks)) {
    return errorf(weftInternalError, "shm: all-gather returned %zu blobs for %d ranks", all.size(),
                  ctx.nranks);
  }
  links->resize(peers.size());
  bool readsAll = true;
  for (size_t i = 0; i < peers.size(); ++i) {
    int unreadable = 0;
    WEFT_RETURN_IF_ERROR(
        connectPeer(ctx, peers[i], i, segment, all[peers[i]], &(*links)[i], &unreadable));
    if (unreadable != 0) {
      WEFT_INFO(kShm, "shm: no single copy: rank %d's memory is not readable from here (%s)",
                peers[i], strerror(unreadable));
    }
    readsAll = readsAll && unreadable == 0;
  }
  // Published before the second all-gather, so every peer sees it once connected.
  if (segment) segment->owner()->readsPeers.store(readsAll ? 1 : 0, std::memory_order_release);
  return okStatus();
}

// The second all-gather's blob: empty when this rank connected, else its error code and message.
Blob outcomeBlob(const Status& s) {
  if (s.ok()) return {};
  int32_t code = s.code();
  Blob blob(sizeof(code) + s.message().size());
  memcpy(blob.data(), &code, sizeof(code));
  memcpy(blob.data() + sizeof(code), s.message().data(), s.message().size());
  return blob;
}

// Every rank fails if one did, so none goes on with a half-connected communicator.
Status combineOutcomes(const Status& own, const std::vector<Blob>& outcomes) {
  if (!own.ok()) return own;
  for (size_t r = 0; r < outcomes.size(); ++r) {
    const Blob& b = outcomes[r];
    if (b.empty()) continue;
    int32_t code = weftInternalError;
    if (b.size() >= sizeof(code)) memcpy(&code, b.data(), sizeof(code));
    std::string message(b.begin() + std::min(b.size(), sizeof(code)), b.end());
    if (code == weftSuccess) code = weftInternalError;
    return errorf(static_cast<weftResult_t>(code), "shm: rank %zu could not connect: %s", r,
                  message.c_str());
  }
  return okStatus();
}

}  // namespace

Status connect(const TransportContext& ctx, const std::vector<int>& peers,
               std::vector<std::unique_ptr<Link>>* links) {
  links->clear();
  Status local = checkPeers(ctx, peers);
  std::shared_ptr<LocalSegment> segment;
  if (local.ok() && !peers.empty()) local = LocalSegment::create(ctx, peers, &segment);
  Blob mine = segment ? segment->describe() : emptySegmentBlob();
  // Every rank gathers twice whatever happens, so a local failure cannot hang the others.
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(ctx.allGather(mine, &all).withContext("shm: exchanging segments"));
  if (local.ok()) local = connectPeers(ctx, peers, segment, all, links);
  std::vector<Blob> outcomes;
  // Also keeps our memfd open until every peer has opened it.
  WEFT_RETURN_IF_ERROR(
      ctx.allGather(outcomeBlob(local), &outcomes).withContext("shm: exchanging outcomes"));
  Status result = combineOutcomes(local, outcomes);
  if (!result.ok()) {
    links->clear();
    WEFT_WARN(kShm, "%s", result.message().c_str());
    return result;
  }
  WEFT_INFO(kShm, "shm: connected to %zu peers", peers.size());
  return okStatus();
}

}  // namespace weft::shm
