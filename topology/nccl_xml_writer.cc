#include "topology/nccl_xml_writer.h"

#include <algorithm>
#include <cstdio>

namespace weft::topo {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control characters as references, or the reader's attribute normalisation would
        // turn tabs and newlines into spaces.
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "&#" + std::to_string(static_cast<unsigned char>(c)) + ";";
        } else {
          out += c;
        }
    }
  }
  return out;
}

class Writer {
 public:
  explicit Writer(const System& s) : s_(s) {}

  std::string run() {
    out_ = "<system version=\"1\">\n";
    for (int cpu : s_.nodesOf(NodeKind::kCpu))
      writeCpu(cpu);
    out_ += "</system>\n";
    return out_;
  }

 private:
  void attr(const char* name, const std::string& value) {
    out_ += std::string(" ") + name + "=\"" + escape(value) + "\"";
  }
  void attrInt(const char* name, int value) { attr(name, std::to_string(value)); }
  void indent(int depth) { out_.append(static_cast<size_t>(depth) * 2, ' '); }

  std::vector<int> children(int parent) const {
    std::vector<int> out;
    for (size_t i = 0; i < s_.nodes.size(); ++i) {
      if (s_.nodes[i].parent == parent) out.push_back(static_cast<int>(i));
    }
    return out;
  }

  void writeCpu(int id) {
    const CpuInfo& c = s_.nodes[id].cpu;
    indent(1);
    out_ += "<cpu";
    attrInt("numaid", c.numaId);
    if (!c.cpus.empty()) attr("affinity", c.cpus.toHexWords());
    if (!c.arch.empty()) attr("arch", c.arch);
    if (!c.vendor.empty()) attr("vendor", c.vendor);
    if (c.familyId >= 0) attrInt("familyid", c.familyId);
    if (c.modelId >= 0) attrInt("modelid", c.modelId);
    if (c.packageId >= 0) attrInt("package", c.packageId);
    out_ += ">\n";
    for (int child : children(id)) {
      const Node& n = s_.nodes[child];
      if (n.kind == NodeKind::kHostBridge) {
        for (int under : children(child))
          writeDevice(under, 2, n.name);
      } else {
        writeDevice(child, 2, "");
      }
    }
    indent(1);
    out_ += "</cpu>\n";
  }

  void writeDevice(int id, int depth, const std::string& hostBridge) {
    const Node& n = s_.nodes[id];
    if (n.kind == NodeKind::kNic && n.pci.busId.empty()) {
      writeNic(id, depth);
      return;
    }
    if (n.pci.busId.empty()) return;  // nothing NCCL could place
    indent(depth);
    out_ += "<pci";
    attr("busid", n.pci.busId);
    if (!n.pci.classCode.empty()) attr("class", n.pci.classCode);
    if (!n.pci.vendor.empty()) attr("vendor", n.pci.vendor);
    if (!n.pci.device.empty()) attr("device", n.pci.device);
    if (!n.pci.subsystemVendor.empty()) attr("subsystem_vendor", n.pci.subsystemVendor);
    if (!n.pci.subsystemDevice.empty()) attr("subsystem_device", n.pci.subsystemDevice);
    const Link* up = nullptr;
    for (int l : n.links) {
      if (s_.links[l].other(id) == n.parent && s_.links[l].kind == LinkKind::kPcie) {
        up = &s_.links[l];
      }
    }
    std::string speed = n.pci.linkSpeed;
    if (speed.empty() && up && up->pcieRate > 0) {
      char buf[32];
      snprintf(buf, sizeof(buf), "%.1f GT/s PCIe", up->pcieRate);
      speed = buf;
    }
    attr("link_speed", speed);
    std::string width = n.pci.linkWidth;
    if (width.empty()) width = std::to_string(up ? up->pcieWidth : 0);
    attr("link_width", width);
    if (!hostBridge.empty()) attr("hostbridge", hostBridge);
    std::vector<int> kids = children(id);
    bool gpuBody = n.kind == NodeKind::kGpu && (n.gpu.described || hasNvlinks(id));
    bool nicBody = n.kind == NodeKind::kNic;  // <nic/> even without ports: it says "a NIC"
    bool pciKids = n.kind == NodeKind::kPciSwitch && !kids.empty();
    std::vector<int> pciLinks = localLinks(id);
    if (!gpuBody && !nicBody && !pciKids && pciLinks.empty()) {
      out_ += "/>\n";
      return;
    }
    out_ += ">\n";
    if (gpuBody) writeGpu(id, depth + 1);
    if (nicBody) writeNic(id, depth + 1);
    if (pciKids) {
      for (int k : kids)
        writeDevice(k, depth + 1, "");
    }
    for (int other : pciLinks) {
      indent(depth + 1);
      out_ += "<pcilink";
      attr("target", s_.nodes[other].pci.busId);
      out_ += "/>\n";
    }
    indent(depth);
    out_ += "</pci>\n";
  }

  bool hasNvlinks(int id) const {
    for (int l : s_.nodes[id].links) {
      if (s_.links[l].kind == LinkKind::kNvlink) return true;
    }
    return false;
  }

  std::vector<int> localLinks(int id) const {
    std::vector<int> out;
    for (int l : s_.nodes[id].links) {
      const Link& link = s_.links[l];
      int other = link.other(id);
      if (link.kind == LinkKind::kLocal && s_.nodes[other].kind == NodeKind::kPciSwitch &&
          link.a == id) {
        out.push_back(other);
      }
    }
    return out;
  }

  void writeGpu(int id, int depth) {
    const Node& n = s_.nodes[id];
    indent(depth);
    out_ += "<gpu";
    // Importers fill these for every GPU they describe; NCCL needs all four.
    if (n.gpu.dev >= 0) attrInt("dev", n.gpu.dev);
    if (n.gpu.sm >= 0) attrInt("sm", n.gpu.sm);
    if (n.gpu.rank >= 0) attrInt("rank", n.gpu.rank);
    if (n.gpu.gdr >= 0) attrInt("gdr", n.gpu.gdr);
    std::vector<std::string> lines;
    for (int l : n.links) {
      const Link& link = s_.links[l];
      if (link.kind != LinkKind::kNvlink) continue;
      const Node& other = s_.nodes[link.other(id)];
      if (other.kind == NodeKind::kGpu) {
        lines.push_back(nvlink(other.pci.busId, link.nvlinks, "0x030200"));
      } else if (other.kind == NodeKind::kCpu) {
        lines.push_back(nvlink("cpu" + std::to_string(other.cpu.numaId), link.nvlinks, "0x068001"));
      } else if (other.kind == NodeKind::kNvSwitch) {
        // Spread the count over the switch chips the source named.
        std::vector<std::string> members = other.members;
        if (members.empty()) members.push_back("");
        int k = static_cast<int>(members.size());
        for (int m = 0; m < k; ++m) {
          int c = link.nvlinks / k + (m < link.nvlinks % k ? 1 : 0);
          if (c > 0) lines.push_back(nvlink(members[static_cast<size_t>(m)], c, "0x068000"));
        }
      }
    }
    if (lines.empty()) {
      out_ += "/>\n";
      return;
    }
    out_ += ">\n";
    for (const std::string& block : lines) {
      size_t pos = 0;
      while (pos < block.size()) {  // a block may hold several elements
        size_t end = block.find('\n', pos);
        indent(depth + 1);
        out_ += block.substr(pos, end + 1 - pos);
        pos = end + 1;
      }
    }
    indent(depth);
    out_ += "</gpu>\n";
  }

  // One element per 64 links at most (the reader's limit); readers add up repeated targets.
  std::string nvlink(const std::string& target, int count, const char* tclass) {
    std::string out;
    for (int left = count; left > 0; left -= 64) {
      out += "<nvlink target=\"" + escape(target) + "\" count=\"" +
             std::to_string(std::min(left, 64)) + "\" tclass=\"" + tclass + "\"/>\n";
    }
    return out;
  }

  void writeNic(int id, int depth) {
    indent(depth);
    std::vector<int> nets = s_.netsOf(id);
    if (nets.empty()) {
      out_ += "<nic/>\n";
      return;
    }
    out_ += "<nic>\n";
    for (int netId : nets) {
      const Node& net = s_.nodes[netId];
      const NetInfo& i = net.net;
      indent(depth + 1);
      out_ += "<net";
      attr("name", net.name);
      if (i.dev >= 0) attrInt("dev", i.dev);
      if (i.speedMbps > 0) attrInt("speed", i.speedMbps);
      if (i.port >= 0) attrInt("port", i.port);
      if (!i.latency.empty()) attr("latency", i.latency);
      if (!i.guid.empty()) attr("guid", i.guid);
      if (i.maxConn >= 0) attrInt("maxconn", i.maxConn);
      if (i.gdr >= 0) attrInt("gdr", i.gdr);
      if (i.coll >= 0) attrInt("coll", i.coll);
      out_ += "/>\n";
    }
    indent(depth);
    out_ += "</nic>\n";
  }

  const System& s_;
  std::string out_;
};

}  // namespace

std::string writeNcclXml(const System& system) {
  return Writer(system).run();
}

}  // namespace weft::topo
