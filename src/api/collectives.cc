// The collective and point-to-point calls: each checks its arguments, records an Op, and hands
// it to the group/launch machinery.
#include <vector>

#include "src/api/api_util.h"
#include "src/enqueue/check.h"
#include "src/enqueue/group.h"

namespace weft {
namespace {

Op collectiveOp(CollKind kind, const void* sendbuff, void* recvbuff, size_t count,
                weftDataType_t type, weftRedOp_t op, int root, weftStream_t stream) {
  Op o;
  o.kind = OpKind::kCollective;
  o.stream = stream;
  o.args.kind = kind;
  o.args.count = count;
  o.args.root = root;
  o.sendbuff = sendbuff;
  o.recvbuff = recvbuff;
  o.type = type;
  o.redop = op;
  return o;
}

Op pointToPointOp(OpKind kind, size_t count, weftDataType_t type, int peer, weftStream_t stream) {
  Op o;
  o.kind = kind;
  o.stream = stream;
  o.count = count;
  o.type = type;
  o.peer = peer;
  return o;
}

// Checks the op and runs or records it. Calls that move nothing return at once, as in NCCL,
// but for an all-to-allv, whose counts are each rank's own: one rank may move nothing while the
// others exchange, and it still takes its turn (its peers count the call and may wait for it).
weftResult_t submit(Op op, weftComm_t handle, const char* name) {
  Communicator* comm = nullptr;
  Status s = lookupComm(handle, &comm);
  if (!s.ok()) return report(s.withContext(name), comm);
  op.comm = comm;
  op.args.rank = comm->rank();
  op.args.nranks = comm->nranks();
  s = checkOp(op);
  if (!s.ok()) return report(s, comm);
  bool empty = op.kind == OpKind::kCollective
                   ? op.args.kind != CollKind::kBarrier && op.args.kind != CollKind::kAllToAllv &&
                         sendBufferCount(argsOf(op)) + recvBufferCount(argsOf(op)) == 0
                   : op.count == 0;
  if (empty) return weftSuccess;
  return report(submitOp(std::move(op)), comm);
}

}  // namespace
}  // namespace weft

using weft::collectiveOp;
using weft::CollKind;
using weft::pointToPointOp;
using weft::submit;

extern "C" {

weftResult_t weftBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, int root, weftComm_t comm,
                           weftStream_t stream) {
  return submit(collectiveOp(CollKind::kBroadcast, sendbuff, recvbuff, count, datatype, weftSum,
                             root, stream),
                comm, "weftBroadcast");
}

weftResult_t weftReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                        weftRedOp_t op, int root, weftComm_t comm, weftStream_t stream) {
  return submit(
      collectiveOp(CollKind::kReduce, sendbuff, recvbuff, count, datatype, op, root, stream), comm,
      "weftReduce");
}

weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                           weftStream_t stream) {
  return submit(
      collectiveOp(CollKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, 0, stream), comm,
      "weftAllReduce");
}

weftResult_t weftReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                               weftStream_t stream) {
  return submit(collectiveOp(CollKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op,
                             0, stream),
                comm, "weftReduceScatter");
}

weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           weftDataType_t datatype, weftComm_t comm, weftStream_t stream) {
  return submit(collectiveOp(CollKind::kAllGather, sendbuff, recvbuff, sendcount, datatype, weftSum,
                             0, stream),
                comm, "weftAllGather");
}

weftResult_t weftAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          weftDataType_t datatype, weftComm_t comm, weftStream_t stream) {
  return submit(
      collectiveOp(CollKind::kAllToAll, sendbuff, recvbuff, count, datatype, weftSum, 0, stream),
      comm, "weftAllToAll");
}

weftResult_t weftAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                           void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                           weftDataType_t datatype, weftComm_t comm, weftStream_t stream) {
  weft::Op op =
      collectiveOp(CollKind::kAllToAllv, sendbuff, recvbuff, 0, datatype, weftSum, 0, stream);
  int n = 0;
  if (weftCommCount(comm, &n) != weftSuccess) return submit(std::move(op), comm, "weftAllToAllv");
  if (sendcounts != nullptr && sdispls != nullptr && recvcounts != nullptr && rdispls != nullptr) {
    for (const size_t* a : {sendcounts, sdispls, recvcounts, rdispls}) {
      op.vcounts.insert(op.vcounts.end(), a, a + n);
    }
  }
  return submit(std::move(op), comm, "weftAllToAllv");
}

weftResult_t weftSend(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream) {
  weft::Op op = pointToPointOp(weft::OpKind::kSend, count, datatype, peer, stream);
  op.sendbuff = sendbuff;
  return submit(std::move(op), comm, "weftSend");
}

weftResult_t weftRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream) {
  weft::Op op = pointToPointOp(weft::OpKind::kRecv, count, datatype, peer, stream);
  op.recvbuff = recvbuff;
  return submit(std::move(op), comm, "weftRecv");
}

weftResult_t weftRecvAnySource(void* recvbuff, size_t count, weftDataType_t datatype, int* source,
                               weftComm_t comm, weftStream_t stream) {
  weft::Op op = pointToPointOp(weft::OpKind::kRecv, count, datatype, weft::kAnySource, stream);
  op.recvbuff = recvbuff;
  op.anySource = true;
  op.source = source;
  return submit(std::move(op), comm, "weftRecvAnySource");
}

weftResult_t weftBarrier(weftComm_t comm, weftStream_t stream) {
  return submit(
      collectiveOp(CollKind::kBarrier, nullptr, nullptr, 0, weftUint8, weftSum, 0, stream), comm,
      "weftBarrier");
}

weftResult_t weftGroupStart(void) {
  return weft::report(weft::groupStart());
}

weftResult_t weftGroupEnd(void) {
  return weft::report(weft::groupEnd());
}

}  // extern "C"
