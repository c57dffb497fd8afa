// The human-readable description of a system: what it is made of and how it is joined.
#pragma once

#include <string>

#include "topology/system.h"

namespace weft::topotool {

std::string describeSystem(const topo::System& system);

}  // namespace weft::topotool
