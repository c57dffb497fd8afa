// The table `nvidia-smi topo -m` prints, split into its header, rows, cells and affinity
// columns (tabs or blanks, as nvidia-smi versions print them), before any interpretation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace weft::topo {

// The table as printed, before any interpretation.
struct MatrixTable {
  std::vector<std::string> columns;             // device names of the header, in order
  std::vector<std::string> rows;                // row labels, in order
  std::vector<std::vector<std::string>> cells;  // [row][column]
  std::vector<std::string> cpuAffinity;         // per row; "" when the row has none
  std::vector<std::string> numaAffinity;        // per row; "" when absent
  bool hasCpuAffinity = false;
  bool hasNumaAffinity = false;
};

// Splits the text into the table; renames NICn columns by a "NIC Legend" when one follows.
Status parseMatrixTable(std::string_view text, const std::string& name, MatrixTable* out);

}  // namespace weft::topo
