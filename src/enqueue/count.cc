#include "src/enqueue/count.h"

#include <algorithm>

#include "collectives/datatype.h"
#include "src/comm/communicator.h"

namespace weft {
namespace {

weftStatsKind_t statsKindOf(CollKind kind) {
  switch (kind) {
    case CollKind::kBroadcast:
      return weftStatsBroadcast;
    case CollKind::kReduce:
      return weftStatsReduce;
    case CollKind::kAllReduce:
      return weftStatsAllReduce;
    case CollKind::kReduceScatter:
      return weftStatsReduceScatter;
    case CollKind::kAllGather:
      return weftStatsAllGather;
    case CollKind::kAllToAll:
    case CollKind::kAllToAllv:
      return weftStatsAllToAll;
    case CollKind::kBarrier:
      return weftStatsBarrier;
  }
  return weftStatsBarrier;
}

}  // namespace

void countCollective(Communicator& comm, const Op& op) {
  const CollArgs a = argsOf(op);
  const size_t bytes = std::max(sendBufferCount(a), recvBufferCount(a)) * typeSize(op.type);
  comm.stats().file(statsKindOf(a.kind), 1, bytes, true, true);
}

void countPointToPoint(Communicator& comm, std::span<const Op> ops) {
  uint64_t sends = 0, sendBytes = 0, recvs = 0, recvBytes = 0;
  for (const Op& op : ops) {
    const uint64_t bytes = op.count * typeSize(op.type);
    if (op.kind == OpKind::kSend) {
      ++sends;
      sendBytes += bytes;
    } else {
      ++recvs;
      recvBytes += bytes;
    }
  }
  TrafficStats& stats = comm.stats();
  if (sends > 0) stats.file(weftStatsSend, sends, sendBytes, true, false);
  if (recvs > 0) stats.file(weftStatsRecv, recvs, recvBytes, false, true);
}

}  // namespace weft
