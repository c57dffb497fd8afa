// The set of live communicators, so a call with a destroyed or made-up handle gets an error
// instead of touching freed memory.
#pragma once

namespace weft {

class Communicator;

void registerComm(Communicator* comm);
void unregisterComm(Communicator* comm);
bool isLiveComm(const Communicator* comm);

}  // namespace weft
