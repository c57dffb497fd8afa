// Traffic: payload bytes a rank moved for its running operation, which the communicator files
// under the operation's kind when it ends (weftCommGetStats). Messages count once each, when
// done; shared-memory paths count what they write for their peers to read and what they read of
// their peers' data. Headers, padding and flags are not payload.
#pragma once

#include <cstdint>

namespace weft {

struct Traffic {
  uint64_t sent = 0;
  uint64_t received = 0;
};

}  // namespace weft
