// The table `nvidia-smi topo -m` prints, computed from a system: GPU x GPU and GPU x NIC path
// classes (NV# for NVLinks, else the PCIe class) and each GPU's CPU and NUMA affinity. A system
// with no GPU gets its NICs and its PCI endpoints of unknown kind instead, each row with its
// affinity, and a line saying so. A legend says which device each column is (GPU0 and NIC0 are
// numbered by the model, not by the source).
#pragma once

#include <string>
#include <vector>

#include "topology/system.h"

namespace weft::topo {

struct Matrix {
  std::vector<int> nodes;                       // GPUs, then NICs (then unknown endpoints)
  std::vector<std::string> labels;              // GPU0 ..., NIC names, DEV0 ...
  std::vector<std::vector<std::string>> cells;  // "X", "NV12", "PIX", ...
  std::vector<std::string> cpuAffinity;         // GPU rows: "0-19,40-59" or "N/A"; NIC rows ""
  std::vector<std::string> numaAffinity;        // GPU rows: "0" or "N/A"; NIC rows ""
  std::string note;                             // one line when the system has no GPU; "" otherwise
  // Per column, which device it is: "NIC0: 0103:00:00.0", "usnic_0: 0000:07:00.0, interface eth4";
  // empty when the source gave no bus ids (an nvidia-smi matrix names its own columns).
  std::vector<std::string> legend;
};

Matrix buildMatrix(const System& system);

// Tab-separated like nvidia-smi, with its legend when `legend` is set; "" when there is nothing
// to tabulate. The note is not part of it (callers print it where it fits).
std::string formatMatrix(const Matrix& matrix, bool legend = true);

}  // namespace weft::topo
