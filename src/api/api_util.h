// Helpers of the C API layer: looking communicators up by handle (src/comm/registry.h), and
// turning a Status into a weftResult_t plus the message weftGetLastError returns.
#pragma once

#include "src/base/status.h"
#include "src/comm/communicator.h"
#include "weft/weft.h"

namespace weft {

// Records a failure for weftGetLastError (this thread's and comm's) and returns its code.
weftResult_t report(const Status& status, Communicator* comm = nullptr);

// A live communicator whose init has finished (waits for a non-blocking init). *out is set
// whenever the handle is live, also when the communicator is no longer usable.
Status lookupComm(weftComm_t handle, Communicator** out);
// The same, without waiting for init or requiring the communicator to be usable.
Status lookupCommAnyState(weftComm_t handle, Communicator** out);

}  // namespace weft
