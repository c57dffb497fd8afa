// Builds a system from a loaded hwloc topology (this machine, or an hwloc XML file): NUMA nodes
// with their packages, cores and caches, the PCI tree down to GPUs and NICs (PCIe switches as
// NCCL sees them: upstream ports, with root and downstream ports folded away), the OS devices
// naming network ports, and the NVLinkBandwidth distances. Only built with hwloc.
#pragma once

#include <string>

#include "src/base/status.h"
#include "topology/system.h"

struct hwloc_topology;

namespace weft::topo {

Status systemFromHwloc(struct hwloc_topology* topology, const std::string& name, System* out);

// The compute capability (x10) of a GPU model name ("Tesla P100-SXM2-16GB" -> 60); 0 if unknown.
int smFromGpuModel(const std::string& model);

}  // namespace weft::topo
