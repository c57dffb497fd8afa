#include "collectives/single_copy.h"

#include <cstring>
#include <optional>

#include "collectives/algo_override.h"
#include "src/base/log.h"
#include "src/base/text.h"
#include "transports/cross_memory.h"

namespace weft {
namespace {

// This rank's own part of the output, from its own input.
void copyOwn(const CollArgs& a, const char* send, char* recv, size_t block) {
  const size_t me = static_cast<size_t>(a.rank);
  switch (a.kind) {
    case CollKind::kAllToAll:
      memcpy(recv + me * block, send + me * block, block);
      return;
    case CollKind::kAllGather:
      if (recv + me * block != send) memcpy(recv + me * block, send, block);
      return;
    case CollKind::kBroadcast:
      if (a.rank == a.root && recv != send) memcpy(recv, send, block);
      return;
    default:
      return;
  }
}

}  // namespace

Status SingleCopyLimits::parse(const std::string& colls, size_t minBytes, size_t maxBytes,
                               int maxRanks, SingleCopyLimits* out) {
  SingleCopyLimits l;
  l.minBytes = minBytes;
  l.maxBytes = maxBytes;
  l.maxRanks = maxRanks;
  if (minBytes > 0 && maxBytes > 0 && maxBytes < minBytes) {
    WEFT_WARN(kInit,
              "WEFT_SHM_SINGLE_COPY_MAX_BYTES (%zu) is below WEFT_SHM_SINGLE_COPY_BYTES (%zu): "
              "nothing goes single copy",
              maxBytes, minBytes);
  }
  for (std::string_view piece : split(colls, ',')) {
    const std::string name(trim(piece));
    if (name.empty()) continue;
    std::optional<CollKind> kind = parseCollName(name);
    if (!kind || (*kind != CollKind::kAllGather && *kind != CollKind::kBroadcast &&
                  *kind != CollKind::kAllToAll)) {
      return errorf(weftInvalidArgument,
                    "WEFT_SHM_SINGLE_COPY_COLLS='%s': '%s' is not allgather, broadcast or alltoall",
                    colls.c_str(), name.c_str());
    }
    l.kinds |= 1u << static_cast<int>(*kind);
  }
  *out = l;
  return okStatus();
}

bool SingleCopyLimits::covers(const DirectGroup& g, const CollArgs& a, size_t elemSize) const {
  const size_t perPeer = a.count * elemSize;
  if (!g.singleCopy() || (kinds & (1u << static_cast<int>(a.kind))) == 0) return false;
  if (maxRanks > 0 && g.nranks() > maxRanks) return false;
  if (minBytes == 0 || perPeer < minBytes) return false;
  return maxBytes == 0 || perPeer <= maxBytes;
}

bool singleCopyReads(const CollArgs& a, int reader, int owner) {
  if (reader == owner) return false;
  if (a.kind == CollKind::kBroadcast) return owner == a.root;
  return true;
}

int singleCopyDecider(const CollArgs& a) {
  return a.kind == CollKind::kBroadcast ? (a.root + 1) % a.nranks : 0;
}

Status readSingleCopy(const DirectGroup& group, const CollArgs& a, const char* send, char* recv,
                      size_t elemSize, const std::vector<uint64_t>& inputs) {
  const int n = group.nranks();
  const int me = a.rank;
  const size_t block = a.count * elemSize;
  copyOwn(a, send, recv, block);
  const size_t skip = a.kind == CollKind::kAllToAll ? static_cast<size_t>(me) * block : 0;
  // From the next rank on, so that ranks do not all read the same peer at once.
  for (int k = 1; k < n; ++k) {
    const int peer = (me + k) % n;
    if (!singleCopyReads(a, me, peer)) continue;
    char* to = a.kind == CollKind::kBroadcast ? recv : recv + static_cast<size_t>(peer) * block;
    const pid_t pid = group.area(peer).owner->pid;
    Status s = readProcessMemory(pid, to, inputs[peer] + skip, block);
    if (s.code() == weftRemoteError) {  // the process exited: said as the links say it
      return errorf(weftRemoteError, "single copy: rank %d (pid %d) exited", peer,
                    static_cast<int>(pid));
    }
    if (!s.ok() && group.peerFailed(peer)) {
      // It left this operation with an error (one of its own peers died, say) and may have
      // freed the input it posted.
      s = errorf(weftRemoteError, "rank %d failed: %s", peer, s.message().c_str());
    }
    if (!s.ok()) return s.withContext(strprintf("single copy from rank %d", peer));
  }
  return okStatus();
}

}  // namespace weft
