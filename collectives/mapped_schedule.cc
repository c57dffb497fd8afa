#include "collectives/mapped_schedule.h"

#include <algorithm>
#include <climits>

#include "collectives/line_slice.h"

namespace weft {
namespace {

// The first barrier: each rank tells the ranks that touch its buffers that they may, and waits
// until the ranks whose buffers it touches have said so. The last: each rank tells the ranks
// whose buffers it touched that it is done with them, and waits for the ranks that touch its own.
void barrier(const CollArgs& a, bool first, Schedule* s) {
  const int n = a.nranks;
  const int me = a.rank;
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    if (first ? mappedTouches(a, p, me) : mappedTouches(a, me, p)) s->memorySignal(p);
  }
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    if (first ? mappedTouches(a, me, p) : mappedTouches(a, p, me)) s->memoryWait(p);
  }
}

// dst = the sum of the send[at, at + count) of every rank but `skip` (-1: none), starting with
// this rank's own input (the one dst may alias), so that no input is read after it is
// overwritten.
void reduceAll(const CollArgs& a, size_t at, size_t count, Ref dst, Schedule* s, int skip = -1) {
  const Ref mine{kSendBuf, at};
  bool reduced = false;
  for (int k = 1; k < a.nranks; ++k) {
    const int p = (a.rank + k) % a.nranks;
    if (p == skip) continue;
    s->getReduce(p, reduced ? dst : mine, {kSendBuf, at}, dst, count);
    reduced = true;
  }
  if (!reduced) s->copy(mine, dst, count);
}

// Copies count elements of rank p's send at `from` into this rank's recv at `to`.
void fetch(const CollArgs& a, int p, size_t from, size_t to, size_t count, uint8_t options,
           Schedule* s) {
  if (p == a.rank) {
    s->copy({kSendBuf, from}, {kRecvBuf, to}, count, options);
  } else {
    s->get(p, {kSendBuf, from}, {kRecvBuf, to}, count, options);
  }
}

}  // namespace

bool mappedTouches(const CollArgs& a, int rank, int owner) {
  if (rank == owner) return false;
  return a.kind != CollKind::kBroadcast || owner == a.root;
}

Schedule buildMappedSchedule(const CollArgs& a, const MappedOptions& o) {
  Schedule s;
  if (!o.entered) barrier(a, true, &s);
  const int n = a.nranks;
  const int me = a.rank;
  const size_t piece = std::max<size_t>(1, o.pieceBytes / o.elemSize);
  const uint8_t stores = o.stream ? kStreamStores : 0;
  const Ref scratch{kScratchBuf, 0};
  auto pieces = [piece](size_t first, size_t count, auto&& fn) {
    for (size_t done = 0; done < count;) {
      const size_t c = std::min(piece, count - done);
      fn(first + done, c);
      done += c;
    }
  };
  switch (a.kind) {
    case CollKind::kAllReduce: {
      const auto [first, count] = lineSlice(a.count, o.elemSize, n, me);
      pieces(first, count, [&](size_t at, size_t c) {
        const Ref sum = o.stream ? scratch : Ref{kRecvBuf, at};
        reduceAll(a, at, c, sum, &s);
        if (o.stream) s.copy(scratch, {kRecvBuf, at}, c, stores);
        for (int k = 1; k < n; ++k)
          s.put((me + k) % n, sum, {kRecvBuf, at}, c, stores);
      });
      if (o.stream) s.scratchCount = std::min(piece, count);
      break;
    }
    case CollKind::kReduce: {
      // A non-root sums its slice in scratch from every input but the root's, which the last
      // step adds on its way into the root's output (where the root's input may sit: in
      // place); with 2 ranks that step is all. Streamed, the whole sum collects in scratch.
      const auto [first, count] = lineSlice(a.count, o.elemSize, n, me);
      const bool root = me == a.root;
      const bool scratched = n > 2 || o.stream;
      pieces(first, count, [&](size_t at, size_t c) {
        if (root) {
          reduceAll(a, at, c, o.stream ? scratch : Ref{kRecvBuf, at}, &s);
          if (o.stream) s.copy(scratch, {kRecvBuf, at}, c, stores);
        } else if (o.stream) {
          reduceAll(a, at, c, scratch, &s);
          s.put(a.root, scratch, {kRecvBuf, at}, c, stores);
        } else {
          const Ref sum = scratched ? scratch : Ref{kSendBuf, at};
          if (scratched) reduceAll(a, at, c, scratch, &s, a.root);
          s.putReduce(a.root, sum, {kSendBuf, at}, {kRecvBuf, at}, c);
        }
      });
      if ((root && o.stream) || (!root && scratched)) s.scratchCount = std::min(piece, count);
      break;
    }
    case CollKind::kReduceScatter:
      pieces(0, a.count, [&](size_t at, size_t c) {
        reduceAll(a, static_cast<size_t>(me) * a.count + at, c, {kRecvBuf, at}, &s);
      });
      break;
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      // The next rank's block first, this rank's own last.
      for (int k = 1; k <= n; ++k) {
        const int p = (me + k) % n;
        const size_t from = a.kind == CollKind::kAllToAll ? static_cast<size_t>(me) * a.count : 0;
        pieces(0, a.count, [&](size_t at, size_t c) {
          fetch(a, p, from + at, static_cast<size_t>(p) * a.count + at, c, stores, &s);
        });
      }
      break;
    case CollKind::kBroadcast:
      pieces(0, a.count, [&](size_t at, size_t c) { fetch(a, a.root, at, at, c, stores, &s); });
      break;
    default:
      break;
  }
  barrier(a, false, &s);
  return s;
}

void MappedFace::beginCall(DirectGroup* group, uint64_t call, const CollArgs& args, size_t elemSize,
                           const MappedBuffers* buffers,
                           const std::vector<uint64_t>* kernelInputs) {
  group_ = group;
  kernelInputs_ = kernelInputs;
  // Every rank's buffers are as long as this rank's: the collectives with a mapped form are not
  // all-to-allv.
  sendBytes_ = sendBufferCount(args) * elemSize;
  recvBytes_ = recvBufferCount(args) * elemSize;
  buffers_ = buffers;
  base_ = call * kSignalsPerCall;
  sent_.assign(static_cast<size_t>(group->nranks()), 0);
  taken_.assign(static_cast<size_t>(group->nranks()), 0);
}

PeerBuffer MappedFace::buffer(int peer, BufId buf) {
  if (peer < 0 || peer >= group_->nranks() || peer == group_->rank()) return {};
  if (kernelInputs_ != nullptr) {
    if (buf != kSendBuf) return {};
    return {nullptr, sendBytes_, (*kernelInputs_)[peer], group_->area(peer).owner->pid};
  }
  if (buf == kSendBuf) return {const_cast<char*>(buffers_->send[peer]), sendBytes_};
  if (buf == kRecvBuf) return {buffers_->recv[peer], recvBytes_};
  return {};
}

void MappedFace::signal(int peer) {
  const SlotArea& theirs = group_->area(peer);
  theirs.control->signals[group_->rank()].store(base_ + ++sent_[peer], std::memory_order_release);
  if (theirs.doorbell != nullptr) theirs.doorbell->ring();
}

bool MappedFace::takeSignal(int peer) {
  const uint64_t raised =
      group_->area(group_->rank()).control->signals[peer].load(std::memory_order_acquire);
  if (raised <= base_ + taken_[peer]) return false;
  ++taken_[peer];
  return true;
}

Status MappedExecutors::get(const CollArgs& a, const MappedOptions& o, ReduceFn reduce,
                            const void* send, void* recv, MemoryFace* memory, Executor** out) {
  const auto* s = static_cast<const char*>(send);
  auto* r = static_cast<char*>(recv);
  const size_t sendBytes = send == nullptr ? 0 : sendBufferCount(a) * o.elemSize;
  const size_t recvBytes = recv == nullptr ? 0 : recvBufferCount(a) * o.elemSize;
  const auto sa = reinterpret_cast<uintptr_t>(s);
  const auto ra = reinterpret_cast<uintptr_t>(r);
  const bool overlap = sendBytes > 0 && recvBytes > 0 && ra < sa + sendBytes && sa < ra + recvBytes;
  const int64_t recvFromSend = overlap ? static_cast<int64_t>(ra - sa) : INT64_MIN;
  const MappedShape shape{a.kind,       a.count, a.root,   a.rank,    a.nranks,    o.elemSize,
                          o.pieceBytes, reduce,  o.stream, o.entered, recvFromSend};
  const size_t es = o.elemSize;
  auto views = [&](Entry& e) -> const std::vector<BufferView>& {
    e.views.resize(3);
    e.views[kSendBuf] = {const_cast<char*>(s), sendBytes / es, es};
    e.views[kRecvBuf] = {r, recvBytes / es, es};
    e.views[kScratchBuf] = {e.scratch.data(), e.scratch.size() / es, es};
    return e.views;
  };
  if (Entry* hit = entries_.find(shape)) {
    hit->executor->rebind(views(*hit), memory);
    *out = hit->executor.get();
    return okStatus();
  }
  const Schedule schedule = buildMappedSchedule(a, o);
  Entry e;
  e.scratch.resize(schedule.scratchCount * es);
  e.executor = std::make_unique<Executor>();
  WEFT_RETURN_IF_ERROR(e.executor->start(schedule, views(e), reduce, nullptr, a.nranks, memory));
  *out = entries_.insert(shape, std::move(e))->executor.get();
  return okStatus();
}

}  // namespace weft
