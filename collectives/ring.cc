// Ring algorithms: every rank sends to rank+1 and receives from rank-1. Each ring step moves one
// block in chunks, and steps are emitted step-major, so step s+1 of a chunk starts as soon as
// step s of that chunk arrived while later chunks of step s are still travelling.
#include "collectives/algorithms.h"

namespace weft {
namespace {

struct Ring {
  int n, rank, next, prev;
  size_t chunk;
};

Ring ringOf(const CollArgs& a, size_t chunk) {
  return {a.nranks, a.rank, modRank(a.rank + 1, a.nranks), modRank(a.rank - 1, a.nranks), chunk};
}

// All-reduce = reduce-scatter of n balanced blocks into RECV, then all-gather of those blocks.
// The first step reads the input from SEND; every later step forwards from RECV, so in-place
// calls (SEND == RECV) read nothing that was overwritten.
void allReduce(const CollArgs& a, const Ring& g, Schedule* out) {
  auto block = [&](int b) { return balancedBlock(a.count, g.n, modRank(b, g.n)); };
  // Step s: send block rank-s, fold block rank-s-1 arriving from prev into RECV. After n-1
  // steps this rank holds block rank+1 fully reduced.
  for (int s = 0; s < g.n - 1; ++s) {
    BufId from = s == 0 ? kSendBuf : kRecvBuf;
    forEachChunk(block(g.rank - s), g.chunk, [&](Span c) {
      out->send(g.next, {from, c.offset}, c.count);
    });
    forEachChunk(block(g.rank - s - 1), g.chunk, [&](Span c) {
      out->recvReduce(g.prev, {kSendBuf, c.offset}, {kRecvBuf, c.offset}, c.count);
    });
  }
  // All-gather: step s forwards block rank+1-s and receives block rank-s.
  for (int s = 0; s < g.n - 1; ++s) {
    forEachChunk(block(g.rank + 1 - s), g.chunk, [&](Span c) {
      out->send(g.next, {kRecvBuf, c.offset}, c.count);
    });
    forEachChunk(block(g.rank - s), g.chunk, [&](Span c) {
      out->recv(g.prev, {kRecvBuf, c.offset}, c.count);
    });
  }
}

// All-gather: rank r's contribution is block r of RECV. Step s forwards block rank-s and
// receives block rank-s-1; step 0 sends straight from SEND (which is block rank when in place).
void allGather(const CollArgs& a, const Ring& g, Schedule* out) {
  const size_t count = a.count;
  auto at = [&](int b) { return static_cast<size_t>(modRank(b, g.n)) * count; };
  out->copy({kSendBuf, 0}, {kRecvBuf, at(g.rank)}, count);
  for (int s = 0; s < g.n - 1; ++s) {
    forEachChunk({0, count}, g.chunk, [&](Span c) {
      Ref src = s == 0 ? Ref{kSendBuf, c.offset} : Ref{kRecvBuf, at(g.rank - s) + c.offset};
      out->send(g.next, src, c.count);
    });
    forEachChunk({at(g.rank - s - 1), count}, g.chunk, [&](Span c) {
      out->recv(g.prev, {kRecvBuf, c.offset}, c.count);
    });
  }
}

// Reduce-scatter: block b of SEND belongs to rank b. Step s sends the partial sum of block
// rank-s-1 and folds block rank-s-2 from prev; the last step folds block rank into RECV. Partial
// sums wait in two scratch slots (step s writes slot s%2, step s+1 forwards it), because RECV
// holds only this rank's block.
void reduceScatter(const CollArgs& a, const Ring& g, Schedule* out) {
  const size_t count = a.count;
  auto at = [&](int b) { return static_cast<size_t>(modRank(b, g.n)) * count; };
  auto slot = [&](int s) { return static_cast<size_t>(s % 2) * count; };
  if (g.n > 2) out->scratchCount = 2 * count;
  for (int s = 0; s < g.n - 1; ++s) {
    forEachChunk({0, count}, g.chunk, [&](Span c) {
      Ref src = s == 0 ? Ref{kSendBuf, at(g.rank - 1) + c.offset}
                       : Ref{kScratchBuf, slot(s - 1) + c.offset};
      out->send(g.next, src, c.count);
    });
    forEachChunk({0, count}, g.chunk, [&](Span c) {
      Ref dst = s == g.n - 2 ? Ref{kRecvBuf, c.offset} : Ref{kScratchBuf, slot(s) + c.offset};
      out->recvReduce(g.prev, {kSendBuf, at(g.rank - s - 2) + c.offset}, dst, c.count);
    });
  }
}

// Broadcast: a pipelined chain root -> root+1 -> ... -> root-1.
void broadcast(const CollArgs& a, const Ring& g, Schedule* out) {
  const int pos = modRank(g.rank - a.root, g.n);
  if (pos == 0) out->copy({kSendBuf, 0}, {kRecvBuf, 0}, a.count);
  forEachChunk({0, a.count}, g.chunk, [&](Span c) {
    if (pos == 0) {
      out->send(g.next, {kSendBuf, c.offset}, c.count);
      return;
    }
    out->recv(g.prev, {kRecvBuf, c.offset}, c.count);
    if (pos < g.n - 1) out->send(g.next, {kRecvBuf, c.offset}, c.count);
  });
}

// Reduce: a pipelined chain root-1 -> root-2 -> ... -> root+1 -> root, each rank folding in its
// input. Non-roots stage partial results in scratch: their RECV may not exist.
void reduce(const CollArgs& a, const Ring& g, Schedule* out) {
  const int pos = modRank(g.rank - a.root, g.n);
  const int to = g.prev, from = g.next;
  const bool last = pos == g.n - 1;
  const BufId acc = pos == 0 ? kRecvBuf : kScratchBuf;
  if (pos != 0 && !last) out->scratchCount = a.count;
  forEachChunk({0, a.count}, g.chunk, [&](Span c) {
    if (last) {
      out->send(to, {kSendBuf, c.offset}, c.count);
      return;
    }
    out->recvReduce(from, {kSendBuf, c.offset}, {acc, c.offset}, c.count);
    if (pos != 0) out->send(to, {acc, c.offset}, c.count);
  });
}

}  // namespace

void buildRing(const CollArgs& args, size_t chunk, Schedule* out) {
  const Ring g = ringOf(args, chunk);
  switch (args.kind) {
    case CollKind::kAllReduce:
      return allReduce(args, g, out);
    case CollKind::kAllGather:
      return allGather(args, g, out);
    case CollKind::kReduceScatter:
      return reduceScatter(args, g, out);
    case CollKind::kBroadcast:
      return broadcast(args, g, out);
    case CollKind::kReduce:
      return reduce(args, g, out);
    default:
      return;
  }
}

}  // namespace weft
