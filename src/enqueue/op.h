// Op: one call as recorded by the API (a collective, a send or a receive), after its arguments
// were checked. Groups collect ops; the runner turns them into schedules.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/schedule.h"
#include "weft/weft.h"

namespace weft {

class Communicator;

enum class OpKind { kCollective, kSend, kRecv };

// The peer of a receive from any source (weftRecvAnySource).
constexpr int kAnySource = -1;

struct Op {
  OpKind kind = OpKind::kCollective;
  Communicator* comm = nullptr;
  weftStream_t stream = nullptr;
  CollArgs args;  // collectives; the all-to-allv pointers are set from vcounts when planned
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  weftDataType_t type = weftFloat32;
  weftRedOp_t redop = weftSum;
  int peer = -1;     // send and receive
  size_t count = 0;  // send and receive
  // A receive from any source (weftRecvAnySource, peer kAnySource): where the sender's rank goes
  // when it is done.
  bool anySource = false;
  int* source = nullptr;
  // All-to-allv: send counts, send displacements, receive counts, receive displacements.
  std::vector<size_t> vcounts;
  // Its record in the communicator's flight recorder (src/enqueue/record.h); 0 for none.
  uint64_t record = 0;
};

// op.args with the all-to-allv pointers aimed at op.vcounts (which moves with the op).
inline CollArgs argsOf(const Op& op) {
  CollArgs a = op.args;
  if (a.kind == CollKind::kAllToAllv && op.vcounts.size() == 4 * static_cast<size_t>(a.nranks)) {
    const size_t n = static_cast<size_t>(a.nranks);
    a.sendCounts = op.vcounts.data();
    a.sendDispls = op.vcounts.data() + n;
    a.recvCounts = op.vcounts.data() + 2 * n;
    a.recvDispls = op.vcounts.data() + 3 * n;
  }
  return a;
}

}  // namespace weft
