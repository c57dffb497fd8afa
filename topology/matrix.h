// The table `nvidia-smi topo -m` prints, computed from a system: GPU x GPU and GPU x NIC path
// classes (NV# for NVLinks, else the PCIe class) and each GPU's CPU and NUMA affinity.
#pragma once

#include <string>
#include <vector>

#include "topology/system.h"

namespace weft::topo {

struct Matrix {
  std::vector<int> nodes;                       // GPUs, then NICs
  std::vector<std::string> labels;              // GPU0 ..., then NIC names
  std::vector<std::vector<std::string>> cells;  // "X", "NV12", "PIX", ...
  std::vector<std::string> cpuAffinity;         // GPU rows: "0-19,40-59" or "N/A"; NIC rows ""
  std::vector<std::string> numaAffinity;        // GPU rows: "0" or "N/A"; NIC rows ""
};

Matrix buildMatrix(const System& system);

// Tab-separated like nvidia-smi, with its legend when `legend` is set.
std::string formatMatrix(const Matrix& matrix, bool legend = true);

}  // namespace weft::topo
