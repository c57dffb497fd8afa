// The system as JSON, for programs: nodes with their attributes, links with kinds and
// bandwidths, the nvidia-smi style matrix, and notes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topology/system.h"

namespace weft::topo {

std::string writeJson(const System& system);

// A bandwidth as JSON: its GB/s, or null from kLocalBw up, the model's stand-in for shared
// memory and links nothing limits, which is no measured figure.
nlohmann::json bandwidthJson(double gbs);

}  // namespace weft::topo
