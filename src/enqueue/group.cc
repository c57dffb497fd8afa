#include "src/enqueue/group.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "src/comm/communicator.h"
#include "src/enqueue/check.h"
#include "src/enqueue/record.h"
#include "src/enqueue/runner.h"
#include "src/enqueue/stream.h"

namespace weft {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<Op> ops;
  std::vector<Communicator*> inits;
  Status error;  // the first failed call inside the group; the group then runs nothing
};

thread_local GroupState tGroup;

// Splits ops by stream and, within a stream, by communicator (in first-appearance order), and
// takes each communicator's ticket now, in the caller's program order.
Status launch(std::vector<Op> ops) {
  std::vector<std::pair<weftStream_t, std::vector<CommWork>>> byStream;
  for (Op& op : ops) {
    auto s = byStream.begin();
    while (s != byStream.end() && s->first != op.stream)
      ++s;
    if (s == byStream.end()) s = byStream.insert(byStream.end(), {op.stream, {}});
    auto w = s->second.begin();
    while (w != s->second.end() && w->comm != op.comm)
      ++w;
    if (w == s->second.end()) {
      w = s->second.insert(s->second.end(), CommWork{});
      w->comm = op.comm;
    }
    (op.kind == OpKind::kCollective ? w->collectives : w->p2p).push_back(std::move(op));
  }
  for (auto& [stream, works] : byStream) {
    for (CommWork& w : works) {
      w.ticket = w.comm->takeTicket();
      for (Op& op : w.collectives)
        recordEnqueued(op);
      for (Op& op : w.p2p)
        recordEnqueued(op);
    }
  }
  Status first;
  for (auto& [stream, works] : byStream) {
    if (stream == nullptr) {
      Status s = runWorks(works);
      if (first.ok()) first = s;
    } else {
      stream->enqueue(std::move(works));
    }
  }
  return first;
}

// One op as the only work of `works`, which keeps its vectors' room from call to call.
void fillWork(std::vector<CommWork>& works, Op&& op) {
  works.resize(1);
  CommWork& w = works[0];
  w.comm = op.comm;
  w.collectives.clear();
  w.p2p.clear();
  w.task = nullptr;
  std::vector<Op>& list = op.kind == OpKind::kCollective ? w.collectives : w.p2p;
  list.push_back(std::move(op));
  w.ticket = w.comm->takeTicket();
  recordEnqueued(list.back());
}

// A blocking call outside a group. A collective, the latency path, runs straight from its op; a
// send or receive runs as the only work of a list kept per thread, so that a call allocates
// nothing once the thread has made one.
Status runNow(Op&& op) {
  if (op.kind == OpKind::kCollective) {
    recordEnqueued(op);
    return runCollective(op);
  }
  thread_local std::vector<CommWork> works(1);
  fillWork(works, std::move(op));
  return runWorks(works);
}

// A call on a stream outside a group, in a batch the stream recycles.
Status enqueueNow(Op&& op) {
  weftStream_t stream = op.stream;
  weftStream::Batch batch = stream->takeBatch();
  fillWork(batch, std::move(op));
  stream->enqueue(std::move(batch));
  return okStatus();
}

// checkSelfPairs for the sends and receives of each work launch() makes (one communicator on
// one stream), which pair among themselves only.
Status checkEachCommSelfPairs(const std::vector<Op>& ops) {
  std::vector<std::pair<Communicator*, weftStream_t>> checked;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kCollective || op.peer != op.comm->rank()) continue;
    const std::pair work{op.comm, op.stream};
    if (std::find(checked.begin(), checked.end(), work) != checked.end()) continue;
    checked.push_back(work);
    std::vector<Op> same;
    for (const Op& o : ops) {
      if (o.comm == op.comm && o.stream == op.stream) same.push_back(o);
    }
    WEFT_RETURN_IF_ERROR(checkSelfPairs(same));
  }
  return okStatus();
}

}  // namespace

bool inGroup() {
  return tGroup.depth > 0;
}

void deferInit(Communicator* comm) {
  tGroup.inits.push_back(comm);
}

Status submitOp(Op&& op) {
  if (tGroup.depth > 0) {
    tGroup.ops.push_back(std::move(op));
    return okStatus();
  }
  if (op.kind != OpKind::kCollective && op.peer == op.comm->rank()) {
    WEFT_RETURN_IF_ERROR(checkSelfPairs({op}));  // alone, it cannot pair
  }
  return op.stream == nullptr ? runNow(std::move(op)) : enqueueNow(std::move(op));
}

Status submitTask(weftStream_t stream, Communicator* comm, std::function<Status()> task) {
  // As fillWork: the one work of a list that keeps its room.
  const auto fill = [&](std::vector<CommWork>& works) {
    works.resize(1);
    CommWork& w = works[0];
    w.comm = comm;
    w.collectives.clear();
    w.p2p.clear();
    w.task = std::move(task);
    w.ticket = comm->takeTicket();
  };
  if (stream == nullptr) {
    thread_local std::vector<CommWork> works;
    fill(works);
    return runWorks(works);
  }
  weftStream::Batch batch = stream->takeBatch();
  fill(batch);
  stream->enqueue(std::move(batch));
  return okStatus();
}

void noteGroupError(const Status& status) {
  if (tGroup.depth > 0 && tGroup.error.ok()) tGroup.error = status;
}

Status groupStart() {
  ++tGroup.depth;
  return okStatus();
}

Status groupEnd() {
  if (tGroup.depth == 0) return Status(weftInvalidUsage, "weftGroupEnd without weftGroupStart");
  if (--tGroup.depth > 0) return okStatus();
  GroupState g = std::move(tGroup);
  tGroup = GroupState();
  Status first = g.error;
  for (Communicator* c : g.inits) {
    Status s = c->waitUntilReady();
    if (first.ok()) first = s;
  }
  if (!first.ok()) return first;
  WEFT_RETURN_IF_ERROR(checkEachCommSelfPairs(g.ops));
  return launch(std::move(g.ops));
}

}  // namespace weft
