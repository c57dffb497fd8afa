#include "topology/matrix.h"

#include "topology/paths.h"

namespace weft::topo {

Matrix buildMatrix(const System& s) {
  Matrix m;
  for (int g : s.gpus())
    m.nodes.push_back(g);
  for (int n : s.nics())
    m.nodes.push_back(n);
  for (int a : m.nodes) {
    m.labels.push_back(s.nodes[a].name);
    std::vector<std::string> row;
    for (int b : m.nodes) {
      if (a == b) {
        row.push_back("X");
        continue;
      }
      bool gpus = s.nodes[a].kind == NodeKind::kGpu && s.nodes[b].kind == NodeKind::kGpu;
      int nv = gpus ? nvlinkCount(s, a, b) : 0;
      row.push_back(nv > 0 ? "NV" + std::to_string(nv) : toString(pcieClass(s, a, b)));
    }
    m.cells.push_back(row);
    if (s.nodes[a].kind == NodeKind::kGpu) {
      int cpu = s.cpuOf(a);
      bool known = cpu >= 0 && !s.nodes[cpu].cpu.cpus.empty();
      m.cpuAffinity.push_back(known ? s.nodes[cpu].cpu.cpus.toList() : "N/A");
      m.numaAffinity.push_back(cpu >= 0 && s.nodes[cpu].cpu.numaId >= 0
                                   ? std::to_string(s.nodes[cpu].cpu.numaId)
                                   : "N/A");
    } else {
      m.cpuAffinity.push_back("");
      m.numaAffinity.push_back("");
    }
  }
  return m;
}

std::string formatMatrix(const Matrix& m, bool legend) {
  std::string out;
  for (const std::string& l : m.labels)
    out += "\t" + l;
  out += "\tCPU Affinity\tNUMA Affinity\n";
  for (size_t r = 0; r < m.labels.size(); ++r) {
    out += m.labels[r];
    for (const std::string& c : m.cells[r])
      out += "\t" + (c == "X" ? std::string(" X ") : c);
    out += "\t" + m.cpuAffinity[r] + "\t" + m.numaAffinity[r] + "\n";
  }
  if (legend) {
    out +=
        "\nLegend:\n"
        "  X    = the device itself\n"
        "  NV#  = a bond of # NVLinks (directly or through NVSwitches)\n"
        "  PIX  = through at most one PCIe switch\n"
        "  PXB  = through several PCIe switches, not through a host bridge\n"
        "  PHB  = through a PCIe host bridge (the CPU)\n"
        "  NODE = through the interconnect between host bridges of one NUMA node\n"
        "  SYS  = through the interconnect between NUMA nodes (QPI/UPI/Infinity Fabric)\n";
  }
  return out;
}

}  // namespace weft::topo
