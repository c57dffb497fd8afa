#include "src/enqueue/plan.h"

#include "collectives/cost_model.h"
#include "collectives/datatype.h"
#include "src/base/log.h"
#include "src/comm/communicator.h"

namespace weft {
namespace {

char* bytesOf(const void* p) {
  return static_cast<char*>(const_cast<void*>(p));
}

// The size the cost model prices: NCCL's count in bytes; for all-to-allv the average block.
size_t messageBytes(const CollArgs& a, size_t elemSize) {
  if (a.kind == CollKind::kAllToAllv) {
    return sendBufferCount(a) / static_cast<size_t>(a.nranks) * elemSize;
  }
  return a.count * elemSize;
}

}  // namespace

void Phase::finish() const {
  if (averageBuffer != nullptr && averageCount > 0) {
    finishAverage(averageBuffer, averageCount, type, averageDivisor);
  }
}

Status planCollective(Communicator& comm, const Op& op, Phase* out) {
  const CollArgs a = argsOf(op);
  const size_t es = typeSize(op.type);
  const bool reduces = a.kind == CollKind::kReduce || a.kind == CollKind::kAllReduce ||
                       a.kind == CollKind::kReduceScatter;
  const AlgoChoice choice =
      chooseAlgo(a.kind, messageBytes(a, es), es, a.nranks, comm.linkModel(), comm.algoOverride());
  *out = Phase();
  WEFT_RETURN_IF_ERROR(buildSchedule(choice.algo, a, comm.algoParams(es), &out->schedule));
  const Schedule& s = out->schedule;
  // A buffer this rank may leave NULL (a non-root's) gets no room, so a stray step is caught.
  auto view = [es](const void* p, size_t count) {
    return BufferView{bytesOf(p), p == nullptr ? 0 : count, es};
  };
  out->buffers = {view(op.sendbuff, sendBufferCount(a)), view(op.recvbuff, recvBufferCount(a)),
                  BufferView{comm.scratch(s.scratchCount * es), s.scratchCount, es}};
  out->type = op.type;
  if (reduces) {
    out->reduce = reduceFunction(op.type, op.redop);
    bool getsResult = a.kind != CollKind::kReduce || a.rank == a.root;
    if (op.redop == weftAvg && getsResult) {
      out->averageBuffer = op.recvbuff;
      out->averageCount = recvBufferCount(a);
      out->averageDivisor = a.nranks;
    }
  }
  out->what =
      strprintf("%s #%llu (%zu x %s%s%s, %s)", collName(a.kind),
                static_cast<unsigned long long>(comm.nextSequence()), a.count, typeName(op.type),
                reduces ? " " : "", reduces ? opName(op.redop) : "", algoName(choice.algo));
  WEFT_TRACE(kColl, "%s: %zu steps, predicted %.1f us", out->what.c_str(), s.steps.size(),
             choice.predictedUs);
  return okStatus();
}

Status planPointToPoint(Communicator& comm, const std::vector<Op>& ops, Phase* out) {
  *out = Phase();
  out->buffers.resize(3);  // the collective buffers, unused here
  std::vector<size_t> selfSends;
  std::vector<size_t> selfRecvs;
  for (const Op& op : ops) {
    const size_t es = typeSize(op.type);
    const void* p = op.kind == OpKind::kSend ? op.sendbuff : op.recvbuff;
    const auto id = static_cast<BufId>(out->buffers.size());
    out->buffers.push_back(BufferView{bytesOf(p), op.count, es});
    if (op.peer == comm.rank()) {
      (op.kind == OpKind::kSend ? selfSends : selfRecvs).push_back(id);
    } else if (op.kind == OpKind::kSend) {
      out->schedule.send(op.peer, Ref{id, 0}, op.count);
    } else {
      out->schedule.recv(op.peer, Ref{id, 0}, op.count);
    }
  }
  // Sends to oneself pair with receives from oneself in posting order.
  if (selfSends.size() != selfRecvs.size()) {
    return errorf(weftInvalidUsage, "%zu sends to self but %zu receives from self in one group",
                  selfSends.size(), selfRecvs.size());
  }
  for (size_t i = 0; i < selfSends.size(); ++i) {
    const BufferView& from = out->buffers[selfSends[i]];
    const BufferView& to = out->buffers[selfRecvs[i]];
    if (from.count * from.elemSize != to.count * to.elemSize) {
      return errorf(weftInvalidUsage, "send to self of %zu bytes meets a receive of %zu bytes",
                    from.count * from.elemSize, to.count * to.elemSize);
    }
    out->schedule.copy(Ref{static_cast<BufId>(selfSends[i]), 0},
                       Ref{static_cast<BufId>(selfRecvs[i]), 0}, from.count);
  }
  out->what = strprintf("send/recv group #%llu (%zu calls)",
                        static_cast<unsigned long long>(comm.nextSequence()), ops.size());
  return okStatus();
}

}  // namespace weft
