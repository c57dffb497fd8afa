// The rendezvous root: a thread that collects every rank's RankInfo and hands the whole table
// to all of them, then exits. Connections that do not present the communicator's secret are
// refused and logged; they never stop the others from meeting.
#pragma once

#include <cstdint>

#include "src/base/socket.h"
#include "src/base/status.h"
#include "src/bootstrap/wire.h"

namespace weft {

// Listens on address (port 0: any free port) and returns once listening; *bound is where.
// nranks > 0 (a launch, whose size rank 0 knows) refuses hellos that claim another size, as
// strangers; 0 takes the first admitted hello's.
Status startRoot(const SockAddr& address, const Secret& secret, uint64_t commTag, int64_t timeoutMs,
                 int nranks, SockAddr* bound);

}  // namespace weft

namespace weft {

struct UniqueIdData;

// A new communicator id with its root already listening on this host's chosen interface
// (WEFT_SOCKET_IFNAME), a fresh random secret and tag.
Status newRendezvous(int64_t timeoutMs, UniqueIdData* out);

}  // namespace weft
