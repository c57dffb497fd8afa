// PCI bus ids: "dddd:bb:dd.f", as NCCL, hwloc and sysfs print them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace weft::topo {

// Normalises a bus id to lower-case "dddd:bb:dd.f". Accepts "bb:dd.f" (domain 0) and domains
// of up to 8 hex digits (NVML's "00000000:07:00.0"); trailing text after the function digit is
// not allowed. Empty when the text is not a bus id.
std::optional<std::string> normalizeBusId(std::string_view text);

}  // namespace weft::topo
