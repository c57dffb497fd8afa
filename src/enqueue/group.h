// Launching ops: right away, or, between weftGroupStart and weftGroupEnd, all together at the
// end so that sends and receives complete without deadlock in any posting order. Each thread has
// its own group state, as in NCCL.
#pragma once

#include <functional>

#include "src/base/status.h"
#include "src/enqueue/op.h"

namespace weft {

class Communicator;

// Runs op now (or queues it on its stream), or records it when a group is open.
Status submitOp(Op&& op);
// A host call in comm's issue order from now: run in its turn on this thread (NULL stream), its
// error returned; or queued on the stream, after what the stream holds, its error the stream's
// (weftStreamSynchronize).
Status submitTask(weftStream_t stream, Communicator* comm, std::function<Status()> task);
// Inside a group, a communicator's init is started in the background and waited for at the end.
bool inGroup();
void deferInit(Communicator* comm);

// A call inside a group failed: the group reports it at its end and runs nothing.
void noteGroupError(const Status& status);

Status groupStart();
Status groupEnd();

}  // namespace weft
