#include "topology/export_dot.h"

#include <cstdio>
#include <map>

namespace weft::topo {
namespace {

// A DOT string: quotes and backslashes escaped, and a newline written as DOT's "\n" line
// break (escaping a "\n" already in the text would show a literal backslash-n instead).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const char* shape(NodeKind k) {
  switch (k) {
    case NodeKind::kCpu:
      return "shape=box3d, style=filled, fillcolor=\"#dde8f5\"";
    case NodeKind::kGpu:
      return "shape=box, style=filled, fillcolor=\"#c9f0c9\"";
    case NodeKind::kNic:
      return "shape=box, style=filled, fillcolor=\"#f5e3c0\"";
    case NodeKind::kNet:
      return "shape=ellipse, style=filled, fillcolor=\"#fff6dd\"";
    case NodeKind::kNvSwitch:
      return "shape=hexagon, style=filled, fillcolor=\"#b7e3b7\"";
    case NodeKind::kHostBridge:
      return "shape=trapezium";
    case NodeKind::kPciSwitch:
      return "shape=box, style=rounded";
    case NodeKind::kPciDevice:
      return "shape=box, style=dashed";
  }
  return "shape=box";
}

// A NIC's label: its name, then each port by the name it goes by (when that is not the NIC's)
// and its speed (when known). The ports are not drawn apart: they are part of the NIC.
std::string nicLabel(const System& s, int nic) {
  std::string label = s.nodes[nic].name;
  for (int net : s.netsOf(nic)) {
    const Node& port = s.nodes[net];
    std::string line = port.name == label ? "" : "port " + port.name;
    if (port.net.speedMbps > 0) {
      char speed[32];
      snprintf(speed, sizeof(speed), "%g Gb/s", port.net.speedMbps / 1000.0);
      line += (line.empty() ? "" : " ") + std::string(speed);
    }
    if (!line.empty()) label += "\n" + line;
  }
  return label;
}

// A node's label, on short lines so that it stays narrow.
std::string nodeLabel(const System& s, int i) {
  const Node& n = s.nodes[i];
  switch (n.kind) {
    case NodeKind::kCpu:
      return s.label(i) + (n.cpu.cpus.empty() ? "" : "\nCPUs " + n.cpu.cpus.toList());
    case NodeKind::kGpu:
      return n.name + (n.pci.busId.empty() ? "" : "\n" + n.pci.busId) +
             (n.gpu.model.empty() ? "" : "\n" + n.gpu.model);
    case NodeKind::kNic:
      return nicLabel(s, i);
    case NodeKind::kHostBridge:
      return "host bridge\n" + n.name;
    case NodeKind::kPciSwitch:
      return "PCIe switch\n" + n.pci.busId;
    case NodeKind::kPciDevice:
      return "PCI device\n" + n.pci.busId;
    default:
      return s.label(i);
  }
}

std::string nodeLine(const System& s, int i, const std::string& indent) {
  return indent + "n" + std::to_string(i) + " [label=" + quote(nodeLabel(s, i)) + ", " +
         shape(s.nodes[i].kind) + "];\n";
}

// A link, parent first: the layout puts an edge's first node to the left of its second, so the
// PCIe tree grows from the CPUs rightwards.
std::string linkLine(const System& s, const Link& l) {
  char bw[32];
  snprintf(bw, sizeof(bw), "%.0f GB/s", l.bw);
  std::string style;
  std::string label = bw;
  switch (l.kind) {
    case LinkKind::kNvlink:
      style = "color=\"#2e8b2e\", penwidth=3";
      // Between peers: GPUs stay in one column, so that a mesh does not widen the drawing.
      if (s.nodes[l.a].kind == NodeKind::kGpu && s.nodes[l.b].kind == NodeKind::kGpu)
        style += ", constraint=false";
      label = "NV" + std::to_string(l.nvlinks) + " " + bw;
      break;
    case LinkKind::kCpuInterconnect:
      style = "color=\"#3060a0\", style=dashed";
      break;
    case LinkKind::kNetwork:
    case LinkKind::kLocal:
      style = "color=gray";
      label = "";
      break;
    case LinkKind::kPcie:
      style = "color=black";
      if (l.bw >= 1000) label = "";
      break;
  }
  bool down = s.nodes[l.a].parent == l.b;  // the link goes from child a up to its parent b
  int from = down ? l.b : l.a, to = down ? l.a : l.b;
  return "  n" + std::to_string(from) + " -- n" + std::to_string(to) + " [" + style +
         (label.empty() ? "" : ", label=" + quote(label)) + "];\n";
}

// A ring's hops as arrows in its own colour, each labelled; they do not move the layout. The label
// is an xlabel: dot (2.43) fails ("trouble in init_rank") on labelled constraint=false edges
// between clusters.
std::string ringLines(const DotRing& r, const char* color) {
  std::string out;
  size_t n = r.nodes.size();
  if (n < 2) return out;  // ranks all in one node: no hop to draw
  size_t hops = r.closed ? n : n - 1;
  for (size_t i = 0; i < hops && n > 0; ++i) {
    out += "  n" + std::to_string(r.nodes[i]) + " -- n" + std::to_string(r.nodes[(i + 1) % n]) +
           " [color=\"" + color + "\", fontcolor=\"" + color +
           "\", penwidth=2, dir=forward, constraint=false, xlabel=" + quote(r.label) + "];\n";
  }
  return out;
}

}  // namespace

std::string writeDot(const System& s, const std::vector<DotRing>& rings) {
  // Left to right: a box has many leaves (GPUs, NICs) but a shallow PCIe tree, so the leaves
  // stack downwards and the width is the depth of the tree.
  std::string out = "graph topology {\n";
  out += "  rankdir=LR;\n  ranksep=0.35;\n  nodesep=0.15;\n";
  out += "  node [fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  out += "  label=" + quote(s.source + " (" + s.format + ")") + ";\n";
  // Each NUMA node's box holds its CPU and the devices below it; the rest (the NVSwitch fabric,
  // devices with no CPU above) stand outside. A NIC's ports are drawn as part of the NIC.
  std::map<int, std::vector<int>> byCpu;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    int node = static_cast<int>(i);
    if (s.nodes[i].kind != NodeKind::kNet) byCpu[s.cpuOf(node)].push_back(node);
  }
  for (const auto& [cpu, members] : byCpu) {
    if (cpu < 0) continue;
    int numa = s.nodes[cpu].cpu.numaId;
    out += "  subgraph cluster_numa" + std::to_string(cpu) +
           " {\n    label=" + quote("NUMA " + std::to_string(numa)) +
           ";\n    style=rounded;\n    color=\"#8fa8c8\";\n";
    for (int i : members)
      out += nodeLine(s, i, "    ");
    out += "  }\n";
  }
  for (int i : byCpu[-1])
    out += nodeLine(s, i, "  ");
  for (const Link& l : s.links) {
    if (s.nodes[l.a].kind != NodeKind::kNet && s.nodes[l.b].kind != NodeKind::kNet)
      out += linkLine(s, l);
  }
  static const char* const kColors[] = {"#d62728", "#1f77b4", "#9467bd", "#ff7f0e",
                                        "#17becf", "#8c564b", "#e377c2", "#7f7f7f"};
  for (size_t r = 0; r < rings.size(); ++r)
    out += ringLines(rings[r], kColors[r % (sizeof(kColors) / sizeof(kColors[0]))]);
  out += "}\n";
  return out;
}

}  // namespace weft::topo
