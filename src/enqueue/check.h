// Argument checks for every call, before anything is recorded or run: bad input gets a clear
// error code and message, never a crash.
#pragma once

#include "src/base/status.h"
#include "src/enqueue/op.h"

namespace weft {

// Checks op against its communicator: buffers, counts, type, operator, root or peer, and that
// in-place buffers alias exactly as the collective allows.
Status checkOp(const Op& op);

}  // namespace weft
