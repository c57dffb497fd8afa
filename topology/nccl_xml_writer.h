// Writes a system as NCCL topology XML, which NCCL reads with NCCL_TOPO_FILE and Weft reads back
// into the same graph. Weft's additions NCCL ignores: <cpu package=...> and
// <pci hostbridge=...> (the root complex a top-level device sits under).
#pragma once

#include <string>

#include "topology/system.h"

namespace weft::topo {

std::string writeNcclXml(const System& system);

}  // namespace weft::topo
