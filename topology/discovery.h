// Discovery of this machine: hwloc when Weft is built with it (else sysfs), then sysfs for PCIe
// link speeds and network speeds, NVML for NVIDIA GPUs and NVLinks, and ibverbs for InfiniBand
// and RoCE ports. Whatever is missing is logged at INFO and skipped; discovery fails only when
// not even the CPUs can be read.
#pragma once

#include <string>

#include "src/base/status.h"
#include "topology/sysfs.h"
#include "topology/system.h"

namespace weft::topo {

Status discoverLocalSystem(System* out);

// The sysfs-only model (no hwloc): NUMA nodes, cores and caches, and the PCI tree of GPUs and
// NICs as NCCL builds it from sysfs paths.
Status systemFromSysfs(const Sysfs& sysfs, const std::string& name, System* out);

// Completes a model from sysfs: exact PCIe link speeds and widths, network interface speeds, and
// interfaces with no PCI device (containers, bonds) that are up, as virtual NICs.
void enrichFromSysfs(System* system, const Sysfs& sysfs);

}  // namespace weft::topo
