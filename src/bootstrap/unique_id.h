// The contents of weftUniqueId: where the rendezvous root listens, the communicator's random
// tag, and the secret every connection must present.
#pragma once

#include <cstdint>

#include "src/base/status.h"
#include "src/bootstrap/wire.h"
#include "weft/weft.h"

namespace weft {

struct UniqueIdData {
  WireAddress root;
  Secret secret{};
  uint64_t commTag = 0;
  // Set when the id came from WEFT_COMM_ID: rank 0 starts the root during init.
  bool rootStartedByRank0 = false;
  // ... and listens on that address only, where it was written as a loopback address: no other
  // host could reach it anyway. Else on every interface: each host resolves a host name for
  // itself (Debian maps a host's own name to 127.0.1.1), and a numeric address may be one that
  // reaches rank 0's host without being its own (a load balancer's, NAT, a container's port).
  bool rootAtGivenAddress = false;
};

void encodeUniqueId(const UniqueIdData& data, weftUniqueId* id);
// Rejects ids that were not made by weftGetUniqueId (or are from another Weft version).
Status decodeUniqueId(const weftUniqueId& id, UniqueIdData* data);

// Random bytes from the kernel.
Status randomBytes(void* out, size_t bytes);

}  // namespace weft
