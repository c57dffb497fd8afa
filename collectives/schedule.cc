#include "collectives/schedule.h"

#include <algorithm>

#include "src/base/status.h"

namespace weft {
namespace {

Step step(StepKind kind, uint8_t options, int peer, Ref src, Ref dst, size_t count, Ref with = {}) {
  Step s;
  s.kind = kind;
  s.options = options;
  s.peer = peer;
  s.src = src;
  s.dst = dst;
  s.count = count;
  s.with = with;
  return s;
}

}  // namespace

void Schedule::send(int peer, Ref src, size_t count) {
  if (count > 0) steps.push_back(step(StepKind::kSend, 0, peer, src, {}, count));
}
void Schedule::recv(int peer, Ref dst, size_t count) {
  if (count > 0) steps.push_back(step(StepKind::kRecv, 0, peer, {}, dst, count));
}
void Schedule::recvReduce(int peer, Ref src, Ref dst, size_t count) {
  if (count > 0) steps.push_back(step(StepKind::kRecvReduce, 0, peer, src, dst, count));
}
void Schedule::copy(Ref src, Ref dst, size_t count, uint8_t options) {
  if (count > 0) steps.push_back(step(StepKind::kCopy, options, -1, src, dst, count));
}
void Schedule::reduce(Ref src, Ref dst, size_t count) {
  if (count > 0) steps.push_back(step(StepKind::kReduce, 0, -1, src, dst, count));
}
void Schedule::messageSignal(int peer) {
  steps.push_back(step(StepKind::kSend, 0, peer, {}, {}, 0));
}
void Schedule::messageWait(int peer) {
  steps.push_back(step(StepKind::kRecv, 0, peer, {}, {}, 0));
}
void Schedule::put(int peer, Ref src, Ref dst, size_t count, uint8_t options) {
  if (count > 0) steps.push_back(step(StepKind::kPut, options, peer, src, dst, count));
}
void Schedule::get(int peer, Ref src, Ref dst, size_t count, uint8_t options) {
  if (count > 0) steps.push_back(step(StepKind::kGet, options, peer, src, dst, count));
}
void Schedule::getReduce(int peer, Ref src, Ref with, Ref dst, size_t count) {
  if (count > 0) steps.push_back(step(StepKind::kGetReduce, 0, peer, src, dst, count, with));
}
void Schedule::putReduce(int peer, Ref src, Ref with, Ref dst, size_t count) {
  if (count > 0) steps.push_back(step(StepKind::kPutReduce, 0, peer, src, dst, count, with));
}
void Schedule::memorySignal(int peer) {
  steps.push_back(step(StepKind::kSignal, 0, peer, {}, {}, 0));
}
void Schedule::memoryWait(int peer) {
  steps.push_back(step(StepKind::kWait, 0, peer, {}, {}, 0));
}
bool Schedule::usesMemory() const {
  return std::any_of(steps.begin(), steps.end(),
                     [](const Step& s) { return isMemoryStep(s.kind); });
}

const char* collName(CollKind kind) {
  switch (kind) {
    case CollKind::kBroadcast:
      return "broadcast";
    case CollKind::kReduce:
      return "reduce";
    case CollKind::kAllReduce:
      return "all_reduce";
    case CollKind::kReduceScatter:
      return "reduce_scatter";
    case CollKind::kAllGather:
      return "all_gather";
    case CollKind::kAllToAll:
      return "all_to_all";
    case CollKind::kAllToAllv:
      return "all_to_allv";
    case CollKind::kBarrier:
      return "barrier";
  }
  return "?";
}

namespace {

size_t vEnd(const size_t* counts, const size_t* displs, int n) {
  size_t end = 0;
  for (int r = 0; r < n; ++r)
    end = std::max(end, displs[r] + counts[r]);
  return end;
}

}  // namespace

size_t sendBufferCount(const CollArgs& a) {
  const size_t n = static_cast<size_t>(a.nranks);
  switch (a.kind) {
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return a.count * n;
    case CollKind::kAllToAllv:
      return vEnd(a.sendCounts, a.sendDispls, a.nranks);
    case CollKind::kBarrier:
      return 0;
    default:
      return a.count;
  }
}

size_t recvBufferCount(const CollArgs& a) {
  const size_t n = static_cast<size_t>(a.nranks);
  switch (a.kind) {
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      return a.count * n;
    case CollKind::kAllToAllv:
      return vEnd(a.recvCounts, a.recvDispls, a.nranks);
    case CollKind::kBarrier:
      return 0;
    default:
      return a.count;
  }
}

std::string describeStep(const Step& s) {
  auto ref = [](const Ref& r) {
    static const char* kNames[] = {"send", "recv", "scratch"};
    if (r.buf < 3) return strprintf("%s[%zu]", kNames[r.buf], r.offset);
    return strprintf("buffer%u[%zu]", static_cast<unsigned>(r.buf), r.offset);
  };
  switch (s.kind) {
    case StepKind::kSend:
      return strprintf("send %zu elements from %s to rank %d", s.count, ref(s.src).c_str(), s.peer);
    case StepKind::kRecv:
      return strprintf("receive %zu elements from rank %d into %s", s.count, s.peer,
                       ref(s.dst).c_str());
    case StepKind::kRecvReduce:
      return strprintf("receive %zu elements from rank %d, reduce with %s into %s", s.count, s.peer,
                       ref(s.src).c_str(), ref(s.dst).c_str());
    case StepKind::kCopy:
      return strprintf("copy %zu elements %s -> %s", s.count, ref(s.src).c_str(),
                       ref(s.dst).c_str());
    case StepKind::kReduce:
      return strprintf("reduce %zu elements %s into %s", s.count, ref(s.src).c_str(),
                       ref(s.dst).c_str());
    case StepKind::kPut:
      return strprintf("put %zu elements from %s into rank %d's %s", s.count, ref(s.src).c_str(),
                       s.peer, ref(s.dst).c_str());
    case StepKind::kGet:
      return strprintf("get %zu elements from rank %d's %s into %s", s.count, s.peer,
                       ref(s.src).c_str(), ref(s.dst).c_str());
    case StepKind::kGetReduce:
      return strprintf("reduce %zu elements of %s with rank %d's %s into %s", s.count,
                       ref(s.src).c_str(), s.peer, ref(s.with).c_str(), ref(s.dst).c_str());
    case StepKind::kPutReduce:
      return strprintf("reduce %zu elements of %s with rank %d's %s into its %s", s.count,
                       ref(s.src).c_str(), s.peer, ref(s.with).c_str(), ref(s.dst).c_str());
    case StepKind::kSignal:
      return strprintf("signal rank %d", s.peer);
    case StepKind::kWait:
      return strprintf("wait for a signal from rank %d", s.peer);
  }
  return "?";
}

}  // namespace weft
