#include "topology/export_json.h"

#include "topology/bandwidth.h"
#include "topology/matrix.h"

namespace weft::topo {

nlohmann::json bandwidthJson(double gbs) {
  return gbs >= kLocalBw ? nlohmann::json(nullptr) : nlohmann::json(gbs);
}

std::string writeJson(const System& s) {
  using nlohmann::json;
  json nodes = json::array();
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    json j;
    j["id"] = i;
    j["kind"] = toString(n.kind);
    j["name"] = n.name;
    j["label"] = s.label(static_cast<int>(i));
    j["parent"] = n.parent;
    if (!n.pci.busId.empty()) j["busid"] = n.pci.busId;
    if (!n.pci.classCode.empty()) j["class"] = n.pci.classCode;
    if (!n.pci.vendor.empty()) j["vendor"] = n.pci.vendor;
    if (!n.pci.device.empty()) j["device"] = n.pci.device;
    switch (n.kind) {
      case NodeKind::kCpu:
        j["numa"] = n.cpu.numaId;
        j["package"] = n.cpu.packageId;
        j["cpus"] = n.cpu.cpus.toList();
        j["arch"] = n.cpu.arch;
        j["cpu_vendor"] = n.cpu.vendor;
        if (n.cpu.familyId >= 0) j["family"] = n.cpu.familyId;
        if (n.cpu.modelId >= 0) j["model"] = n.cpu.modelId;
        if (!n.cpu.modelName.empty()) j["model_name"] = n.cpu.modelName;
        if (n.cpu.cores > 0) j["cores"] = n.cpu.cores;
        if (n.cpu.l3Bytes > 0) j["l3_bytes"] = n.cpu.l3Bytes;
        if (n.cpu.memoryBytes > 0) j["memory_bytes"] = n.cpu.memoryBytes;
        break;
      case NodeKind::kGpu:
        j["index"] = n.ordinal;
        if (n.gpu.dev >= 0) j["dev"] = n.gpu.dev;
        if (n.gpu.sm > 0) j["sm"] = n.gpu.sm;
        if (!n.gpu.model.empty()) j["model"] = n.gpu.model;
        j["described"] = n.gpu.described;
        break;
      case NodeKind::kNet:
        if (n.net.dev >= 0) j["dev"] = n.net.dev;
        j["speed_mbps"] = n.net.speedMbps;
        if (n.net.port >= 0) j["port"] = n.net.port;
        if (!n.net.ifname.empty()) j["interface"] = n.net.ifname;
        if (!n.net.rdmaDevice.empty()) j["rdma_device"] = n.net.rdmaDevice;
        if (!n.net.linkLayer.empty()) j["link_layer"] = n.net.linkLayer;
        if (!n.net.guid.empty()) j["guid"] = n.net.guid;
        break;
      case NodeKind::kNic:
        j["index"] = n.ordinal;
        j["virtual"] = n.isVirtual;
        break;
      case NodeKind::kNvSwitch:
        j["members"] = n.members;
        break;
      default:
        break;
    }
    nodes.push_back(j);
  }
  json links = json::array();
  for (const Link& l : s.links) {
    json j;
    j["a"] = l.a;
    j["b"] = l.b;
    j["kind"] = toString(l.kind);
    j["bw_gbs"] = bandwidthJson(l.bw);
    if (l.kind == LinkKind::kNvlink) {
      j["nvlinks"] = l.nvlinks;
      if (l.nvlinkGen > 0) j["nvlink_gen"] = l.nvlinkGen;
    }
    if (l.kind == LinkKind::kPcie && l.pcieRate > 0) j["pcie_gts"] = l.pcieRate;
    if (l.kind == LinkKind::kPcie && l.pcieWidth > 0) j["pcie_width"] = l.pcieWidth;
    links.push_back(j);
  }
  Matrix m = buildMatrix(s);
  json matrix;
  matrix["devices"] = m.labels;
  matrix["cells"] = m.cells;
  matrix["cpu_affinity"] = m.cpuAffinity;
  matrix["numa_affinity"] = m.numaAffinity;
  if (!m.note.empty()) matrix["note"] = m.note;
  if (!m.legend.empty()) matrix["device_legend"] = m.legend;
  json out;
  out["source"] = s.source;
  out["format"] = s.format;
  out["counts"] = {{"cpus", s.count(NodeKind::kCpu)},
                   {"gpus", s.count(NodeKind::kGpu)},
                   {"nics", s.count(NodeKind::kNic)},
                   {"nets", s.count(NodeKind::kNet)},
                   {"pci_switches", s.count(NodeKind::kPciSwitch)},
                   {"nvswitches", s.count(NodeKind::kNvSwitch)}};
  out["nodes"] = nodes;
  out["links"] = links;
  out["matrix"] = matrix;
  out["notes"] = s.notes;
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace weft::topo
