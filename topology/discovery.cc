#include "topology/discovery.h"

#include <unistd.h>

#include "src/base/log.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/ibverbs.h"
#include "topology/locality.h"
#include "topology/nvml.h"

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>

#include "topology/hwloc_import.h"
#endif

namespace weft::topo {
namespace {

#ifdef WEFT_HAVE_HWLOC
// hwloc unloads its plugins when the last topology goes, and some (the PCI one, through
// libpciaccess) keep memory in static variables that is then lost. One topology kept for the
// life of the process keeps them loaded. volatile, so that an optimising compiler keeps the
// pointer that LeakSanitizer follows to it, though nothing reads it.
void keepHwlocPluginsLoaded() {
  static hwloc_topology_t volatile anchor = [] {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) t = nullptr;
    return t;
  }();
  (void)anchor;
}

Status fromHwloc(const std::string& name, System* out) {
  keepHwlocPluginsLoaded();
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return systemError("hwloc_topology_init", errno);
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    int err = errno;
    hwloc_topology_destroy(topo);
    return systemError("hwloc_topology_load", err);
  }
  Status s = systemFromHwloc(topo, name, out);
  hwloc_topology_destroy(topo);
  return s;
}
#endif

}  // namespace

Status discoverLocalSystem(System* out) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string name = std::string("this machine (") + host + ")";
  Sysfs sysfs;
  bool done = false;
#ifdef WEFT_HAVE_HWLOC
  Status s = fromHwloc(name, out);
  if (s.ok()) {
    out->format = "discovery (" + hwlocDescription() + ", sysfs)";
    done = true;
  } else {
    WEFT_INFO(kTopo, "hwloc discovery failed (%s); using sysfs", s.message().c_str());
  }
#else
  WEFT_INFO(kTopo, "built without hwloc: discovering with sysfs only");
#endif
  if (!done) WEFT_RETURN_IF_ERROR(systemFromSysfs(sysfs, name, out));
  enrichFromSysfs(out, sysfs);
  int gpus = addNvmlGpus(out);
  int ports = addVerbsPorts(out, sysfs);
  if (gpus == 0) out->notes.push_back("NVML not available or no NVIDIA GPU: GPU details skipped");
  if (ports == 0) out->notes.push_back("no InfiniBand/RoCE port (ibverbs absent or no device)");
  std::string speeds = assumedNetSpeedNote(*out, "sysfs");
  if (!speeds.empty()) out->notes.push_back(speeds);
  out->discovered = true;
  out->finalize();
  return okStatus();
}

}  // namespace weft::topo
