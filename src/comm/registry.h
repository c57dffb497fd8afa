// The live communicators and their handles. A handle is a token, never the communicator's
// address: one used after weftCommDestroy stays unknown (weftInvalidArgument) even when a new
// communicator is allocated at the same address.
#pragma once

#include <functional>

#include "weft/weft.h"

namespace weft {

class Communicator;

// A new handle for comm, live until unregisterComm.
weftComm_t registerComm(Communicator* comm);
void unregisterComm(Communicator* comm);
// The communicator of a live handle; nullptr for a destroyed or made-up one.
Communicator* liveComm(weftComm_t handle);
// Calls fn on each live communicator, under the registry's lock: none goes away meanwhile, and
// fn must not register or unregister one.
void forEachLiveComm(const std::function<void(Communicator&)>& fn);

}  // namespace weft
