#include "topology/ibverbs.h"

#include <dlfcn.h>

#include <cmath>

#include "src/base/log.h"
#include "topology/bandwidth.h"

namespace weft::topo {

namespace {

// Opened once and never closed: libibverbs keeps its device list in static memory, which would
// leak (and confuse leak checkers) if the library were unloaded.
void* verbsLibrary() {
  static void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib;
}

}  // namespace

std::vector<std::string> listVerbsDevices() {
  std::vector<std::string> out;
  void* lib = verbsLibrary();
  if (!lib) {
    WEFT_INFO(kTopo, "libibverbs.so.1 not available: no InfiniBand/RoCE information");
    return out;
  }
  using GetList = void** (*)(int*);
  using FreeList = void (*)(void**);
  using GetName = const char* (*)(void*);
  auto getList = reinterpret_cast<GetList>(dlsym(lib, "ibv_get_device_list"));
  auto freeList = reinterpret_cast<FreeList>(dlsym(lib, "ibv_free_device_list"));
  auto getName = reinterpret_cast<GetName>(dlsym(lib, "ibv_get_device_name"));
  if (getList && freeList && getName) {
    int n = 0;
    void** list = getList(&n);
    for (int i = 0; list && i < n; ++i) {
      if (const char* name = getName(list[i])) out.push_back(name);
    }
    if (list) freeList(list);
  }
  WEFT_INFO(kTopo, "ibverbs: %zu device(s)", out.size());
  return out;
}

int addVerbsPorts(System* s, const Sysfs& sysfs) {
  int added = 0;
  for (const std::string& device : listVerbsDevices()) {
    for (const SysfsIbPort& port : sysfs.ibPorts(device)) {
      std::string name = port.port == 1 ? device : device + "." + std::to_string(port.port);
      int net = s->findNet(name);
      if (net < 0) {
        int nic = port.busId.empty() ? -1 : s->findBusId(port.busId);
        if (nic < 0) {
          Node n;
          n.kind = NodeKind::kNic;
          n.pci.busId = port.busId;
          n.pci.classCode = "0x020700";
          n.isVirtual = port.busId.empty();
          nic = s->addNode(std::move(n));
          std::vector<int> cpus = s->nodesOf(NodeKind::kCpu);
          if (!cpus.empty()) s->attach(nic, cpus.front(), LinkKind::kPcie, kLocalBw);
        }
        Node n;
        n.kind = NodeKind::kNet;
        n.name = name;
        n.net.dev = s->count(NodeKind::kNet);
        net = s->addNode(std::move(n));
        s->attach(net, nic, LinkKind::kNetwork, netBw(0));
      }
      Node& n = s->nodes[net];
      n.net.rdmaDevice = device;
      n.net.port = port.port;
      n.net.linkLayer = port.linkLayer;
      if (n.net.ifname.empty() && static_cast<size_t>(port.port - 1) < port.netdevs.size()) {
        n.net.ifname = port.netdevs[static_cast<size_t>(port.port - 1)];
      }
      if (port.rateGbps > 0) n.net.speedMbps = static_cast<int>(std::lround(port.rateGbps * 1000));
      for (int l : n.links) {
        if (s->links[l].kind == LinkKind::kNetwork) s->links[l].bw = netBw(n.net.speedMbps);
      }
      ++added;
    }
  }
  return added;
}

}  // namespace weft::topo
