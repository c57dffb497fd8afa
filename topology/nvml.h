// NVIDIA GPUs and their NVLinks from NVML, opened at run time (libnvidia-ml.so.1) so Weft has no
// build dependency on CUDA. Without a driver it logs at INFO and changes nothing.
#pragma once

#include "topology/system.h"

namespace weft::topo {

// Adds or completes GPUs (compute capability, model, NVML index) and their NVLinks (to GPUs,
// NVSwitches, CPUs). Returns the number of GPUs NVML reported (0 when NVML is absent).
int addNvmlGpus(System* system);

}  // namespace weft::topo
