// The sysfs half of discovery: a whole model from sysfs, and the sysfs details added to one.
#include <algorithm>
#include <map>

#include "src/base/log.h"
#include "topology/bandwidth.h"
#include "topology/discovery.h"

namespace weft::topo {
namespace {

std::string normalizeArch(const std::string& arch) {
  if (arch.rfind("ppc", 0) == 0) return "ppc64";
  if (arch == "aarch64") return "arm64";
  return arch;
}

void setLink(System* s, int node, const std::string& speed, int width) {
  Node& n = s->nodes[node];
  n.pci.linkSpeed = speed;
  n.pci.linkWidth = width > 0 ? std::to_string(width) : "";
  for (int l : n.links) {
    Link& link = s->links[l];
    if (link.kind != LinkKind::kPcie || link.other(node) != n.parent) continue;
    link.pcieRate = pcieRateGts(speed);
    link.pcieWidth = width;
    link.bw = pcieBw(link.pcieRate, width);
  }
}

class SysfsBuilder {
 public:
  SysfsBuilder(const Sysfs& fs, System* out) : fs_(fs), sys_(out) {}

  void run() {
    addCpus();
    std::map<std::string, std::vector<SysfsNet>> netsByBus;
    for (const SysfsNet& n : fs_.netInterfaces()) {
      if (!n.busId.empty()) netsByBus[n.busId].push_back(n);
    }
    std::map<std::string, bool> ibBus;
    for (const std::string& dev : fs_.list("/sys/class/infiniband")) {
      for (const SysfsIbPort& p : fs_.ibPorts(dev))
        ibBus[p.busId] = true;
    }
    int gpus = 0, netDev = 0;
    for (const std::string& bus : fs_.pciDevices()) {
      auto p = fs_.pci(bus);
      if (!p) continue;
      unsigned cls = p->classCode >> 8;
      bool gpu = cls == 0x0302 || cls == 0x0380 || (cls == 0x0300 && p->vendor == "0x10de");
      bool nic = !gpu && (netsByBus.count(bus) || ibBus.count(bus));
      if (!gpu && !nic) continue;
      Node node;
      node.kind = gpu ? NodeKind::kGpu : NodeKind::kNic;
      fill(&node, *p);
      if (gpu) {
        node.gpu.described = true;
        node.gpu.dev = node.gpu.rank = gpus++;
        node.gpu.sm = 0;
        node.gpu.gdr = 0;
      }
      int id = sys_->addNode(std::move(node));
      made_[bus] = id;
      place(id, *p);
      if (nic) {
        for (const SysfsNet& n : netsByBus[bus]) {
          Node net;
          net.kind = NodeKind::kNet;
          net.name = n.name;
          net.net.ifname = n.name;
          net.net.dev = netDev++;
          net.net.speedMbps = n.speedMbps;
          int nid = sys_->addNode(std::move(net));
          sys_->attach(nid, id, LinkKind::kNetwork, netBw(n.speedMbps));
        }
      }
    }
  }

 private:
  void addCpus() {
    SysfsCpuInfo info = fs_.cpuInfo();
    for (const SysfsNuma& numa : fs_.numaNodes()) {
      if (numa.cpus.empty()) {
        WEFT_INFO(kTopo, "NUMA node %d has no CPUs (memory only); skipped", numa.id);
        continue;
      }
      Node cpu;
      cpu.kind = NodeKind::kCpu;
      cpu.cpu.numaId = numa.id;
      cpu.cpu.cpus = numa.cpus;
      cpu.cpu.packageId = fs_.packageOf(numa.cpus.cpus().front());
      cpu.cpu.cores = fs_.coresIn(numa.cpus);
      cpu.cpu.l3Bytes = fs_.l3BytesIn(numa.cpus);
      cpu.cpu.memoryBytes = numa.memoryBytes;
      cpu.cpu.arch = normalizeArch(info.arch);
      cpu.cpu.vendor = info.vendor;
      cpu.cpu.familyId = info.family;
      cpu.cpu.modelId = info.model;
      cpu.cpu.modelName = info.modelName;
      cpu.name = "CPU" + std::to_string(numa.id);
      sys_->addNode(std::move(cpu));
    }
  }

  void fill(Node* node, const SysfsPci& p) {
    node->pci.busId = p.busId;
    node->pci.classCode = strprintf("0x%06x", p.classCode);
    node->pci.vendor = p.vendor;
    node->pci.device = p.device;
    node->pci.subsystemVendor = p.subsystemVendor;
    node->pci.subsystemDevice = p.subsystemDevice;
    if (node->kind != NodeKind::kNic) node->name = p.busId;  // a NIC is named by its port
  }

  int cpuFor(int numa) {
    int cpu = numa >= 0 ? sys_->findCpu(numa) : -1;
    if (cpu < 0) cpu = sys_->nodesOf(NodeKind::kCpu).front();
    return cpu;
  }

  // As NCCL: a device hangs from the switch two levels up its sysfs path (skipping the
  // downstream or root port), or from the root complex.
  void place(int id, const SysfsPci& p) {
    int parent;
    int k = static_cast<int>(p.chain.size());
    if (k >= 3) {
      parent = switchFor(p.chain[static_cast<size_t>(k - 3)], p.numaNode);
    } else {
      parent = hostBridgeFor(p.rootComplex, p.numaNode);
    }
    sys_->attach(id, parent, LinkKind::kPcie, kDefaultPcieBw);
    setLink(sys_, id, p.linkSpeed, p.linkWidth);
  }

  int switchFor(const std::string& bus, int numa) {
    auto it = made_.find(bus);
    if (it != made_.end()) return it->second;
    auto p = fs_.pci(bus);
    Node node;
    node.kind = NodeKind::kPciSwitch;
    if (p) fill(&node, *p);
    node.pci.busId = bus;
    node.name = bus;
    int id = sys_->addNode(std::move(node));
    made_[bus] = id;
    if (p) {
      if (p->numaNode < 0) p->numaNode = numa;
      place(id, *p);
    } else {
      sys_->attach(id, cpuFor(numa), LinkKind::kPcie, kDefaultPcieBw);
    }
    return id;
  }

  int hostBridgeFor(const std::string& root, int numa) {
    std::string key = "hb:" + root;
    auto it = made_.find(key);
    if (it != made_.end()) return it->second;
    Node node;
    node.kind = NodeKind::kHostBridge;
    node.name = root.empty() ? "root" : root;
    int id = sys_->addNode(std::move(node));
    sys_->attach(id, cpuFor(numa), LinkKind::kPcie, kLocalBw);
    made_[key] = id;
    return id;
  }

  const Sysfs& fs_;
  System* sys_;
  std::map<std::string, int> made_;
};

}  // namespace

Status systemFromSysfs(const Sysfs& sysfs, const std::string& name, System* out) {
  *out = System();
  out->source = name;
  out->format = "discovery (sysfs)";
  SysfsBuilder builder(sysfs, out);
  builder.run();
  if (out->count(NodeKind::kCpu) == 0) {
    *out = System();
    return errorf(weftSystemError, "%s: no CPU could be read from sysfs", name.c_str());
  }
  out->finalize();
  return okStatus();
}

void enrichFromSysfs(System* s, const Sysfs& fs) {
  // Exact PCIe links where sysfs has them.
  for (size_t i = 0; i < s->nodes.size(); ++i) {
    const Node& n = s->nodes[i];
    if (n.pci.busId.empty() || n.kind == NodeKind::kNet) continue;
    auto p = fs.pci(n.pci.busId);
    if (!p || (p->linkSpeed.empty() && p->linkWidth == 0)) continue;
    setLink(s, static_cast<int>(i), p->linkSpeed, p->linkWidth);
  }
  // Interface speeds; interfaces without a PCI device that are up.
  std::vector<SysfsNet> nets = fs.netInterfaces();
  for (const SysfsNet& n : nets) {
    int net = s->findNet(n.name);
    if (net < 0) {
      for (size_t i = 0; i < s->nodes.size() && net < 0; ++i) {
        if (s->nodes[i].kind == NodeKind::kNet && s->nodes[i].net.ifname == n.name) {
          net = static_cast<int>(i);
        }
      }
    }
    if (net >= 0) {
      Node& node = s->nodes[net];
      if (node.net.ifname.empty()) node.net.ifname = n.name;
      if (n.speedMbps > 0 && node.net.speedMbps <= 0) {
        node.net.speedMbps = n.speedMbps;
        for (int l : node.links) {
          if (s->links[l].kind == LinkKind::kNetwork) s->links[l].bw = netBw(n.speedMbps);
        }
      }
      continue;
    }
    bool up = n.operstate == "up" || n.operstate == "unknown";
    if (!n.busId.empty() || n.type == 772 || !up) continue;
    std::vector<int> cpus = s->nodesOf(NodeKind::kCpu);
    if (cpus.empty()) continue;
    Node nic;
    nic.kind = NodeKind::kNic;
    nic.isVirtual = true;
    int id = s->addNode(std::move(nic));
    s->attach(id, cpus.front(), LinkKind::kPcie, kLocalBw);
    Node port;
    port.kind = NodeKind::kNet;
    port.name = n.name;
    port.net.ifname = n.name;
    port.net.dev = s->count(NodeKind::kNet);
    port.net.speedMbps = n.speedMbps;
    int pid = s->addNode(std::move(port));
    s->attach(pid, id, LinkKind::kNetwork, netBw(n.speedMbps));
    WEFT_INFO(kTopo, "interface %s has no PCI device; added as a virtual NIC on CPU%d",
              n.name.c_str(), s->nodes[cpus.front()].cpu.numaId);
  }
}

}  // namespace weft::topo
