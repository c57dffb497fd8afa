#include "topology/hwloc_import.h"

#include <hwloc.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "src/base/log.h"
#include "src/base/text.h"
#include "topology/bandwidth.h"
#include "topology/busid.h"

namespace weft::topo {
namespace {

enum class OsKind { kGpu, kCoproc, kNetwork, kOpenFabrics, kOther };

// hwloc stores whatever number an XML file gives for an enumerated attribute (bridge_type="0-7",
// osdev_type="99"); reading such a field as its enum type would be undefined, so read the number.
template <class Enum>
int enumValue(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

OsKind osKind(hwloc_obj_t o) {
#if HWLOC_API_VERSION >= 0x00030000
  auto t = o->attr->osdev.types;
  if (t & HWLOC_OBJ_OSDEV_OPENFABRICS) return OsKind::kOpenFabrics;
  if (t & HWLOC_OBJ_OSDEV_NETWORK) return OsKind::kNetwork;
  if (t & HWLOC_OBJ_OSDEV_GPU) return OsKind::kGpu;
  if (t & HWLOC_OBJ_OSDEV_COPROC) return OsKind::kCoproc;
  return OsKind::kOther;
#else
  switch (enumValue(o->attr->osdev.type)) {
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
      return OsKind::kOpenFabrics;
    case HWLOC_OBJ_OSDEV_NETWORK:
      return OsKind::kNetwork;
    case HWLOC_OBJ_OSDEV_GPU:
      return OsKind::kGpu;
    case HWLOC_OBJ_OSDEV_COPROC:
      return OsKind::kCoproc;
    default:
      return OsKind::kOther;
  }
#endif
}

std::vector<hwloc_obj_t> osdevs(hwloc_obj_t pci) {
  std::vector<hwloc_obj_t> out;
  for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
    if (c->type == HWLOC_OBJ_OS_DEVICE) out.push_back(c);
  }
  return out;
}

const char* info(hwloc_obj_t o, const char* name) {
  const char* v = o ? hwloc_obj_get_info_by_name(o, name) : nullptr;
  return v ? v : "";
}

std::string normalizeArch(const std::string& arch) {
  if (arch.rfind("ppc", 0) == 0 || arch.rfind("power", 0) == 0) return "ppc64";
  if (arch == "aarch64" || arch == "arm64") return "arm64";
  return arch;
}

bool isBridge(hwloc_obj_t o) {
  return o && o->type == HWLOC_OBJ_BRIDGE;
}
// A bridge whose upstream side is not PCI is a host bridge: hwloc knows only those two, and a
// file may give any number (a "PCI switch" made of it would have no bus id).
bool isHostBridge(hwloc_obj_t o) {
  return isBridge(o) && enumValue(o->attr->bridge.upstream_type) != HWLOC_OBJ_BRIDGE_PCI;
}

class Importer {
 public:
  Importer(hwloc_topology_t topo, const std::string& name, System* out)
      : topo_(topo), name_(name), sys_(out) {}

  Status run() {
    sys_->source = name_;
    addCpus();
    if (sys_->count(NodeKind::kCpu) == 0) {
      return errorf(weftInvalidArgument, "%s: the hwloc topology has no NUMA node with CPUs",
                    name_.c_str());
    }
    addDevices();
    WEFT_RETURN_IF_ERROR(badBusId_);
    addNvlinks();
    sys_->finalize();
    return okStatus();
  }

 private:
  void addCpus() {
    hwloc_obj_t root = hwloc_get_root_obj(topo_);
    std::string arch = normalizeArch(info(root, "Architecture"));
    int n = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t numa = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
      if (!numa->cpuset || hwloc_bitmap_iszero(numa->cpuset)) {
        WEFT_INFO(kTopo, "%s: NUMA node %u has no CPUs (memory only); skipped", name_.c_str(),
                  numa->os_index);
        continue;
      }
      Node cpu;
      cpu.kind = NodeKind::kCpu;
      cpu.cpu.numaId = static_cast<int>(numa->os_index);
      unsigned c;
      hwloc_bitmap_foreach_begin(c, numa->cpuset) {
        if (c < static_cast<unsigned>(CpuSet::kMaxCpu)) cpu.cpu.cpus.add(static_cast<int>(c));
      }
      hwloc_bitmap_foreach_end();
      hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, numa);
      if (!pkg) {
        // NUMA nodes hang beside the CPU objects: find the package covering the same CPUs.
        pkg = hwloc_get_next_obj_covering_cpuset_by_type(topo_, numa->cpuset, HWLOC_OBJ_PACKAGE,
                                                         nullptr);
      }
      if (pkg) {
        cpu.cpu.packageId = static_cast<int>(pkg->os_index);
        // CPUID brand strings are padded with blanks; hwloc keeps them.
        cpu.cpu.vendor = std::string(trim(info(pkg, "CPUVendor")));
        cpu.cpu.modelName = std::string(trim(info(pkg, "CPUModel")));
        const char* fam = info(pkg, "CPUFamilyNumber");
        const char* mod = info(pkg, "CPUModelNumber");
        if (*fam) cpu.cpu.familyId = atoi(fam);
        if (*mod) cpu.cpu.modelId = atoi(mod);
      }
      cpu.cpu.arch = arch;
      if (cpu.cpu.arch.empty() && cpu.cpu.modelName.find("POWER") != std::string::npos) {
        cpu.cpu.arch = "ppc64";
      }
      cpu.cpu.cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo_, numa->cpuset, HWLOC_OBJ_CORE);
      hwloc_obj_t l3 = nullptr;
      while ((l3 = hwloc_get_next_obj_inside_cpuset_by_type(topo_, numa->cpuset, HWLOC_OBJ_L3CACHE,
                                                            l3))) {
        cpu.cpu.l3Bytes += l3->attr->cache.size;
      }
      cpu.cpu.memoryBytes = numa->attr->numanode.local_memory;
      cpu.name = "CPU" + std::to_string(cpu.cpu.numaId);
      if (sys_->findCpu(cpu.cpu.numaId) >= 0) continue;
      sys_->addNode(std::move(cpu));
    }
  }

  // The CPU node serving a non-I/O object (Package, Group, Machine, ...).
  int cpuFor(hwloc_obj_t o) {
    while (o && !o->nodeset)
      o = o->parent;
    int first = -1;
    if (o && o->nodeset) {
      unsigned i;
      int matches = 0;
      hwloc_bitmap_foreach_begin(i, o->nodeset) {
        int cpu = sys_->findCpu(static_cast<int>(i));
        if (cpu >= 0) {
          if (first < 0) first = cpu;
          ++matches;
        }
      }
      hwloc_bitmap_foreach_end();
      if (matches > 1) {
        WEFT_INFO(kTopo, "%s: I/O attached to several NUMA nodes; using the first", name_.c_str());
      }
    }
    if (first < 0) first = sys_->nodesOf(NodeKind::kCpu).front();
    return first;
  }

  int hostBridgeFor(hwloc_obj_t hb) {
    auto it = made_.find(hb);
    if (it != made_.end()) return it->second;
    Node node;
    node.kind = NodeKind::kHostBridge;
    const auto& down = hb->attr->bridge.downstream.pci;
    node.name =
        strprintf("%04x:[%02x-%02x]", down.domain, down.secondary_bus, down.subordinate_bus);
    // Two host bridges cannot own the same buses; the name is the node's identity.
    for (int other : sys_->nodesOf(NodeKind::kHostBridge)) {
      if (badBusId_.ok() && sys_->nodes[other].name == node.name) {
        badBusId_ = errorf(weftInvalidArgument, "%s: two host bridges own PCI buses %s",
                           name_.c_str(), node.name.c_str());
      }
    }
    int id = sys_->addNode(std::move(node));
    sys_->attach(id, cpuFor(hb->parent), LinkKind::kPcie, kLocalBw);
    made_[hb] = id;
    return id;
  }

  // "dddd:bb:dd.f"; hwloc takes any numbers a file gives, so an impossible or repeated bus id
  // (device over 0x1f, function over 7) is remembered as the file's error.
  std::string busId(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
    std::string id = strprintf("%04x:%02x:%02x.%x", domain, bus, dev, func);
    if (badBusId_.ok() && (!normalizeBusId(id) || sys_->findBusId(id) >= 0)) {
      badBusId_ = errorf(weftInvalidArgument, "%s: PCI bus id %s is %s", name_.c_str(), id.c_str(),
                         normalizeBusId(id) ? "used twice" : "impossible");
    }
    return id;
  }

  void setPci(Node* node, hwloc_obj_t o) {
    const auto& p = o->attr->pcidev;
    node->pci.busId = busId(p.domain, p.bus, p.dev, p.func);
    node->pci.classCode = strprintf("0x%04x00", p.class_id);
    node->pci.vendor = strprintf("0x%04x", p.vendor_id);
    node->pci.device = strprintf("0x%04x", p.device_id);
    node->pci.subsystemVendor = strprintf("0x%04x", p.subvendor_id);
    node->pci.subsystemDevice = strprintf("0x%04x", p.subdevice_id);
  }

  // Links `id` (made from hwloc object `o`, a device or a switch's upstream port) under the node
  // NCCL would put it under: root ports and downstream ports are skipped.
  void place(int id, hwloc_obj_t o) {
    hwloc_obj_t p = o->parent;
    int parent;
    if (isHostBridge(p)) {
      parent = hostBridgeFor(p);
    } else if (isBridge(p)) {
      hwloc_obj_t pp = p->parent;
      if (isHostBridge(pp)) {
        parent = hostBridgeFor(pp);
      } else if (isBridge(pp)) {
        parent = switchFor(pp);
      } else {
        parent = cpuFor(pp);
      }
    } else {
      parent = cpuFor(p);
    }
    double rate = 0;
    int width = 0;
    double speed = o->attr->pcidev.linkspeed;
    if (o->type == HWLOC_OBJ_BRIDGE) speed = o->attr->bridge.upstream.pci.linkspeed;
    pcieLinkFromHwloc(speed, &rate, &width);
    int link = sys_->attach(id, parent, LinkKind::kPcie, pcieBw(rate, width));
    sys_->links[link].pcieRate = rate;
    sys_->links[link].pcieWidth = width;
  }

  int switchFor(hwloc_obj_t usp) {
    auto it = made_.find(usp);
    if (it != made_.end()) return it->second;
    Node node;
    node.kind = NodeKind::kPciSwitch;
    if (enumValue(usp->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_PCI) {
      const auto& p = usp->attr->bridge.upstream.pci;
      node.pci.busId = busId(p.domain, p.bus, p.dev, p.func);
      node.pci.classCode = strprintf("0x%04x00", p.class_id);
      node.pci.vendor = strprintf("0x%04x", p.vendor_id);
      node.pci.device = strprintf("0x%04x", p.device_id);
      node.pci.subsystemVendor = strprintf("0x%04x", p.subvendor_id);
      node.pci.subsystemDevice = strprintf("0x%04x", p.subdevice_id);
    }
    node.name = node.pci.busId;
    int id = sys_->addNode(std::move(node));
    made_[usp] = id;
    place(id, usp);
    return id;
  }

  void addDevices() {
    std::vector<hwloc_obj_t> devices;
    for (hwloc_obj_t o = hwloc_get_next_pcidev(topo_, nullptr); o;
         o = hwloc_get_next_pcidev(topo_, o)) {
      devices.push_back(o);
    }
    std::stable_sort(devices.begin(), devices.end(), [](hwloc_obj_t a, hwloc_obj_t b) {
      const auto &x = a->attr->pcidev, &y = b->attr->pcidev;
      return std::tie(x.domain, x.bus, x.dev, x.func) < std::tie(y.domain, y.bus, y.dev, y.func);
    });
    int gpus = 0, nets = 0, skippedNics = 0;
    for (hwloc_obj_t o : devices) {
      unsigned cls = o->attr->pcidev.class_id;
      unsigned vendor = o->attr->pcidev.vendor_id;
      std::vector<hwloc_obj_t> os = osdevs(o);
      bool gpuOs = std::any_of(os.begin(), os.end(), [](hwloc_obj_t d) {
        return osKind(d) == OsKind::kGpu || osKind(d) == OsKind::kCoproc;
      });
      bool netOs = std::any_of(os.begin(), os.end(), [](hwloc_obj_t d) {
        return osKind(d) == OsKind::kNetwork || osKind(d) == OsKind::kOpenFabrics;
      });
      bool gpu = cls == 0x0302 || cls == 0x0380 || (cls == 0x0300 && (gpuOs || vendor == 0x10de));
      bool nic = !gpu && netOs;
      if ((cls >> 8) == 0x02 && !netOs && !gpu) ++skippedNics;
      if (!gpu && !nic) continue;
      Node node;
      node.kind = gpu ? NodeKind::kGpu : NodeKind::kNic;
      setPci(&node, o);
      if (gpu) {
        for (hwloc_obj_t d : os) {
          if (node.gpu.model.empty()) node.gpu.model = info(d, "GPUModel");
        }
        if (node.gpu.model.empty()) node.gpu.model = info(o, "PCIDevice");
        node.gpu.described = true;
        node.gpu.dev = node.gpu.rank = gpus++;
        node.gpu.sm = smFromGpuModel(node.gpu.model);
        node.gpu.gdr = 0;
      }
      int id = sys_->addNode(std::move(node));
      made_[o] = id;
      for (hwloc_obj_t d : os)
        osOwner_[d] = id;
      place(id, o);
      if (nic) addPorts(id, os, &nets);
    }
    if (skippedNics > 0) {
      WEFT_INFO(kTopo,
                "%s: %d network function(s) without an OS device (unused virtual "
                "functions) skipped",
                name_.c_str(), skippedNics);
    }
  }

  void addPorts(int nic, const std::vector<hwloc_obj_t>& os, int* nets) {
    std::vector<std::string> fabrics, interfaces;
    for (hwloc_obj_t d : os) {
      if (!d->name) continue;
      if (osKind(d) == OsKind::kOpenFabrics) fabrics.push_back(d->name);
      if (osKind(d) == OsKind::kNetwork) interfaces.push_back(d->name);
    }
    auto add = [&](const std::string& name, const std::string& rdma, const std::string& ifname) {
      Node net;
      net.kind = NodeKind::kNet;
      net.name = name;
      net.net.dev = (*nets)++;
      net.net.rdmaDevice = rdma;
      net.net.ifname = ifname;
      int id = sys_->addNode(std::move(net));
      sys_->attach(id, nic, LinkKind::kNetwork, netBw(0));
    };
    if (!fabrics.empty()) {
      for (const std::string& f : fabrics)
        add(f, f, interfaces.empty() ? "" : interfaces.front());
    } else {
      for (const std::string& i : interfaces)
        add(i, "", i);
    }
  }

  int nodeForDistanceObject(hwloc_obj_t o) {
    if (!o) return -1;
    auto it = osOwner_.find(o);
    if (it != osOwner_.end()) return it->second;
    auto made = made_.find(o);
    if (made != made_.end()) return made->second;
    if (o->type == HWLOC_OBJ_PACKAGE || o->type == HWLOC_OBJ_NUMANODE ||
        o->type == HWLOC_OBJ_MACHINE || o->type == HWLOC_OBJ_GROUP) {
      return cpuFor(o);
    }
    return -1;
  }

  void addNvlinks() {
    unsigned nr = 0;
    if (hwloc_distances_get_by_name(topo_, "NVLinkBandwidth", &nr, nullptr, 0) != 0 || nr == 0) {
      return;
    }
    std::vector<hwloc_distances_s*> all(nr);
    if (hwloc_distances_get_by_name(topo_, "NVLinkBandwidth", &nr, all.data(), 0) != 0) return;
    for (unsigned k = 0; k < nr; ++k) {
      hwloc_distances_s* d = all[k];
      unsigned n = d->nbobjs;
      std::vector<int> node(n);
      for (unsigned i = 0; i < n; ++i)
        node[i] = nodeForDistanceObject(d->objs[i]);
      for (unsigned i = 0; i < n; ++i) {
        for (unsigned j = i + 1; j < n; ++j) {
          uint64_t v = std::max(d->values[i * n + j], d->values[j * n + i]);
          int a = node[i], b = node[j];
          if (v == 0 || a < 0 || b < 0 || a == b) continue;
          if (sys_->nodes[a].kind != NodeKind::kGpu) std::swap(a, b);
          if (sys_->nodes[a].kind != NodeKind::kGpu) continue;
          // NVLinks join a GPU to GPUs, NVSwitches and CPUs only (all that NCCL's XML can say).
          const NodeKind peer = sys_->nodes[b].kind;
          if (peer != NodeKind::kGpu && peer != NodeKind::kCpu && peer != NodeKind::kNvSwitch) {
            sys_->notes.push_back(strprintf(
                "hwloc's NVLinkBandwidth links the GPU at %s to the device at %s, which is no GPU, "
                "CPU or NVSwitch; ignored",
                sys_->nodes[a].pci.busId.c_str(), sys_->nodes[b].pci.busId.c_str()));
            continue;
          }
          // A GPU's NVLinks to a CPU reach its own CPU (as NCCL's XML has them): a matrix that
          // links it to another one names the wrong objects.
          if (peer == NodeKind::kCpu && sys_->cpuOf(a) != b) {
            sys_->notes.push_back(strprintf(
                "hwloc's NVLinkBandwidth links the GPU at %s to %s, which is not its CPU; ignored",
                sys_->nodes[a].pci.busId.c_str(), sys_->nodes[b].name.c_str()));
            continue;
          }
          int sm = sys_->nodes[a].gpu.sm;
          if (peer == NodeKind::kGpu) sm = std::min(sm, sys_->nodes[b].gpu.sm);
          int gen = nvlinkGeneration(sm);
          int count =
              static_cast<int>(std::lround(static_cast<double>(v) / 1000.0 / nvlinkRawRate(gen)));
          if (count < 1) count = 1;
          sys_->addNvlinks(a, b, count, gen, count * nvlinkBwPerLink(sm));
        }
      }
      hwloc_distances_release(topo_, d);
    }
    sys_->notes.push_back("NVLinks from hwloc's NVLinkBandwidth distances");
  }

  hwloc_topology_t topo_;
  const std::string& name_;
  System* sys_;
  std::map<hwloc_obj_t, int> made_;     // PCI objects and bridges already in the system
  std::map<hwloc_obj_t, int> osOwner_;  // OS devices -> the node of their PCI device
  Status badBusId_ = okStatus();        // the first impossible or repeated bus id
};

}  // namespace

int smFromGpuModel(const std::string& model) {
  static const struct {
    const char* key;
    int sm;
  } kModels[] = {{"B200", 100}, {"B100", 100}, {"GB200", 100}, {"H200", 90}, {"H100", 90},
                 {"H800", 90},  {"GH200", 90}, {"L40", 89},    {"L4", 89},   {"A100", 80},
                 {"A800", 80},  {"A30", 80},   {"A10", 86},    {"A40", 86},  {"A16", 86},
                 {"T4", 75},    {"V100", 70},  {"P100", 60},   {"P40", 61},  {"K80", 37},
                 {"M2070", 20}, {"M2090", 20}};
  for (const auto& m : kModels) {
    if (model.find(m.key) != std::string::npos) return m.sm;
  }
  return 0;
}

Status systemFromHwloc(struct hwloc_topology* topology, const std::string& name, System* out) {
  *out = System();
  Importer importer(topology, name, out);
  Status s = importer.run();
  if (!s.ok()) *out = System();
  return s;
}

}  // namespace weft::topo
