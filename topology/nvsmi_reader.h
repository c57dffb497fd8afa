// Reads the matrix `nvidia-smi topo -m` prints: GPU x GPU and GPU x NIC path classes (X, NV#,
// PIX, PXB, PHB, NODE, SYS) and each GPU's CPU (and NUMA) affinity. The PCIe tree is inferred
// from the classes; NVLinks come from the NV# cells.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "topology/system.h"

namespace weft::topo {

// The table as printed, before any interpretation.
struct MatrixTable {
  std::vector<std::string> columns;              // device names of the header, in order
  std::vector<std::string> rows;                 // row labels, in order
  std::vector<std::vector<std::string>> cells;   // [row][column]
  std::vector<std::string> cpuAffinity;          // per row; "" when the row has none
  std::vector<std::string> numaAffinity;         // per row; "" when absent
  bool hasCpuAffinity = false;
  bool hasNumaAffinity = false;
};

// Splits the text into the table; renames NICn columns by a "NIC Legend" when one follows.
Status parseMatrixTable(std::string_view text, const std::string& name, MatrixTable* out);

// Builds a system from a matrix. Errors name the file and the row or cell at fault.
Status parseNvsmiMatrix(std::string_view text, const std::string& name, System* out);

}  // namespace weft::topo
