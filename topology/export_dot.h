// The system as a Graphviz drawing, laid out left to right so that it fits a screen: one box
// (cluster) per NUMA node holding its CPU and the PCIe tree below it, NVLinks as bold edges, a NIC
// as one node that names its ports. Rings, when given, are drawn over it as coloured arrows.
#pragma once

#include <string>
#include <vector>

#include "topology/system.h"

namespace weft::topo {

// A ring (or, across hosts, a chain) to draw: the nodes it visits in order, each once in a row.
struct DotRing {
  std::vector<int> nodes;
  bool closed = true;  // the last node leads back to the first (a ring within one host)
  std::string label;   // "ring 0", "rings 0-5"
};

std::string writeDot(const System& system, const std::vector<DotRing>& rings = {});

}  // namespace weft::topo
