#include "topology/matrix.h"

#include <algorithm>

#include "src/base/status.h"
#include "topology/paths.h"

namespace weft::topo {

namespace {

// Why the table has no GPU: a file does not name one, or this machine has none.
std::string noGpuNote(const System& s, size_t nics, size_t unknown) {
  const char* where = s.discovered ? "on this machine" : "in this file";
  if (nics == 0 && unknown == 0) {
    return strprintf("No GPU, NIC or PCI device %s (%d NUMA node(s) only): no table.", where,
                     s.count(NodeKind::kCpu));
  }
  std::string out = std::string(nics == 0 ? "No GPU or NIC " : "No GPU ") + where;
  if (unknown > 0) {
    out += strprintf(
        ": its %zu PCI endpoint(s) have no class (NCCL reads it from the running machine), so "
        "the table shows them as DEV0..DEV%zu",
        unknown, unknown - 1);
    if (nics > 0) out += strprintf(" after the %zu NIC(s)", nics);
  } else {
    if (!s.discovered) out += " (a CPU-only machine)";
    out += strprintf(": the table shows its %zu NIC(s)", nics);
  }
  return out + ", each with the CPUs and NUMA node it hangs from.";
}

// "NIC0: 0103:00:00.0": the column's bus id, and for a NIC the names its ports go by.
std::string legendLine(const System& s, int node, const std::string& label) {
  const Node& n = s.nodes[node];
  std::string out = label + ": ";
  if (!n.pci.busId.empty()) {
    out += n.pci.busId;
  } else {
    out += n.isVirtual ? "no PCI device (virtual interface)" : "bus id unknown";
  }
  if (n.kind == NodeKind::kPciDevice) out += ", kind unknown";
  std::vector<std::string> said{label};  // each name once
  auto add = [&](const char* what, const std::string& name) {
    if (name.empty() || std::find(said.begin(), said.end(), name) != said.end()) return;
    said.push_back(name);
    out += std::string(", ") + what + " " + name;
  };
  for (int net : s.netsOf(node)) {
    const Node& port = s.nodes[net];
    add("port", port.name);
    add("verbs device", port.net.rdmaDevice);
    add("interface", port.net.ifname);
  }
  return out;
}

}  // namespace

Matrix buildMatrix(const System& s) {
  Matrix m;
  std::vector<int> gpus = s.gpus(), nics = s.nics();
  // Without a GPU the endpoints the file leaves unclassified are what it does say.
  std::vector<int> unknown;
  if (gpus.empty()) unknown = s.nodesOf(NodeKind::kPciDevice);
  m.nodes = gpus;
  m.nodes.insert(m.nodes.end(), nics.begin(), nics.end());
  m.nodes.insert(m.nodes.end(), unknown.begin(), unknown.end());
  if (gpus.empty()) m.note = noGpuNote(s, nics.size(), unknown.size());
  // The nvidia-smi reader makes bus ids up (fffe:*); the names are the file's own.
  bool busIds = s.format != "nvidia-smi topo -m";
  int devices = 0;
  for (int a : m.nodes) {
    const Node& node = s.nodes[a];
    bool bare = node.kind == NodeKind::kPciDevice;
    m.labels.push_back(bare ? "DEV" + std::to_string(devices++) : node.name);
    if (busIds) m.legend.push_back(legendLine(s, a, m.labels.back()));
    std::vector<std::string> row;
    for (int b : m.nodes) {
      if (a == b) {
        row.push_back("X");
        continue;
      }
      bool bothGpus = node.kind == NodeKind::kGpu && s.nodes[b].kind == NodeKind::kGpu;
      int nv = bothGpus ? nvlinkCount(s, a, b) : 0;
      row.push_back(nv > 0 ? "NV" + std::to_string(nv) : toString(pcieClass(s, a, b)));
    }
    m.cells.push_back(row);
    // As nvidia-smi: affinity for GPU rows; with no GPU, for every row instead.
    if (node.kind == NodeKind::kGpu || gpus.empty()) {
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
  if (m.labels.empty()) return out;
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
    if (!m.legend.empty()) {
      out += "\nDevice Legend:\n";
      for (const std::string& d : m.legend)
        out += "  " + d + "\n";
    }
  }
  return out;
}

}  // namespace weft::topo
