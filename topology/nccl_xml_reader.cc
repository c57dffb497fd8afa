#include "topology/nccl_xml_reader.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>

#include "src/base/log.h"
#include "topology/bandwidth.h"
#include "topology/busid.h"

namespace weft::topo {
namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxElements = 20000;

bool parseInt(std::string_view text, long long* out) {
  std::string s(text);
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  if (b == std::string::npos) return false;
  s = s.substr(b, e - b + 1);
  errno = 0;
  char* end = nullptr;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  long long v = strtoll(s.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || end == s.c_str() || *end != '\0') return false;
  if (v < -(1LL << 40) || v > (1LL << 40)) return false;
  *out = v;
  return true;
}

struct PendingNvlink {
  int gpu;
  std::string target;
  std::string tclass;
  int count;
  size_t line;
};

class Reader {
 public:
  Reader(std::string_view text, const std::string& name, System* out)
      : text_(text), name_(name), sys_(out) {}

  Status run() {
    pugi::xml_document doc;
    pugi::xml_parse_result parsed =
        doc.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) {
      return errorf(weftInvalidArgument, "%s: not well-formed XML at line %zu: %s", name_.c_str(),
                    lineOf(static_cast<size_t>(parsed.offset)), parsed.description());
    }
    pugi::xml_node root = doc.document_element();
    if (std::string_view(root.name()) != "system") {
      return errorf(weftInvalidArgument,
                    "%s: wrong root element <%s>: an NCCL topology file starts with <system>",
                    name_.c_str(), root.name());
    }
    WEFT_RETURN_IF_ERROR(checkSize(root));
    sys_->format = "NCCL topology XML";
    sys_->source = name_;
    std::string hostHash;
    bool hostHashSeen = false;
    for (pugi::xml_node child : root.children()) {
      if (child.type() != pugi::node_element) continue;
      if (std::string_view(child.name()) != "cpu") {
        WEFT_INFO(kTopo, "%s: ignoring <%s> under <system> (line %zu)", name_.c_str(), child.name(),
                  line(child));
        continue;
      }
      std::string hash = child.attribute("host_hash").value();
      if (!hash.empty() && hostHashSeen && hash != hostHash) {
        return errorf(weftInvalidArgument,
                      "%s: describes several hosts (host_hash %s and %s, line %zu); Weft reads "
                      "one host per file",
                      name_.c_str(), hostHash.c_str(), hash.c_str(), line(child));
      }
      if (!hash.empty()) {
        hostHash = hash;
        hostHashSeen = true;
      }
      WEFT_RETURN_IF_ERROR(readCpu(child));
    }
    if (sys_->count(NodeKind::kCpu) == 0) {
      return errorf(weftInvalidArgument, "%s: <system> has no <cpu> element", name_.c_str());
    }
    WEFT_RETURN_IF_ERROR(addNvlinks());
    addPciLinks();
    addNotes();
    sys_->finalize();
    return okStatus();
  }

 private:
  size_t lineOf(size_t offset) const {
    offset = std::min(offset, text_.size());
    return static_cast<size_t>(std::count(text_.begin(), text_.begin() + offset, '\n')) + 1;
  }
  size_t line(pugi::xml_node n) const {
    ptrdiff_t off = n.offset_debug();
    return off < 0 ? 0 : lineOf(static_cast<size_t>(off));
  }

  // Walks the tree without recursion: refuses absurd element counts and nesting before the
  // recursive reading below runs.
  Status checkSize(pugi::xml_node root) {
    size_t elements = 0;
    int depth = 0;
    pugi::xml_node n = root.first_child();
    while (n && n != root) {
      if (n.type() == pugi::node_element && ++elements > kMaxElements) {
        return errorf(weftInvalidArgument, "%s: has more than %zu elements; not a topology file",
                      name_.c_str(), kMaxElements);
      }
      if (n.first_child()) {
        if (++depth > kMaxDepth) {
          return errorf(weftInvalidArgument, "%s: line %zu: elements nested more than %d deep",
                        name_.c_str(), line(n), kMaxDepth);
        }
        n = n.first_child();
        continue;
      }
      while (n != root && !n.next_sibling()) {
        n = n.parent();
        --depth;
      }
      if (n != root) n = n.next_sibling();
    }
    return okStatus();
  }

  Status intAttr(pugi::xml_node n, const char* attr, int* out) {
    pugi::xml_attribute a = n.attribute(attr);
    if (!a) return okStatus();
    long long v;
    if (!parseInt(a.value(), &v) || v < -1 || v > (1LL << 30)) {
      return errorf(weftInvalidArgument, "%s: line %zu: <%s %s=\"%s\">: not a valid number",
                    name_.c_str(), line(n), n.name(), attr, a.value());
    }
    *out = static_cast<int>(v);
    return okStatus();
  }

  Status readCpu(pugi::xml_node xml) {
    Node cpu;
    cpu.kind = NodeKind::kCpu;
    if (!xml.attribute("numaid")) {
      return errorf(weftInvalidArgument, "%s: line %zu: <cpu> without numaid", name_.c_str(),
                    line(xml));
    }
    WEFT_RETURN_IF_ERROR(intAttr(xml, "numaid", &cpu.cpu.numaId));
    if (sys_->findCpu(cpu.cpu.numaId) >= 0) {
      return errorf(weftInvalidArgument, "%s: line %zu: numaid %d appears twice", name_.c_str(),
                    line(xml), cpu.cpu.numaId);
    }
    if (pugi::xml_attribute a = xml.attribute("affinity")) {
      std::string text = a.value();
      if (!text.empty()) {
        auto set = CpuSet::parseHexWords(text);
        if (!set) {
          return errorf(weftInvalidArgument, "%s: line %zu: affinity \"%s\" is not a CPU mask",
                        name_.c_str(), line(xml), text.c_str());
        }
        cpu.cpu.cpus = *set;
      }
    }
    cpu.cpu.arch = xml.attribute("arch").value();
    cpu.cpu.vendor = xml.attribute("vendor").value();
    WEFT_RETURN_IF_ERROR(intAttr(xml, "familyid", &cpu.cpu.familyId));
    WEFT_RETURN_IF_ERROR(intAttr(xml, "modelid", &cpu.cpu.modelId));
    WEFT_RETURN_IF_ERROR(intAttr(xml, "package", &cpu.cpu.packageId));
    cpu.name = "CPU" + std::to_string(cpu.cpu.numaId);
    int id = sys_->addNode(std::move(cpu));
    std::map<std::string, int> bridges;  // Weft's hostbridge attribute -> node
    for (pugi::xml_node child : xml.children()) {
      if (child.type() != pugi::node_element) continue;
      std::string_view tag = child.name();
      if (tag == "pci") {
        int parent = id;
        pugi::xml_attribute hb = child.attribute("hostbridge");
        if (hb && *hb.value() != '\0') {
          auto it = bridges.find(hb.value());
          if (it == bridges.end()) {
            Node bridge;
            bridge.kind = NodeKind::kHostBridge;
            bridge.name = hb.value();
            int b = sys_->addNode(std::move(bridge));
            sys_->attach(b, id, LinkKind::kPcie, kLocalBw);
            it = bridges.emplace(hb.value(), b).first;
          }
          parent = it->second;
        }
        WEFT_RETURN_IF_ERROR(readPci(child, parent, 1));
      } else if (tag == "nic") {
        Node nic;
        nic.kind = NodeKind::kNic;
        nic.isVirtual = true;
        int n = sys_->addNode(std::move(nic));
        sys_->attach(n, id, LinkKind::kPcie, kLocalBw);
        WEFT_RETURN_IF_ERROR(readNic(child, n));
      } else {
        WEFT_INFO(kTopo, "%s: ignoring <%s> under <cpu> (line %zu)", name_.c_str(), child.name(),
                  line(child));
      }
    }
    return okStatus();
  }

  Status readPci(pugi::xml_node xml, int parent, int depth) {
    if (depth > kMaxDepth) {
      return errorf(weftInvalidArgument, "%s: line %zu: <pci> nested more than %d deep",
                    name_.c_str(), line(xml), kMaxDepth);
    }
    pugi::xml_attribute busAttr = xml.attribute("busid");
    if (!busAttr) {
      return errorf(weftInvalidArgument, "%s: line %zu: <pci> without busid", name_.c_str(),
                    line(xml));
    }
    auto busId = normalizeBusId(busAttr.value());
    if (!busId) {
      return errorf(weftInvalidArgument, "%s: line %zu: busid \"%s\" is not a PCI bus id",
                    name_.c_str(), line(xml), busAttr.value());
    }
    auto seen = busLines_.find(*busId);
    if (seen != busLines_.end()) {
      return errorf(weftInvalidArgument, "%s: duplicate bus id %s (lines %zu and %zu)",
                    name_.c_str(), busId->c_str(), seen->second, line(xml));
    }
    busLines_[*busId] = line(xml);

    Node node;
    node.pci.busId = *busId;
    node.pci.classCode = xml.attribute("class").value();
    node.pci.vendor = xml.attribute("vendor").value();
    node.pci.device = xml.attribute("device").value();
    node.pci.subsystemVendor = xml.attribute("subsystem_vendor").value();
    node.pci.subsystemDevice = xml.attribute("subsystem_device").value();
    node.pci.linkSpeed = xml.attribute("link_speed").value();
    node.pci.linkWidth = xml.attribute("link_width").value();
    pugi::xml_node gpu = xml.child("gpu");
    pugi::xml_node nic = xml.child("nic");
    bool hasPciChildren = static_cast<bool>(xml.child("pci"));
    const std::string& cls = node.pci.classCode;
    if (gpu) {
      node.kind = NodeKind::kGpu;
    } else if (nic) {
      node.kind = NodeKind::kNic;
    } else if (hasPciChildren || cls.rfind("0x0604", 0) == 0) {
      node.kind = NodeKind::kPciSwitch;
    } else if (cls.rfind("0x03", 0) == 0) {
      node.kind = NodeKind::kGpu;
    } else if (cls.rfind("0x02", 0) == 0) {
      node.kind = NodeKind::kNic;
    } else {
      node.kind = NodeKind::kPciDevice;
    }
    node.name = node.pci.busId;
    if (node.kind == NodeKind::kNic) node.name.clear();

    long long width = 0;
    if (!node.pci.linkWidth.empty() && !parseInt(node.pci.linkWidth, &width)) {
      return errorf(weftInvalidArgument, "%s: line %zu: link_width \"%s\" is not a number",
                    name_.c_str(), line(xml), node.pci.linkWidth.c_str());
    }
    if (width < 0 || width > 64) width = 0;
    double rate = pcieRateGts(node.pci.linkSpeed);

    if (node.kind == NodeKind::kGpu && gpu) {
      node.gpu.described = true;
      WEFT_RETURN_IF_ERROR(intAttr(gpu, "dev", &node.gpu.dev));
      WEFT_RETURN_IF_ERROR(intAttr(gpu, "sm", &node.gpu.sm));
      WEFT_RETURN_IF_ERROR(intAttr(gpu, "rank", &node.gpu.rank));
      WEFT_RETURN_IF_ERROR(intAttr(gpu, "gdr", &node.gpu.gdr));
    }
    int id = sys_->addNode(std::move(node));
    int link = sys_->attach(id, parent, LinkKind::kPcie, pcieBw(rate, static_cast<int>(width)));
    sys_->links[link].pcieRate = rate;
    sys_->links[link].pcieWidth = static_cast<int>(width);

    NodeKind kind = sys_->nodes[id].kind;
    if (kind == NodeKind::kGpu && gpu) {
      for (pugi::xml_node nv : gpu.children("nvlink")) {
        PendingNvlink p;
        p.gpu = id;
        p.target = nv.attribute("target").value();
        p.tclass = nv.attribute("tclass").value();
        p.line = line(nv);
        int count = -1;
        WEFT_RETURN_IF_ERROR(intAttr(nv, "count", &count));
        if (count <= 0 || count > 64) {
          return errorf(weftInvalidArgument, "%s: line %zu: <nvlink> needs a count of 1 to 64",
                        name_.c_str(), p.line);
        }
        p.count = count;
        if (p.tclass.empty()) {
          return errorf(weftInvalidArgument, "%s: line %zu: <nvlink> without tclass", name_.c_str(),
                        p.line);
        }
        nvlinks_.push_back(p);
      }
      for (pugi::xml_node c : gpu.children()) {
        if (c.type() == pugi::node_element && std::string_view(c.name()) != "nvlink") {
          WEFT_INFO(kTopo, "%s: ignoring <%s> of a GPU (line %zu)", name_.c_str(), c.name(),
                    line(c));
        }
      }
    }
    if (kind == NodeKind::kNic && nic) WEFT_RETURN_IF_ERROR(readNic(nic, id));
    for (pugi::xml_node child : xml.children()) {
      if (child.type() != pugi::node_element) continue;
      std::string_view tag = child.name();
      if (tag == "pci") {
        if (kind != NodeKind::kPciSwitch) {
          WEFT_INFO(kTopo, "%s: ignoring <pci> under device %s (line %zu)", name_.c_str(),
                    sys_->nodes[id].pci.busId.c_str(), line(child));
          continue;
        }
        WEFT_RETURN_IF_ERROR(readPci(child, id, depth + 1));
      } else if (tag == "pcilink") {
        pciLinks_.push_back({id, child.attribute("target").value()});
      } else if (tag != "gpu" && tag != "nic") {
        WEFT_INFO(kTopo, "%s: ignoring <%s> (line %zu)", name_.c_str(), child.name(), line(child));
      }
    }
    return okStatus();
  }

  Status readNic(pugi::xml_node xml, int nic) {
    for (pugi::xml_node child : xml.children()) {
      if (child.type() != pugi::node_element) continue;
      if (std::string_view(child.name()) != "net") {
        WEFT_INFO(kTopo, "%s: ignoring <%s> in a <nic> (line %zu)", name_.c_str(), child.name(),
                  line(child));
        continue;
      }
      Node net;
      net.kind = NodeKind::kNet;
      net.name = child.attribute("name").value();
      WEFT_RETURN_IF_ERROR(intAttr(child, "dev", &net.net.dev));
      WEFT_RETURN_IF_ERROR(intAttr(child, "speed", &net.net.speedMbps));
      if (net.net.speedMbps < 0) net.net.speedMbps = 0;  // some NICs report -1: unknown
      WEFT_RETURN_IF_ERROR(intAttr(child, "port", &net.net.port));
      WEFT_RETURN_IF_ERROR(intAttr(child, "maxconn", &net.net.maxConn));
      WEFT_RETURN_IF_ERROR(intAttr(child, "gdr", &net.net.gdr));
      WEFT_RETURN_IF_ERROR(intAttr(child, "coll", &net.net.coll));
      net.net.guid = child.attribute("guid").value();
      net.net.latency = child.attribute("latency").value();
      if (net.name.empty()) net.name = "net" + std::to_string(net.net.dev);
      // Port names are keys: make repeats unique ("mlx5_0", "mlx5_0.2", ...).
      std::string base = net.name;
      for (int k = std::max(net.net.port, 1); sys_->findNet(net.name) >= 0; ++k) {
        net.name = base + "." + std::to_string(k);
      }
      int id = sys_->addNode(std::move(net));
      sys_->attach(id, nic, LinkKind::kNetwork, netBw(sys_->nodes[id].net.speedMbps));
    }
    return okStatus();
  }

  Status addNvlinks() {
    std::map<std::pair<int, int>, std::pair<int, int>> gpuPairs;  // (a,b) -> counts a->b, b->a
    int nvswitch = -1;
    for (const PendingNvlink& p : nvlinks_) {
      const Node& gpu = sys_->nodes[p.gpu];
      int sm = gpu.gpu.sm;
      double perLink = nvlinkBwPerLink(sm);
      int gen = nvlinkGeneration(sm);
      const std::string& tc = p.tclass;
      if (tc.rfind("0x03", 0) == 0) {
        auto target = normalizeBusId(p.target);
        if (!target) {
          return errorf(weftInvalidArgument, "%s: line %zu: nvlink target \"%s\" is not a bus id",
                        name_.c_str(), p.line, p.target.c_str());
        }
        if (*target == gpu.pci.busId) {
          WEFT_INFO(kTopo, "%s: line %zu: %s has an NVLink to itself; ignored", name_.c_str(),
                    p.line, target->c_str());
          selfLinks_.insert(*target);
          continue;
        }
        int other = sys_->findBusId(*target);
        if (other < 0 || sys_->nodes[other].kind != NodeKind::kGpu) {
          return errorf(weftInvalidArgument,
                        "%s: line %zu: dangling reference: GPU %s has an NVLink to %s, which is "
                        "%s",
                        name_.c_str(), p.line, gpu.pci.busId.c_str(), target->c_str(),
                        other < 0 ? "not in the file" : "not a GPU");
        }
        if (!sys_->nodes[other].gpu.described) {
          // As NCCL: a GPU without a <gpu> element takes no NVLink.
          WEFT_INFO(kTopo, "%s: line %zu: NVLink to %s, a bare PCI endpoint; ignored",
                    name_.c_str(), p.line, target->c_str());
          continue;
        }
        auto key = std::minmax(p.gpu, other);
        auto& counts = gpuPairs[{key.first, key.second}];
        (p.gpu == key.first ? counts.first : counts.second) += p.count;
        (void)perLink;
        (void)gen;
      } else if (tc == "0x068001") {
        int cpu = sys_->cpuOf(p.gpu);
        if (cpu >= 0) sys_->addNvlinks(p.gpu, cpu, p.count, gen, p.count * perLink);
      } else if (tc.rfind("0x0680", 0) == 0) {
        if (nvswitch < 0) {
          Node sw;
          sw.kind = NodeKind::kNvSwitch;
          sw.name = "NVSwitch";
          nvswitch = sys_->addNode(std::move(sw));
        }
        auto target = normalizeBusId(p.target);
        std::string member = target ? *target : p.target;
        auto& members = sys_->nodes[nvswitch].members;
        if (!member.empty() && std::find(members.begin(), members.end(), member) == members.end()) {
          members.push_back(member);
        }
        sys_->addNvlinks(p.gpu, nvswitch, p.count, gen, p.count * perLink);
      } else {
        WEFT_INFO(kTopo, "%s: line %zu: NVLink to a device of class %s ignored", name_.c_str(),
                  p.line, tc.c_str());
      }
    }
    for (const auto& [pair, counts] : gpuPairs) {
      int count = std::max(counts.first, counts.second);
      int sm = std::min(sys_->nodes[pair.first].gpu.sm, sys_->nodes[pair.second].gpu.sm);
      sys_->addNvlinks(pair.first, pair.second, count, nvlinkGeneration(sm),
                       count * nvlinkBwPerLink(sm));
    }
    return okStatus();
  }

  void addPciLinks() {
    for (const auto& [from, target] : pciLinks_) {
      auto bus = normalizeBusId(target);
      int to = bus ? sys_->findBusId(*bus) : -1;
      if (to < 0 || to == from || sys_->nodes[to].kind != NodeKind::kPciSwitch) {
        WEFT_INFO(kTopo, "%s: pcilink to %s: no such switch; ignored", name_.c_str(),
                  target.c_str());
        continue;
      }
      if (sys_->linkBetween(from, to, LinkKind::kLocal) < 0) {
        sys_->connect(from, to, LinkKind::kLocal, kLocalBw);
      }
    }
  }

  void addNotes() {
    int bareGpus = 0, bareNics = 0, unknown = 0;
    for (const Node& n : sys_->nodes) {
      if (n.kind == NodeKind::kGpu && !n.gpu.described) ++bareGpus;
      if (n.kind == NodeKind::kNic && !n.isVirtual &&
          sys_->netsOf(static_cast<int>(&n - &sys_->nodes[0])).empty()) {
        ++bareNics;
      }
      if (n.kind == NodeKind::kPciDevice) ++unknown;
    }
    if (bareGpus > 0) {
      sys_->notes.push_back(strprintf(
          "partial file: %d GPU(s) are bare PCI endpoints (no <gpu>): NVLinks are not in the "
          "file, so only PCIe is modelled between them",
          bareGpus));
    }
    if (bareNics > 0) {
      sys_->notes.push_back(strprintf(
          "partial file: %d NIC(s) are bare PCI endpoints (no <net>): their speed is taken "
          "from their PCIe link",
          bareNics));
    }
    if (unknown > 0) {
      sys_->notes.push_back(strprintf(
          "%d PCI endpoint(s) have no class: NCCL fills them in from the running machine; "
          "here they are devices of unknown kind (neither GPU nor NIC)",
          unknown));
    }
    for (const std::string& bus : selfLinks_) {
      sys_->notes.push_back("GPU " + bus + " lists an NVLink to itself; ignored");
    }
  }

  std::string_view text_;
  const std::string& name_;
  System* sys_;
  std::map<std::string, size_t> busLines_;
  std::vector<PendingNvlink> nvlinks_;
  std::vector<std::pair<int, std::string>> pciLinks_;
  std::set<std::string> selfLinks_;
};

}  // namespace

Status parseNcclXml(std::string_view text, const std::string& name, System* out) {
  *out = System();
  Reader reader(text, name, out);
  Status s = reader.run();
  if (!s.ok()) *out = System();
  return s;
}

}  // namespace weft::topo
