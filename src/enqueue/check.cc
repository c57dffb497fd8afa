#include "src/enqueue/check.h"

#include <cstdint>

#include "collectives/datatype.h"
#include "src/comm/communicator.h"
#include "src/enqueue/group.h"

namespace weft {
namespace {

// No object is larger (a C pointer difference must fit), so no buffer of a call is either.
constexpr size_t kMaxBufferBytes = PTRDIFF_MAX;

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  auto pa = reinterpret_cast<uintptr_t>(a);
  auto pb = reinterpret_cast<uintptr_t>(b);
  return aBytes > 0 && bBytes > 0 && pa < pb + bBytes && pb < pa + aBytes;
}

Status needBuffer(const void* p, const char* name, size_t count, const char* coll) {
  if (p == nullptr && count > 0) {
    return errorf(weftInvalidArgument, "%s: %s is NULL with count %zu", coll, name, count);
  }
  return okStatus();
}

// Collective names are looked up only for messages: checks run on every call.
Status needBuffer(const void* p, const char* name, size_t count, CollKind kind) {
  return p == nullptr && count > 0 ? needBuffer(p, name, count, collName(kind)) : okStatus();
}

// In-place calls must alias exactly where the collective allows; any other overlap is an error.
Status checkAliasing(const Op& op, size_t sendBytes, size_t recvBytes, size_t inPlaceOffset) {
  if (!overlaps(op.sendbuff, sendBytes, op.recvbuff, recvBytes)) return okStatus();
  const char* name = collName(op.args.kind);
  if (op.args.kind == CollKind::kAllToAll) {
    // In place is both buffers the same (stageInPlace runs it from a copy of the input).
    if (op.sendbuff == op.recvbuff) return okStatus();
    return errorf(weftInvalidArgument,
                  "%s: send and receive buffers overlap without being the same buffer (in place)",
                  name);
  }
  if (op.args.kind == CollKind::kAllToAllv) {
    return errorf(weftInvalidArgument,
                  "%s: send and receive buffers overlap; %s cannot run in "
                  "place",
                  name, name);
  }
  auto s = reinterpret_cast<uintptr_t>(op.sendbuff);
  auto r = reinterpret_cast<uintptr_t>(op.recvbuff);
  bool exact =
      op.args.kind == CollKind::kReduceScatter ? r == s + inPlaceOffset : s == r + inPlaceOffset;
  if (!exact) {
    return errorf(weftInvalidArgument,
                  "%s: send and receive buffers overlap without being the in-place layout", name);
  }
  return okStatus();
}

Status checkCollective(const Op& op) {
  const CollArgs a = argsOf(op);
  const int n = a.nranks;
  if (!validType(op.type)) {
    return errorf(weftInvalidArgument, "%s: unknown data type %d", collName(a.kind),
                  static_cast<int>(op.type));
  }
  if (isReduction(a.kind) && !validOp(op.redop)) {
    return errorf(weftInvalidArgument, "%s: unknown reduction operator %d", collName(a.kind),
                  static_cast<int>(op.redop));
  }
  bool rooted = a.kind == CollKind::kBroadcast || a.kind == CollKind::kReduce;
  if (rooted && (a.root < 0 || a.root >= n)) {
    return errorf(weftInvalidArgument, "%s: root %d is out of range (communicator of %d ranks)",
                  collName(a.kind), a.root, n);
  }
  const size_t es = typeSize(op.type);
  size_t sendCount = sendBufferCount(a);
  size_t recvCount = recvBufferCount(a);
  size_t totalBytes = 0;  // what an all-gather's receive buffer holds, without the divisions
  if (__builtin_mul_overflow(a.count, es * static_cast<size_t>(n), &totalBytes) ||
      totalBytes > kMaxBufferBytes) {
    return errorf(weftInvalidArgument, "%s: count %zu is too large", collName(a.kind), a.count);
  }
  // Buffers a rank does not use may be NULL: non-roots' send buffer in broadcast, non-roots'
  // receive buffer in reduce.
  bool usesSend = !(a.kind == CollKind::kBroadcast && a.rank != a.root);
  bool usesRecv = !(a.kind == CollKind::kReduce && a.rank != a.root);
  if (usesSend) WEFT_RETURN_IF_ERROR(needBuffer(op.sendbuff, "sendbuff", sendCount, a.kind));
  if (usesRecv) WEFT_RETURN_IF_ERROR(needBuffer(op.recvbuff, "recvbuff", recvCount, a.kind));
  if (!usesSend || !usesRecv) return okStatus();
  size_t inPlaceOffset = 0;
  if (a.kind == CollKind::kAllGather || a.kind == CollKind::kReduceScatter) {
    inPlaceOffset = static_cast<size_t>(a.rank) * a.count * es;
  }
  return checkAliasing(op, sendCount * es, recvCount * es, inPlaceOffset);
}

// Counts and displacements are each rank's own: every block's end, in bytes, must fit an object.
Status checkAllToAllv(const Op& op) {
  const auto n = static_cast<size_t>(op.args.nranks);
  if (op.vcounts.size() != 4 * n) {
    return Status(weftInvalidArgument, "all_to_allv: counts and displacements must not be NULL");
  }
  const size_t es = typeSize(op.type);
  for (size_t side = 0; side < 4; side += 2) {  // send counts and displs, then receive ones
    for (size_t r = 0; r < n; ++r) {
      size_t end = 0;
      if (__builtin_add_overflow(op.vcounts[side * n + r], op.vcounts[(side + 1) * n + r], &end) ||
          end > kMaxBufferBytes / es) {
        return errorf(weftInvalidArgument,
                      "all_to_allv: %s block %zu (count %zu at displacement %zu) is too large",
                      side == 0 ? "send" : "receive", r, op.vcounts[side * n + r],
                      op.vcounts[(side + 1) * n + r]);
      }
    }
  }
  return okStatus();
}

Status checkRecvAnySource(const Op& op) {
  if (op.source == nullptr) {
    return Status(weftInvalidArgument, "recv from any source: source must not be NULL");
  }
  if (op.comm->nranks() < 2) {
    return Status(weftInvalidUsage, "recv from any source: the communicator has no other rank");
  }
  if (op.count == 0) {
    return Status(weftInvalidArgument,
                  "recv from any source: count must be > 0 (empty messages are not sent)");
  }
  if (inGroup()) {
    return Status(weftInvalidUsage,
                  "recv from any source cannot be part of a group: it runs alone, in order with "
                  "the communicator's other calls");
  }
  return okStatus();
}

}  // namespace

Status checkOp(const Op& op) {
  const int n = op.comm->nranks();
  if (op.kind != OpKind::kCollective) {
    const char* name = op.kind == OpKind::kSend ? "send" : "recv";
    if (!validType(op.type)) {
      return errorf(weftInvalidArgument, "%s: unknown data type %d", name,
                    static_cast<int>(op.type));
    }
    if (op.anySource) {
      WEFT_RETURN_IF_ERROR(checkRecvAnySource(op));
    } else if (op.peer < 0 || op.peer >= n) {
      return errorf(weftInvalidArgument, "%s: peer %d is out of range (communicator of %d ranks)",
                    name, op.peer, n);
    }
    if (op.count > kMaxBufferBytes / typeSize(op.type)) {
      return errorf(weftInvalidArgument, "%s: count %zu is too large", name, op.count);
    }
    const void* buf = op.kind == OpKind::kSend ? op.sendbuff : op.recvbuff;
    return needBuffer(buf, op.kind == OpKind::kSend ? "sendbuff" : "recvbuff", op.count, name);
  }
  if (op.args.kind == CollKind::kAllToAllv) WEFT_RETURN_IF_ERROR(checkAllToAllv(op));
  return checkCollective(op);
}

Status checkSelfPairs(const std::vector<Op>& ops) {
  std::vector<const Op*> sends, recvs;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kCollective || op.peer != op.comm->rank()) continue;
    (op.kind == OpKind::kSend ? sends : recvs).push_back(&op);
  }
  if (sends.size() != recvs.size()) {
    return errorf(weftInvalidUsage,
                  "%zu sends to self but %zu receives from self: a send to oneself needs its "
                  "receive in the same group (weftGroupStart/weftGroupEnd)",
                  sends.size(), recvs.size());
  }
  for (size_t i = 0; i < sends.size(); ++i) {
    const size_t from = sends[i]->count * typeSize(sends[i]->type);
    const size_t to = recvs[i]->count * typeSize(recvs[i]->type);
    if (from != to) {
      return errorf(weftInvalidUsage, "send to self of %zu bytes meets a receive of %zu bytes",
                    from, to);
    }
  }
  return okStatus();
}

}  // namespace weft
