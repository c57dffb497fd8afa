#include "topology/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <map>

#include "src/base/log.h"
#include "topology/bandwidth.h"
#include "topology/busid.h"

namespace weft::topo {
namespace {

// The few NVML declarations used, as nvml.h defines them.
using nvmlReturn = int;
using nvmlDevice = struct nvmlDevice_st*;
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr int kNvmlSuccess = 0;
constexpr unsigned kMaxNvlinks = 18;
constexpr int kNvlinkDeviceGpu = 0, kNvlinkDeviceNpu = 1, kNvlinkDeviceSwitch = 2;

struct Nvml {
  void* lib = nullptr;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  nvmlReturn (*count)(unsigned*) = nullptr;
  nvmlReturn (*handle)(unsigned, nvmlDevice*) = nullptr;
  nvmlReturn (*pciInfo)(nvmlDevice, NvmlPciInfo*) = nullptr;
  nvmlReturn (*name)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*capability)(nvmlDevice, int*, int*) = nullptr;
  nvmlReturn (*linkState)(nvmlDevice, unsigned, int*) = nullptr;
  nvmlReturn (*remotePci)(nvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  nvmlReturn (*remoteType)(nvmlDevice, unsigned, int*) = nullptr;  // optional (newer drivers)

  bool open() {
    // Opened once and kept: drivers do not expect NVML to be unloaded.
    static void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    lib = handle;
    if (!lib) return false;
    bool ok = sym("nvmlInit_v2", &init) && sym("nvmlShutdown", &shutdown) &&
              sym("nvmlDeviceGetCount_v2", &count) &&
              sym("nvmlDeviceGetHandleByIndex_v2", &handle) &&
              sym("nvmlDeviceGetPciInfo_v3", &pciInfo) && sym("nvmlDeviceGetName", &name) &&
              sym("nvmlDeviceGetCudaComputeCapability", &capability);
    if (!ok) return false;
    sym("nvmlDeviceGetNvLinkState", &linkState);
    sym("nvmlDeviceGetNvLinkRemotePciInfo_v2", &remotePci);
    sym("nvmlDeviceGetNvLinkRemoteDeviceType", &remoteType);
    return true;
  }
  template <typename F>
  bool sym(const char* symbol, F* out) {
    *out = reinterpret_cast<F>(dlsym(lib, symbol));
    return *out != nullptr;
  }
};

}  // namespace

int addNvmlGpus(System* s) {
  Nvml nvml;
  if (!nvml.open()) {
    WEFT_INFO(kTopo, "NVML (libnvidia-ml.so.1) not available: no NVIDIA GPU information");
    return 0;
  }
  if (nvml.init() != kNvmlSuccess) {
    WEFT_INFO(kTopo, "nvmlInit failed: no NVIDIA GPU information");
    return 0;
  }
  unsigned n = 0;
  if (nvml.count(&n) != kNvmlSuccess) n = 0;
  std::vector<int> gpuNode(n, -1);
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice dev;
    NvmlPciInfo pci{};
    if (nvml.handle(i, &dev) != kNvmlSuccess || nvml.pciInfo(dev, &pci) != kNvmlSuccess) continue;
    auto bus = normalizeBusId(pci.busId);
    if (!bus) continue;
    int node = s->findBusId(*bus);
    if (node < 0) {
      Node gpu;
      gpu.kind = NodeKind::kGpu;
      gpu.pci.busId = *bus;
      gpu.pci.classCode = "0x030200";
      node = s->addNode(std::move(gpu));
      int cpus = s->nodesOf(NodeKind::kCpu).empty() ? -1 : s->nodesOf(NodeKind::kCpu).front();
      if (cpus >= 0) s->attach(node, cpus, LinkKind::kPcie, kDefaultPcieBw);
      WEFT_INFO(kTopo, "NVML GPU %s was not in the PCI tree; placed under the first CPU",
                bus->c_str());
    }
    Node& g = s->nodes[node];
    g.kind = NodeKind::kGpu;
    int major = 0, minor = 0;
    if (nvml.capability(dev, &major, &minor) == kNvmlSuccess) g.gpu.sm = major * 10 + minor;
    char name[96] = {};
    if (nvml.name(dev, name, sizeof(name)) == kNvmlSuccess) g.gpu.model = name;
    g.gpu.dev = g.gpu.rank = static_cast<int>(i);
    if (g.gpu.gdr < 0) g.gpu.gdr = 0;
    g.gpu.described = true;
    gpuNode[i] = node;
  }
  // NVLinks, counted from each GPU's side.
  std::map<std::pair<int, int>, int> pairs;
  int nvswitch = -1;
  for (unsigned i = 0; i < n; ++i) {
    if (gpuNode[i] < 0 || !nvml.linkState || !nvml.remotePci) continue;
    nvmlDevice dev;
    if (nvml.handle(i, &dev) != kNvmlSuccess) continue;
    int a = gpuNode[i];
    int sm = s->nodes[a].gpu.sm;
    std::map<int, int> toGpu;
    int toSwitch = 0, toCpu = 0;
    std::vector<std::string> switches;
    for (unsigned l = 0; l < kMaxNvlinks; ++l) {
      int active = 0;
      if (nvml.linkState(dev, l, &active) != kNvmlSuccess || active != 1) continue;
      NvmlPciInfo remote{};
      if (nvml.remotePci(dev, l, &remote) != kNvmlSuccess) continue;
      int type = -1;
      if (nvml.remoteType) nvml.remoteType(dev, l, &type);
      auto bus = normalizeBusId(remote.busId);
      int b = bus ? s->findBusId(*bus) : -1;
      if (b >= 0 && s->nodes[b].kind == NodeKind::kGpu && type != kNvlinkDeviceSwitch) {
        ++toGpu[b];
      } else if (type == kNvlinkDeviceNpu) {
        ++toCpu;
      } else {
        ++toSwitch;  // NVSwitch, or a remote NVML cannot name
        if (bus && std::find(switches.begin(), switches.end(), *bus) == switches.end()) {
          switches.push_back(*bus);
        }
      }
    }
    for (auto [b, count] : toGpu) {
      auto key = std::minmax(a, b);
      pairs[{key.first, key.second}] = std::max(pairs[{key.first, key.second}], count);
    }
    if (toSwitch > 0) {
      if (nvswitch < 0) {
        Node sw;
        sw.kind = NodeKind::kNvSwitch;
        sw.name = "NVSwitch";
        nvswitch = s->addNode(std::move(sw));
      }
      for (const std::string& m : switches) {
        auto& members = s->nodes[nvswitch].members;
        if (std::find(members.begin(), members.end(), m) == members.end()) members.push_back(m);
      }
      s->addNvlinks(a, nvswitch, toSwitch, nvlinkGeneration(sm), toSwitch * nvlinkBwPerLink(sm));
    }
    int cpu = s->cpuOf(a);
    if (toCpu > 0 && cpu >= 0) {
      s->addNvlinks(a, cpu, toCpu, nvlinkGeneration(sm), toCpu * nvlinkBwPerLink(sm));
    }
  }
  for (const auto& [pair, count] : pairs) {
    int sm = std::min(s->nodes[pair.first].gpu.sm, s->nodes[pair.second].gpu.sm);
    s->addNvlinks(pair.first, pair.second, count, nvlinkGeneration(sm),
                  count * nvlinkBwPerLink(sm));
  }
  nvml.shutdown();
  WEFT_INFO(kTopo, "NVML: %u GPU(s)", n);
  return static_cast<int>(n);
}

}  // namespace weft::topo
