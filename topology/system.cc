#include "topology/system.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "topology/bandwidth.h"

namespace weft::topo {

int System::addNode(Node node) {
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

int System::connect(int a, int b, LinkKind kind, double bw) {
  if (kind == LinkKind::kNvlink) {
    int existing = linkBetween(a, b, kind);
    if (existing >= 0) {
      links[existing].bw += bw;
      return existing;
    }
  }
  Link link;
  link.a = a;
  link.b = b;
  link.kind = kind;
  link.bw = bw;
  links.push_back(link);
  int id = static_cast<int>(links.size()) - 1;
  nodes[a].links.push_back(id);
  nodes[b].links.push_back(id);
  return id;
}

int System::attach(int child, int parent, LinkKind kind, double bw) {
  nodes[child].parent = parent;
  return connect(child, parent, kind, bw);
}

int System::addNvlinks(int a, int b, int count, int generation, double bw) {
  int id = connect(a, b, LinkKind::kNvlink, bw);
  links[id].nvlinks += count;
  if (generation > 0) links[id].nvlinkGen = generation;
  return id;
}

std::vector<int> System::nodesOf(NodeKind kind) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == kind) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::vector<int> System::gpus() const {
  std::vector<int> out = nodesOf(NodeKind::kGpu);
  std::stable_sort(out.begin(), out.end(),
                   [&](int a, int b) { return nodes[a].ordinal < nodes[b].ordinal; });
  return out;
}

std::vector<int> System::nics() const {
  return nodesOf(NodeKind::kNic);
}

int System::count(NodeKind kind) const {
  int n = 0;
  for (const Node& node : nodes)
    n += node.kind == kind;
  return n;
}

int System::findBusId(std::string_view busId) const {
  if (busId.empty()) return -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].pci.busId == busId && nodes[i].kind != NodeKind::kNet) return static_cast<int>(i);
  }
  return -1;
}

int System::findCpu(int numaId) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == NodeKind::kCpu && nodes[i].cpu.numaId == numaId) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int System::findNet(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == NodeKind::kNet && nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int System::linkBetween(int a, int b, LinkKind kind) const {
  if (a < 0 || b < 0) return -1;
  for (int l : nodes[a].links) {
    if (links[l].kind == kind && links[l].other(a) == b) return l;
  }
  return -1;
}

int System::cpuOf(int node) const {
  int steps = 0;
  while (node >= 0 && steps++ < 1000) {
    if (nodes[node].kind == NodeKind::kCpu) return node;
    node = nodes[node].parent;
  }
  return -1;
}

std::vector<int> System::netsOf(int nic) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == NodeKind::kNet && nodes[i].parent == nic)
      out.push_back(static_cast<int>(i));
  }
  return out;
}

std::string System::label(int node) const {
  if (node < 0 || node >= static_cast<int>(nodes.size())) return "?";
  const Node& n = nodes[node];
  switch (n.kind) {
    case NodeKind::kCpu:
      return "CPU" + std::to_string(n.cpu.numaId);
    case NodeKind::kHostBridge:
      return "host bridge " + n.name;
    case NodeKind::kPciSwitch:
      return "PCIe switch " + n.pci.busId;
    case NodeKind::kNvSwitch:
      return "NVSwitch";
    case NodeKind::kPciDevice:
      return "PCI device " + n.pci.busId;
    default:
      return n.name;
  }
}

std::string System::describeLink(int id) const {
  const Link& l = links[id];
  std::string bw = formatBandwidth(l.bw);
  std::string what;
  switch (l.kind) {
    case LinkKind::kNvlink:
      what = "NVLink";
      if (l.nvlinkGen > 0) what += std::to_string(l.nvlinkGen);
      what += " x" + std::to_string(l.nvlinks);
      break;
    case LinkKind::kPcie: {
      what = "PCIe";
      int gen = pcieGeneration(l.pcieRate);
      if (gen > 0) what += " Gen" + std::to_string(gen);
      if (l.pcieWidth > 0) what += " x" + std::to_string(l.pcieWidth);
      break;
    }
    case LinkKind::kCpuInterconnect: {
      int cpu = nodes[l.a].kind == NodeKind::kCpu ? l.a : l.b;
      what = interCpuName(nodes[cpu].cpu);
      break;
    }
    case LinkKind::kNetwork:
      what = "network port";
      break;
    case LinkKind::kLocal:
      what = "local";
      break;
  }
  return label(l.a) + " <-> " + label(l.b) + " " + what + " (" + bw + ")";
}

void System::finalize() {
  std::vector<int> gpuList = nodesOf(NodeKind::kGpu);
  bool byDev = true;
  std::vector<int> devs;
  for (int g : gpuList) {
    int dev = nodes[g].gpu.dev;
    if (dev < 0 || std::find(devs.begin(), devs.end(), dev) != devs.end()) byDev = false;
    devs.push_back(dev);
  }
  std::stable_sort(gpuList.begin(), gpuList.end(), [&](int a, int b) {
    if (byDev) return nodes[a].gpu.dev < nodes[b].gpu.dev;
    if (nodes[a].pci.busId.empty() || nodes[b].pci.busId.empty()) return false;
    return nodes[a].pci.busId < nodes[b].pci.busId;
  });
  for (size_t i = 0; i < gpuList.size(); ++i) {
    nodes[gpuList[i]].ordinal = static_cast<int>(i);
    nodes[gpuList[i]].name = "GPU" + std::to_string(i);
  }
  int nic = 0;
  for (int n : nodesOf(NodeKind::kNic)) {
    nodes[n].ordinal = nic;
    if (nodes[n].name.empty()) {
      std::vector<int> nets = netsOf(n);
      nodes[n].name = nets.empty() ? "NIC" + std::to_string(nic) : nodes[nets[0]].name;
    }
    ++nic;
  }
  std::vector<int> cpus = nodesOf(NodeKind::kCpu);
  for (size_t i = 0; i < cpus.size(); ++i) {
    for (size_t j = i + 1; j < cpus.size(); ++j) {
      if (linkBetween(cpus[i], cpus[j], LinkKind::kCpuInterconnect) >= 0) continue;
      double bw = std::min(interCpuBw(nodes[cpus[i]].cpu), interCpuBw(nodes[cpus[j]].cpu));
      connect(cpus[i], cpus[j], LinkKind::kCpuInterconnect, bw);
    }
  }
}

namespace {

std::string key(const System& s, int node) {
  if (node < 0) return "-";
  const Node& n = s.nodes[node];
  switch (n.kind) {
    case NodeKind::kCpu:
      return "cpu:" + std::to_string(n.cpu.numaId);
    case NodeKind::kNet:
      return "net:" + key(s, n.parent) + "/" + n.name;
    case NodeKind::kNvSwitch:
      return "nvswitch";
    case NodeKind::kHostBridge:
      return "hostbridge:" + n.name;
    default:
      if (!n.pci.busId.empty()) return "pci:" + n.pci.busId;
      return std::string(toString(n.kind)) + ":" + n.name;
  }
}

}  // namespace

std::string canonicalForm(const System& s) {
  std::vector<std::string> lines;
  char buf[256];
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    int id = static_cast<int>(i);
    std::string line = "node " + key(s, id) + " kind=" + toString(n.kind) + " name=" + n.name +
                       " parent=" + key(s, n.parent);
    if (!n.pci.busId.empty() || n.kind == NodeKind::kPciDevice) {
      line += " class=" + n.pci.classCode + " ids=" + n.pci.vendor + "," + n.pci.device + "," +
              n.pci.subsystemVendor + "," + n.pci.subsystemDevice;
    }
    if (n.kind == NodeKind::kCpu) {
      snprintf(buf, sizeof(buf),
               " package=%d arch=%s vendor=%s family=%d model=%d cpus=", n.cpu.packageId,
               n.cpu.arch.c_str(), n.cpu.vendor.c_str(), n.cpu.familyId, n.cpu.modelId);
      line += buf + n.cpu.cpus.toList();
    }
    if (n.kind == NodeKind::kGpu) {
      snprintf(buf, sizeof(buf), " dev=%d sm=%d rank=%d gdr=%d described=%d", n.gpu.dev, n.gpu.sm,
               n.gpu.rank, n.gpu.gdr, n.gpu.described ? 1 : 0);
      line += buf;
    }
    if (n.kind == NodeKind::kNet) {
      snprintf(buf, sizeof(buf), " dev=%d speed=%d port=%d maxconn=%d gdr=%d coll=%d", n.net.dev,
               n.net.speedMbps, n.net.port, n.net.maxConn, n.net.gdr, n.net.coll);
      line += buf + std::string(" guid=") + n.net.guid + " latency=" + n.net.latency;
    }
    if (n.isVirtual) line += " virtual";
    lines.push_back(line);
  }
  for (const Link& l : s.links) {
    std::string ka = key(s, l.a), kb = key(s, l.b);
    if (kb < ka) std::swap(ka, kb);
    snprintf(buf, sizeof(buf), " kind=%s bw=%.3f nvlinks=%d gen=%d rate=%.1f width=%d",
             toString(l.kind), l.bw, l.nvlinks, l.nvlinkGen, l.pcieRate, l.pcieWidth);
    lines.push_back("link " + ka + " " + kb + buf);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& line : lines)
    out += line + "\n";
  return out;
}

}  // namespace weft::topo
