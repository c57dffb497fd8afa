#include "collectives/executor.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "collectives/call_stamp.h"
#include "collectives/stream_copy.h"

namespace weft {
void Executor::ReduceSink::reset(char* dst, const char* src, size_t elemSize, ReduceFn reduce) {
  dst_ = dst;
  src_ = src;
  elemSize_ = elemSize;
  reduce_ = reduce;
  carried_ = 0;
}

void Executor::ReduceSink::accept(size_t offset, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  // An element split between two pieces is gathered in carry_ first.
  if (carried_ > 0) {
    size_t take = std::min(elemSize_ - carried_, bytes);
    memcpy(carry_ + carried_, p, take);
    carried_ += take;
    p += take;
    bytes -= take;
    offset += take;
    if (carried_ == elemSize_) {
      size_t at = offset - elemSize_;
      reduce_(dst_ + at, src_ + at, carry_, 1);
      carried_ = 0;
    }
  }
  size_t whole = bytes / elemSize_ * elemSize_;
  if (whole > 0) reduce_(dst_ + offset, src_ + offset, p, whole / elemSize_);
  if (bytes > whole) {
    carried_ = bytes - whole;
    memcpy(carry_, p + whole, carried_);
  }
}

size_t Executor::stepBytes(const Step& s) const {
  const Ref& first = s.kind == StepKind::kRecv || s.kind == StepKind::kGet ? s.dst : s.src;
  return first.buf < buffers_.size() ? bytesOf(first, s.count) : 0;
}

Status Executor::checkStep(const Step& s) const {
  // In bytes: a copy may join buffers of different element sizes (a send to oneself).
  const size_t bytes = stepBytes(s);
  auto inBounds = [&](const Ref& r) {
    if (r.buf >= buffers_.size()) return false;
    const BufferView& b = buffers_[r.buf];
    return r.offset <= b.count && bytes <= (b.count - r.offset) * b.elemSize;
  };
  // This rank's side of the step; a memory step's side in the peer is checked as it runs.
  const bool usesSrc = s.kind != StepKind::kRecv && s.kind != StepKind::kGet;
  const bool usesDst =
      s.kind != StepKind::kSend && s.kind != StepKind::kPut && s.kind != StepKind::kPutReduce;
  if (s.count > 0 && ((usesSrc && !inBounds(s.src)) || (usesDst && !inBounds(s.dst)))) {
    return errorf(weftInternalError, "schedule step out of bounds: %s", describeStep(s).c_str());
  }
  const bool usesLink =
      s.kind == StepKind::kSend || s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce;
  if (usesLink &&
      (s.peer < 0 || static_cast<size_t>(s.peer) >= peerIndex_.size() || peerIndex_[s.peer] < 0)) {
    return errorf(weftInternalError, "schedule step names a peer without a link: %s",
                  describeStep(s).c_str());
  }
  if (isMemoryStep(s.kind)) {
    // The refs into the peer's buffers, which are numbered as this rank's.
    const bool intoPeer = s.kind == StepKind::kPut || s.kind == StepKind::kPutReduce;
    const bool withPeer = s.kind == StepKind::kGetReduce || s.kind == StepKind::kPutReduce;
    const size_t n = buffers_.size();
    const bool remoteOk = (!intoPeer || s.dst.buf < n) && (!withPeer || s.with.buf < n) &&
                          (s.kind != StepKind::kGet || s.src.buf < n);
    if (memory_ == nullptr || s.peer < 0 || static_cast<size_t>(s.peer) >= peerIndex_.size() ||
        !remoteOk) {
      return errorf(weftInternalError, "schedule step has no peer memory to reach: %s",
                    describeStep(s).c_str());
    }
  }
  bool reduces = s.kind == StepKind::kRecvReduce || s.kind == StepKind::kReduce ||
                 s.kind == StepKind::kGetReduce || s.kind == StepKind::kPutReduce;
  if (reduces && reduce_ == nullptr) {
    return errorf(weftInternalError, "schedule reduces without an operator: %s",
                  describeStep(s).c_str());
  }
  return okStatus();
}

Status Executor::start(const Schedule& schedule, std::vector<BufferView> buffers, ReduceFn reduce,
                       Channel* const* channels, int nranks, MemoryFace* memory) {
  steps_ = schedule.steps;
  memory_ = memory;
  sendFlags_ = schedule.pointToPoint ? kPointToPointMessage : 0;
  buffers_ = std::move(buffers);
  reduce_ = reduce;
  peers_.clear();
  peerIndex_.assign(static_cast<size_t>(nranks), -1);

  for (const Step& s : steps_) {
    if (isLocalStep(s.kind) || s.kind == StepKind::kWait) continue;
    if (s.peer >= 0 && s.peer < nranks && peerIndex_[s.peer] < 0 && channels[s.peer] != nullptr) {
      peerIndex_[s.peer] = static_cast<int>(peers_.size());
      peers_.emplace_back();
      peers_.back().peer = s.peer;
      peers_.back().channel = channels[s.peer];
    }
  }
  pendingIo_.reserve(2 * peers_.size());  // a send and a receive each; filled in blocked waits
  std::vector<Footprint> footprints;
  footprints.reserve(steps_.size());
  for (uint32_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    WEFT_RETURN_IF_ERROR(checkStep(s));
    const size_t bytes = stepBytes(s);
    auto range = [this, bytes](const Ref& r, size_t) {
      auto begin = reinterpret_cast<uintptr_t>(addressOf(r));
      return Footprint::Range{begin, begin + bytes};
    };
    footprints.push_back(footprintOf(s, range));
    if (s.kind == StepKind::kSend) peers_[peerIndex_[s.peer]].sends.push_back(i);
    if (s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce) {
      peers_[peerIndex_[s.peer]].recvs.push_back(i);
    }
  }
  dependencies_.build(footprints);
  // Dependents of each step (the reverse edges), which completion walks.
  dependentsStart_.assign(steps_.size() + 1, 0);
  depsCount_.resize(steps_.size());
  for (uint32_t i = 0; i < steps_.size(); ++i) {
    depsCount_[i] = static_cast<uint32_t>(dependencies_.of(i).size());
    for (uint32_t d : dependencies_.of(i))
      ++dependentsStart_[d + 1];
  }
  for (size_t i = 0; i < steps_.size(); ++i)
    dependentsStart_[i + 1] += dependentsStart_[i];
  dependents_.resize(dependentsStart_.back());
  std::vector<uint32_t> fill(dependentsStart_.begin(), dependentsStart_.end() - 1);
  initialLocal_.clear();
  initialWaits_.clear();
  for (uint32_t i = 0; i < steps_.size(); ++i) {
    for (uint32_t d : dependencies_.of(i))
      dependents_[fill[d]++] = i;
    if (!dependencies_.of(i).empty()) continue;
    if (isLocalStep(steps_[i].kind)) initialLocal_.push_back(i);
    if (steps_[i].kind == StepKind::kWait) initialWaits_.push_back(i);
  }
  restart();
  return okStatus();
}

void Executor::rebind(const std::vector<BufferView>& buffers, MemoryFace* memory) {
  buffers_.resize(buffers.size());  // the same capacity: no allocation per call
  for (size_t i = 0; i < buffers.size(); ++i)
    buffers_[i] = buffers[i];
  memory_ = memory;
  restart();
}

void Executor::restart() {
  completed_ = 0;
  // Element by element: these lists are short, and a call of memmove costs more than the copy.
  depsLeft_.resize(depsCount_.size());
  for (size_t i = 0; i < depsCount_.size(); ++i)
    depsLeft_[i] = depsCount_[i];
  for (PeerQueues& q : peers_) {
    q.sendHead = 0;
    q.recvHead = 0;
    q.sendActive = false;
    q.recvActive = false;
    // A lead from earlier calls is forgiven, a surplus the peer sent is kept (sendBudget).
    q.sentBase = q.channel->bytesSent();
    q.receivedBase = std::min(q.channel->bytesReceived(), q.sentBase);
  }
  readyLocal_.assign(initialLocal_.rbegin(), initialLocal_.rend());  // the first on top
  readyWaits_.clear();
  for (uint32_t index : initialWaits_)
    readyWaits_.push_back(index);
  gotten_ = 0;
  put_ = 0;
}

void Executor::complete(uint32_t index) {
  ++completed_;
  for (uint32_t k = dependentsStart_[index]; k < dependentsStart_[index + 1]; ++k) {
    uint32_t d = dependents_[k];
    if (--depsLeft_[d] == 0) {
      StepKind kind = steps_[d].kind;
      if (isLocalStep(kind)) readyLocal_.push_back(d);
      if (kind == StepKind::kWait) readyWaits_.push_back(d);
    }
  }
}

Status Executor::runLocal(uint32_t index) {
  const Step& s = steps_[index];
  const bool stream = (s.options & kStreamStores) != 0;
  const size_t bytes = stepBytes(s);
  char* src = addressOf(s.src);
  char* dst = addressOf(s.dst);
  switch (s.kind) {
    case StepKind::kCopy:
      if (src == dst) break;
      if (stream && (dst + bytes <= src || src + bytes <= dst)) {
        streamCopy(dst, src, bytes);  // which must not overlap
      } else {
        memmove(dst, src, bytes);
      }
      break;
    case StepKind::kReduce:
      reduce_(dst, dst, src, s.count);
      break;
    // The context strings are formatted only on error: this is the hot path.
    case StepKind::kPut: {
      char* to = nullptr;
      Status st = memory_->reach(s.peer, s.dst.buf, bytesOf(s.dst, s.dst.offset), bytes, &to);
      if (!st.ok()) return st.withContext(describeStep(s));
      copyOut(to, src, bytes, stream);
      put_ += bytes;
      break;
    }
    case StepKind::kGet: {
      Status st = memory_->get(s.peer, s.src.buf, bytesOf(s.src, s.src.offset), dst, bytes, stream);
      if (!st.ok()) return st.withContext(describeStep(s));
      gotten_ += bytes;
      break;
    }
    case StepKind::kGetReduce: {
      char* with = nullptr;
      Status st = memory_->reach(s.peer, s.with.buf, bytesOf(s.with, s.with.offset), bytes, &with);
      if (!st.ok()) return st.withContext(describeStep(s));
      reduce_(dst, src, with, s.count);
      gotten_ += bytes;
      break;
    }
    case StepKind::kPutReduce: {
      char* with = nullptr;
      char* to = nullptr;
      Status st = memory_->reach(s.peer, s.with.buf, bytesOf(s.with, s.with.offset), bytes, &with);
      if (st.ok()) st = memory_->reach(s.peer, s.dst.buf, bytesOf(s.dst, s.dst.offset), bytes, &to);
      if (!st.ok()) return st.withContext(describeStep(s));
      reduce_(to, src, with, s.count);
      gotten_ += bytes;
      put_ += bytes;
      break;
    }
    case StepKind::kSignal:
      memory_->signal(s.peer);
      break;
    default:
      return errorf(weftInternalError, "not a local step: %s", describeStep(s).c_str());
  }
  complete(index);
  return okStatus();
}

Status Executor::runLocalSteps(bool* progressed) {
  for (size_t ran = 0; ran < localStepsPerPass_ && !readyLocal_.empty(); ++ran) {
    if (shuffle_) std::swap(readyLocal_.back(), readyLocal_[random_() % readyLocal_.size()]);
    uint32_t index = readyLocal_.back();
    readyLocal_.pop_back();
    WEFT_RETURN_IF_ERROR(runLocal(index));
    *progressed = true;
  }
  return okStatus();
}

// Waits are fences, so at most one is ready at a time: the signal it takes is its own.
Status Executor::takeSignals(bool* progressed) {
  for (size_t i = 0; i < readyWaits_.size();) {
    const uint32_t index = readyWaits_[i];
    const int peer = steps_[index].peer;
    const bool taken = memory_->takeSignal(peer);
    if (!taken && memory_->peerFailed(peer)) {
      return errorf(weftRemoteError, "rank %d failed while this rank waited for its signal", peer);
    }
    if (!taken) {
      ++i;
      continue;
    }
    readyWaits_[i] = readyWaits_.back();
    readyWaits_.pop_back();
    complete(index);
    *progressed = true;
  }
  return okStatus();
}

// How many bytes the head send to q's peer may write now (Link::paceBytes). Over a link that
// paces, while a receive from the same peer is ready, a send writes at most paceBytes a pass;
// once that receive is arriving, the sends run at most paceBytes ahead of the receives. Sending
// and receiving then take turns in pieces that stay in cache, instead of each side filling its
// socket buffers first: 2 ranks over a veth on 2 cores moved sendrecv 64M at 0.9-1.5 GB/s per
// direction unpaced and 2.6-2.9 paced.
// The lead counts in the channel's lifetime totals, from this run's start, where a lead from
// earlier calls is forgiven but a surplus the peer sent is kept. Then the limit cannot deadlock:
// it waits only for a message the peer has begun, which the peer finishes unless its own limit
// holds it, and for both limits to hold, each end would have to have sent more than the other
// over the channel's life (forgiving only loosens a limit). Counting from the run's start alone
// deadlocks where calls pair up across call boundaries (ExecutorPacing's tests).
size_t Executor::sendBudget(const PeerQueues& q) const {
  const size_t pace = q.channel->link()->paceBytes();
  if (pace == 0 || q.recvHead >= q.recvs.size() || depsLeft_[q.recvs[q.recvHead]] > 0) {
    return SIZE_MAX;
  }
  if (!q.recvActive || q.in.headerReceived == 0) return pace;
  const uint64_t sent = q.channel->bytesSent() - q.sentBase;
  const uint64_t allowed = q.channel->bytesReceived() - q.receivedBase + pace;
  return allowed > sent ? static_cast<size_t>(allowed - sent) : 0;
}

Status Executor::progressSends(PeerQueues& q, bool* progressed) {
  while (q.sendHead < q.sends.size()) {
    uint32_t index = q.sends[q.sendHead];
    if (depsLeft_[index] > 0) return okStatus();
    const size_t budget = sendBudget(q);
    if (budget == 0) return okStatus();
    if (!q.sendActive) {
      const Step& s = steps_[index];
      q.out = OutgoingMessage{};
      q.out.data = addressOf(s.src);
      q.out.bytes = bytesOf(s.src, s.count);
      q.out.flags = sendFlags_;
      q.out.call = call_;
      q.sendActive = true;
    }
    size_t before = q.out.headerSent + q.out.sent;
    bool done = false;
    WEFT_RETURN_IF_ERROR(q.channel->progressSend(q.out, &done, budget));
    if (q.out.headerSent + q.out.sent != before) *progressed = true;
    if (!done) return okStatus();
    q.sendActive = false;
    ++q.sendHead;
    complete(index);
  }
  return okStatus();
}

Status Executor::progressRecvs(PeerQueues& q, bool* progressed) {
  while (q.recvHead < q.recvs.size()) {
    uint32_t index = q.recvs[q.recvHead];
    if (depsLeft_[index] > 0) return okStatus();
    if (!q.recvActive) {
      const Step& s = steps_[index];
      q.in = IncomingMessage{};
      q.in.bytes = bytesOf(s.dst, s.count);
      q.in.flags = sendFlags_;
      q.in.call = call_;
      if (s.kind == StepKind::kRecvReduce) {
        q.sink.reset(addressOf(s.dst), addressOf(s.src), buffers_[s.dst.buf].elemSize, reduce_);
        q.in.sink = &q.sink;
      } else {
        q.in.data = addressOf(s.dst);
      }
      q.recvActive = true;
    }
    size_t before = q.in.headerReceived + q.in.received;
    bool done = false;
    Status st = q.channel->progressRecv(q.in, &done);
    if (!st.ok()) {
      if (st.code() == weftInvalidUsage && q.in.headerReceived == sizeof(MessageHeader) &&
          !callMatches(q.in)) {
        return callMismatch(q.peer, q.in.header, q.channel->rank(), call_, sendFlags_);
      }
      return st;
    }
    if (q.in.headerReceived + q.in.received != before) *progressed = true;
    if (!done) return okStatus();
    q.recvActive = false;
    ++q.recvHead;
    complete(index);
  }
  return okStatus();
}

Status Executor::progress(bool* progressed) {
  *progressed = false;
  WEFT_RETURN_IF_ERROR(runLocalSteps(progressed));
  if (!readyWaits_.empty()) {
    bool took = false;
    WEFT_RETURN_IF_ERROR(takeSignals(&took));
    if (took) WEFT_RETURN_IF_ERROR(runLocalSteps(progressed));
    *progressed = *progressed || took;
  }
  // The context strings are formatted only on error: this loop is the hot path.
  for (PeerQueues& q : peers_) {
    Status st = progressSends(q, progressed);
    if (!st.ok()) return st.withContext(strprintf("sending to rank %d", q.peer));
    st = progressRecvs(q, progressed);
    if (!st.ok()) return st.withContext(strprintf("receiving from rank %d", q.peer));
  }
  return okStatus();
}

std::string Executor::describeWait() const {
  std::string out;
  int shown = 0;
  for (const PeerQueues& q : peers_) {
    auto add = [&](const std::vector<uint32_t>& list, size_t head, const char* what, size_t moved,
                   const char* held) {
      if (head >= list.size() || shown >= 4) return;
      uint32_t index = list[head];
      if (!out.empty()) out += "; ";
      out += strprintf("%s rank %d: %s (step %u of %zu%s", what, q.peer,
                       describeStep(steps_[index]).c_str(), index + 1, steps_.size(),
                       depsLeft_[index] > 0 ? ", waiting for earlier steps)" : "");
      if (depsLeft_[index] == 0) out += strprintf(", %zu bytes moved%s)", moved, held);
      ++shown;
    };
    const bool paced = q.sendHead < q.sends.size() && sendBudget(q) == 0;
    add(q.sends, q.sendHead, "to", q.sendActive ? q.out.sent : 0,
        paced ? ", paced: waits for the receive below (WEFT_SOCKET_PACE_BYTES)" : "");
    add(q.recvs, q.recvHead, "from", q.recvActive ? q.in.received : 0, "");
  }
  for (uint32_t index : readyWaits_) {
    if (shown++ >= 4) break;
    if (!out.empty()) out += "; ";
    out += strprintf("%s (step %u of %zu)", describeStep(steps_[index]).c_str(), index + 1,
                     steps_.size());
  }
  return out.empty() ? "local steps" : out;
}

const std::vector<std::pair<int, bool>>& Executor::pendingIo() {
  pendingIo_.clear();
  for (const PeerQueues& q : peers_) {
    if (q.sendHead < q.sends.size() && depsLeft_[q.sends[q.sendHead]] == 0 && sendBudget(q) > 0) {
      pendingIo_.emplace_back(q.peer, false);
    }
    if (q.recvHead < q.recvs.size() && depsLeft_[q.recvs[q.recvHead]] == 0) {
      pendingIo_.emplace_back(q.peer, true);
    }
  }
  return pendingIo_;
}

std::vector<int> Executor::pendingPeers() const {
  std::vector<int> out;
  for (const PeerQueues& q : peers_) {
    if (q.sendHead < q.sends.size() || q.recvHead < q.recvs.size()) out.push_back(q.peer);
  }
  for (uint32_t index : readyWaits_)
    out.push_back(steps_[index].peer);
  return out;
}

}  // namespace weft
