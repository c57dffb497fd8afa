// Helpers of the C API layer: handles to communicators, and turning a Status into a
// weftResult_t plus the message weftGetLastError returns.
#pragma once

#include "src/base/status.h"
#include "src/comm/communicator.h"
#include "weft/weft.h"

namespace weft {

inline Communicator* unwrap(weftComm_t handle) {
  return reinterpret_cast<Communicator*>(handle);
}
inline weftComm_t wrap(Communicator* comm) {
  return reinterpret_cast<weftComm_t>(comm);
}

// Records a failure for weftGetLastError (this thread's and comm's) and returns its code.
weftResult_t report(const Status& status, Communicator* comm = nullptr);

// A live communicator whose init has finished (waits for a non-blocking init). *out is set
// whenever the handle is live, also when the communicator is no longer usable.
Status lookupComm(weftComm_t handle, Communicator** out);
// The same, without waiting for init or requiring the communicator to be usable.
Status lookupCommAnyState(weftComm_t handle, Communicator** out);

}  // namespace weft
