#include "collectives/schedule.h"

#include <algorithm>

#include "src/base/status.h"

namespace weft {

void Schedule::send(int peer, Ref src, size_t count) {
  if (count > 0) steps.push_back({StepKind::kSend, peer, src, {}, count});
}
void Schedule::recv(int peer, Ref dst, size_t count) {
  if (count > 0) steps.push_back({StepKind::kRecv, peer, {}, dst, count});
}
void Schedule::recvReduce(int peer, Ref src, Ref dst, size_t count) {
  if (count > 0) steps.push_back({StepKind::kRecvReduce, peer, src, dst, count});
}
void Schedule::copy(Ref src, Ref dst, size_t count) {
  if (count > 0) steps.push_back({StepKind::kCopy, -1, src, dst, count});
}
void Schedule::reduce(Ref src, Ref dst, size_t count) {
  if (count > 0) steps.push_back({StepKind::kReduce, -1, src, dst, count});
}
void Schedule::signal(int peer) {
  steps.push_back({StepKind::kSend, peer, {}, {}, 0});
}
void Schedule::wait(int peer) {
  steps.push_back({StepKind::kRecv, peer, {}, {}, 0});
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
  }
  return "?";
}

}  // namespace weft
