// The system as a Graphviz drawing: CPUs as boxes, PCIe as the tree, NVLinks as bold edges.
#pragma once

#include <string>

#include "topology/system.h"

namespace weft::topo {

std::string writeDot(const System& system);

}  // namespace weft::topo
