// Argument checks for every call, before anything is recorded or run: bad input gets a clear
// error code and message, never a crash.
#pragma once

#include <vector>

#include "src/base/status.h"
#include "src/enqueue/op.h"

namespace weft {

// Checks op against its communicator: buffers, counts, type, operator, root or peer, and that
// in-place buffers alias exactly as the collective allows.
Status checkOp(const Op& op);

// Sends to oneself pair with receives from oneself, in posting order and of equal sizes, among
// one communicator's sends and receives of one group (or one call outside a group). Checked
// before anything runs, so a mismatch leaves the communicator usable.
Status checkSelfPairs(const std::vector<Op>& ops);

}  // namespace weft
