// Settings that change what ranks exchange (the transport within a host, the algorithms, their
// chunking, tiers across hosts, the direct and single-copy paths, sockets per peer). Every rank
// of a communicator must hold the same: else one rank sends what its peer does not expect, or
// waits for what never comes. Each rank tells the others its own at init, and any difference
// fails init on every rank alike, naming the setting, two ranks and their values.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "src/base/status.h"
#include "src/comm/config.h"
#include "transports/transport.h"

namespace weft {

// (name, value) for each setting that must agree, in a fixed order; the name is what a user
// sets (the environment variable, and the weftConfig_t field where there is one).
std::vector<std::pair<std::string, std::string>> agreedSettings(const CommConfig& config);

// One rank's settings as sent to the others, and the check of every rank's against rank 0's.
Blob encodeSettings(const CommConfig& config);
Status checkSettingsAgree(const std::vector<Blob>& all);

}  // namespace weft
