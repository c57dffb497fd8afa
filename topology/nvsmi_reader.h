// Reads the matrix `nvidia-smi topo -m` prints: GPU x GPU and GPU x NIC path classes (X, NV#,
// PIX, PXB, PHB, NODE, SYS) and each GPU's CPU (and NUMA) affinity. The PCIe tree is inferred
// from the classes; NVLinks come from the NV# cells.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "topology/nvsmi_table.h"
#include "topology/system.h"

namespace weft::topo {

// Builds a system from a matrix. Errors name the file and the row or cell at fault.
Status parseNvsmiMatrix(std::string_view text, const std::string& name, System* out);

}  // namespace weft::topo
