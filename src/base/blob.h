// Blob: bytes one layer carries for another without reading them, e.g. what a transport
// publishes about a rank, all-gathered through the bootstrap.
#pragma once

#include <cstdint>
#include <vector>

namespace weft {

using Blob = std::vector<uint8_t>;

}  // namespace weft
