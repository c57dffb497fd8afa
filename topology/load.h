// Loading a system: from any supported topology file (format recognised from the content), or
// for this machine, from WEFT_TOPO_FILE when it is set and discovery otherwise.
#pragma once

#include <string>

#include "src/base/status.h"
#include "topology/system.h"

namespace weft::topo {

// NCCL topology XML, hwloc XML or nvidia-smi topo -m. Errors (weftInvalidArgument for bad
// content, weftSystemError for I/O) name the file and what is wrong with it.
Status loadTopologyFile(const std::string& path, System* out);

// Parses a file's text (no I/O); `name` starts error messages.
Status parseTopologyText(std::string_view text, const std::string& name, System* out);

// `topoFile` when not empty, else discovery of this machine.
Status loadSystemFrom(const std::string& topoFile, System* out);

// This machine (hwloc/sysfs/NVML/ibverbs) or, when WEFT_TOPO_FILE is set, that file.
Status loadLocalSystem(System* out);

}  // namespace weft::topo
