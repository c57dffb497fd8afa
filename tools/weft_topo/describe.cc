#include "tools/weft_topo/describe.h"

#include <algorithm>

#include "src/base/status.h"
#include "tools/weft_topo/wrap.h"
#include "topology/bandwidth.h"
#include "topology/locality.h"
#include "topology/paths.h"

namespace weft::topotool {
namespace {

using topo::NodeKind;

std::string bytes(uint64_t n) {
  if (n >= (1ull << 30)) return strprintf("%.0f GiB", static_cast<double>(n) / (1ull << 30));
  if (n >= (1ull << 20)) return strprintf("%.0f MiB", static_cast<double>(n) / (1ull << 20));
  if (n >= (1ull << 10)) return strprintf("%.0f KiB", static_cast<double>(n) / (1ull << 10));
  return strprintf("%llu B", static_cast<unsigned long long>(n));
}

std::string speed(int mbps) {
  if (mbps <= 0) return strprintf("speed unknown (%d Gb/s assumed)", topo::kDefaultNetMbps / 1000);
  if (mbps % 1000 == 0) return strprintf("%d Gb/s", mbps / 1000);
  return strprintf("%d Mb/s", mbps);
}

int numaOf(const topo::System& s, int node) {
  int cpu = s.cpuOf(node);
  return cpu >= 0 ? s.nodes[cpu].cpu.numaId : -1;
}

std::string uplink(const topo::System& s, int node) {
  const topo::Node& n = s.nodes[node];
  if (n.pci.busId.empty()) return "no PCI device";
  for (int l : n.links) {
    const topo::Link& link = s.links[l];
    if (link.other(node) != n.parent || link.kind != topo::LinkKind::kPcie) continue;
    std::string out = "PCIe";
    int gen = topo::pcieGeneration(link.pcieRate);
    if (gen > 0) out += " Gen" + std::to_string(gen);
    if (link.pcieWidth > 0) out += " x" + std::to_string(link.pcieWidth);
    if (gen == 0 && link.pcieWidth == 0) out += " (speed unknown)";
    return out + strprintf(" %.1f GB/s", link.bw);
  }
  return n.isVirtual ? "no PCI device" : "";
}

}  // namespace

std::string describeSystem(const topo::System& s) {
  std::string out = s.source + " (" + s.format + ")\n";
  std::vector<int> cpus = s.nodesOf(NodeKind::kCpu);
  std::vector<int> packages;
  for (int c : cpus) {
    int p = s.nodes[c].cpu.packageId;
    if (p >= 0 && std::find(packages.begin(), packages.end(), p) == packages.end())
      packages.push_back(p);
  }
  out += strprintf("\nCPUs: %zu NUMA node(s)", cpus.size());
  if (!packages.empty()) out += strprintf(" in %zu package(s)", packages.size());
  out += "\n";
  for (int c : cpus) {
    const topo::CpuInfo& i = s.nodes[c].cpu;
    out += strprintf("  NUMA %d:", i.numaId);
    if (i.packageId >= 0) out += strprintf(" package %d,", i.packageId);
    out += i.cpus.empty() ? " CPUs unknown"
                          : strprintf(" %d CPUs (%s)", i.cpus.count(), i.cpus.toList().c_str());
    if (i.cores > 0) out += strprintf(", %d cores", i.cores);
    if (i.l3Bytes > 0) out += ", L3 " + bytes(i.l3Bytes);
    if (i.memoryBytes > 0) out += ", memory " + bytes(i.memoryBytes);
    std::string what = i.modelName.empty() ? i.vendor : i.modelName;
    if (!i.arch.empty() || !what.empty()) out += "; " + i.arch + (what.empty() ? "" : " " + what);
    out += "\n";
  }
  std::vector<int> between;  // every pair of NUMA nodes has one (System::finalize)
  for (size_t l = 0; l < s.links.size(); ++l) {
    if (s.links[l].kind == topo::LinkKind::kCpuInterconnect) between.push_back(static_cast<int>(l));
  }
  if (between.size() == 1) out += "  between NUMA nodes: " + s.describeLink(between[0]) + "\n";
  if (between.size() > 1) {
    out += strprintf("  between NUMA nodes: %zu links\n", between.size());
    for (int l : between)
      out += "    " + s.describeLink(l) + "\n";
  }

  topo::Paths paths(s);
  std::vector<int> gpus = s.gpus();
  out += strprintf("\nGPUs: %zu\n", gpus.size());
  for (int g : gpus) {
    const topo::Node& n = s.nodes[g];
    out += "  " + n.name + "  " + n.pci.busId;
    if (!n.gpu.model.empty()) out += "  " + n.gpu.model;
    if (n.gpu.sm > 0) out += strprintf(" (sm %d)", n.gpu.sm);
    if (!n.gpu.described) out += "  (bare PCI endpoint)";
    out += strprintf("  NUMA %d", numaOf(s, g));
    std::string up = uplink(s, g);
    if (!up.empty()) out += "  " + up;
    std::vector<std::string> nv;
    for (int l : n.links) {
      const topo::Link& link = s.links[l];
      if (link.kind != topo::LinkKind::kNvlink) continue;
      nv.push_back(s.label(link.other(g)) + " x" + std::to_string(link.nvlinks));
    }
    if (!nv.empty()) {
      out += "\n      NVLink:";
      for (const std::string& x : nv)
        out += " " + x;
    }
    std::vector<int> near = topo::closestNics(s, paths, g);
    if (!near.empty()) {
      out += "\n      closest NIC:";
      for (int nic : near)
        out += " " + s.nodes[nic].name;
      out += strprintf(" (%s)", topo::toString(paths.get(g, near.front()).cls));
    }
    out += "\n";
  }

  std::vector<int> nics = s.nics();
  out += strprintf("\nNICs: %zu\n", nics.size());
  for (int nic : nics) {
    const topo::Node& n = s.nodes[nic];
    out += "  " + n.name;
    if (!n.pci.busId.empty()) out += "  " + n.pci.busId;
    out += strprintf("  NUMA %d", numaOf(s, nic));
    std::string up = uplink(s, nic);
    if (!up.empty()) out += "  " + up;
    std::vector<int> nets = s.netsOf(nic);
    if (nets.empty()) out += "  (no port described)";
    for (int net : nets) {
      const topo::NetInfo& i = s.nodes[net].net;
      out += "\n      port " + s.nodes[net].name;
      if (!i.ifname.empty() && i.ifname != s.nodes[net].name)
        out += " (interface " + i.ifname + ")";
      if (!i.rdmaDevice.empty() && i.rdmaDevice != s.nodes[net].name)
        out += " (verbs " + i.rdmaDevice + ")";
      out += ": " + speed(i.speedMbps);
      if (!i.linkLayer.empty()) out += ", " + i.linkLayer;
    }
    out += "\n";
  }
  int switches = s.count(NodeKind::kPciSwitch), bridges = s.count(NodeKind::kHostBridge);
  int nvs = s.count(NodeKind::kNvSwitch), other = s.count(NodeKind::kPciDevice);
  out += strprintf("\nPCIe: %d switch(es)", switches);
  if (bridges > 0) out += strprintf(", %d host bridge(s)", bridges);
  if (other > 0) out += strprintf(", %d other endpoint(s) of unknown kind", other);
  out += "\n";
  if (nvs > 0) {
    for (int sw : s.nodesOf(NodeKind::kNvSwitch)) {
      out += strprintf("NVSwitch fabric: %zu chip(s) named in the source, %zu GPU link(s)\n",
                       s.nodes[sw].members.size(), s.nodes[sw].links.size());
    }
  }
  if (!s.notes.empty()) {
    out += "\nNotes:\n";
    for (const std::string& n : s.notes)
      out += wrap(n, kTextWidth, "  - ", "    ");
  }
  return out;
}

}  // namespace weft::topotool
