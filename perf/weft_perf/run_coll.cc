#include "perf/weft_perf/run_coll.h"

namespace weft::perf {

weftResult_t runAllReduce(const CollCall& c) {
  return weftAllReduce(c.send, c.recv, c.count, c.type, c.op, c.comm, c.stream);
}

weftResult_t runAllGather(const CollCall& c) {
  return weftAllGather(c.send, c.recv, c.count, c.type, c.comm, c.stream);
}

weftResult_t runReduceScatter(const CollCall& c) {
  return weftReduceScatter(c.send, c.recv, c.count, c.type, c.op, c.comm, c.stream);
}

weftResult_t runBroadcast(const CollCall& c) {
  return weftBroadcast(c.send, c.recv, c.count, c.type, c.root, c.comm, c.stream);
}

weftResult_t runReduce(const CollCall& c) {
  return weftReduce(c.send, c.recv, c.count, c.type, c.op, c.root, c.comm, c.stream);
}

weftResult_t runAllToAll(const CollCall& c) {
  return weftAllToAll(c.send, c.recv, c.count, c.type, c.comm, c.stream);
}

weftResult_t runSendRecv(const CollCall& c) {
  int to = (c.rank + 1) % c.nranks;
  int from = (c.rank - 1 + c.nranks) % c.nranks;
  weftResult_t r = weftGroupStart();
  if (r != weftSuccess) return r;
  weftResult_t sent = weftSend(c.send, c.count, c.type, to, c.comm, c.stream);
  weftResult_t received = weftRecv(c.recv, c.count, c.type, from, c.comm, c.stream);
  // Always close the group, so a failed post does not leave this thread inside one.
  weftResult_t ended = weftGroupEnd();
  if (sent != weftSuccess) return sent;
  if (received != weftSuccess) return received;
  return ended;
}

weftResult_t runSend(const CollCall& c) {
  switch (sendRole(c.rank, c.nranks)) {
    case SendRole::kSender:
      return weftSend(c.send, c.count, c.type, c.rank + 1, c.comm, c.stream);
    case SendRole::kReceiver:
      return weftRecv(c.recv, c.count, c.type, c.rank - 1, c.comm, c.stream);
    case SendRole::kIdle:
      break;
  }
  return weftSuccess;
}

weftResult_t runColl(Coll coll, const CollCall& c) {
  switch (coll) {
    case Coll::kAllReduce:
      return runAllReduce(c);
    case Coll::kAllGather:
      return runAllGather(c);
    case Coll::kReduceScatter:
      return runReduceScatter(c);
    case Coll::kBroadcast:
      return runBroadcast(c);
    case Coll::kReduce:
      return runReduce(c);
    case Coll::kAllToAll:
      return runAllToAll(c);
    case Coll::kSendRecv:
      return runSendRecv(c);
    case Coll::kSend:
      return runSend(c);
  }
  return weftInvalidArgument;
}

}  // namespace weft::perf
