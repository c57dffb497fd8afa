#include "topology/export_dot.h"

#include <cstdio>

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
      return "shape=diamond";
    case NodeKind::kPciDevice:
      return "shape=box, style=dashed";
  }
  return "shape=box";
}

}  // namespace

std::string writeDot(const System& s) {
  std::string out =
      "graph topology {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  out += "  label=" + quote(s.source + " (" + s.format + ")") + ";\n";
  char bw[32];
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    std::string label = s.label(static_cast<int>(i));
    if (n.kind == NodeKind::kCpu && !n.cpu.cpus.empty()) label += "\nCPUs " + n.cpu.cpus.toList();
    if (n.kind == NodeKind::kGpu && !n.pci.busId.empty()) label += "\n" + n.pci.busId;
    if (n.kind == NodeKind::kGpu && !n.gpu.model.empty()) label += "\n" + n.gpu.model;
    out += "  n" + std::to_string(i) + " [label=" + quote(label) + ", " + shape(n.kind) + "];\n";
  }
  for (const Link& l : s.links) {
    snprintf(bw, sizeof(bw), "%.0f GB/s", l.bw);
    std::string style;
    std::string label = bw;
    switch (l.kind) {
      case LinkKind::kNvlink:
        style = "color=\"#2e8b2e\", penwidth=3";
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
    out += "  n" + std::to_string(l.a) + " -- n" + std::to_string(l.b) + " [" + style +
           (label.empty() ? "" : ", label=" + quote(label)) + "];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace weft::topo
