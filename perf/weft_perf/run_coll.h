// One weft call per collective, with nccl-tests' buffer arguments.
#pragma once

#include <cstddef>

#include "perf/weft_perf/coll.h"
#include "weft/weft.h"

namespace weft::perf {

struct CollCall {
  const void* send;
  void* recv;
  size_t count;  // CollCounts::paramCount
  weftDataType_t type;
  weftRedOp_t op;
  int root;
  int rank;
  int nranks;
  weftComm_t comm;
  weftStream_t stream;  // NULL: blocking
};

weftResult_t runAllReduce(const CollCall& c);
weftResult_t runAllGather(const CollCall& c);
weftResult_t runReduceScatter(const CollCall& c);
weftResult_t runBroadcast(const CollCall& c);
weftResult_t runReduce(const CollCall& c);
weftResult_t runAllToAll(const CollCall& c);
// Rank r sends to r+1 and receives from r-1 (mod nranks), in one group.
weftResult_t runSendRecv(const CollCall& c);
weftResult_t runSend(const CollCall& c);

weftResult_t runColl(Coll coll, const CollCall& c);

}  // namespace weft::perf
