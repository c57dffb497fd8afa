// Reads NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE): full dumps with <gpu>,
// <nvlink> and <nic><net>, and partial files whose GPUs and NICs are bare PCI endpoints.
#pragma once

#include <string>
#include <string_view>

#include "src/base/status.h"
#include "topology/system.h"

namespace weft::topo {

// Parses `text`; `name` (the file) starts every error message. Refuses files that are not
// well-formed XML, have another root element, repeat a bus id or NUMA id, or hold NVLinks to
// GPUs that are not in the file.
Status parseNcclXml(std::string_view text, const std::string& name, System* out);

}  // namespace weft::topo
