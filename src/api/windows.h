// The windows of the C API (src/api/windows.cc), for the communicator's destruction.
#pragma once

#include "src/comm/communicator.h"

namespace weft {

// Frees the windows of a communicator being destroyed (its operations have drained): their
// handles are dead from then on.
void dropWindowsOf(const Communicator* comm);

}  // namespace weft
