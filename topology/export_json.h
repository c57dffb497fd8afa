// The system as JSON, for programs: nodes with their attributes, links with kinds and
// bandwidths, the nvidia-smi style matrix, and notes.
#pragma once

#include <string>

#include "topology/system.h"

namespace weft::topo {

std::string writeJson(const System& system);

}  // namespace weft::topo
