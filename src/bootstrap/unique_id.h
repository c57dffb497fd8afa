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
};

void encodeUniqueId(const UniqueIdData& data, weftUniqueId* id);
// Rejects ids that were not made by weftGetUniqueId (or are from another Weft version).
Status decodeUniqueId(const weftUniqueId& id, UniqueIdData* data);

// Random bytes from the kernel.
Status randomBytes(void* out, size_t bytes);

}  // namespace weft
