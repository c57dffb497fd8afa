// The system as a Graphviz drawing, laid out left to right so that it fits a screen: one box
// (cluster) per NUMA node holding its CPU and the PCIe tree below it, NVLinks as bold edges, a NIC
// as one node that names its ports.
#pragma once

#include <string>

#include "topology/system.h"

namespace weft::topo {

std::string writeDot(const System& system);

}  // namespace weft::topo
