// Entry points shared by the libFuzzer targets and the bounded fuzz test: each takes any bytes,
// must never crash, and checks what must hold for every file the readers accept.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::topo::fuzz {

// NCCL topology XML: parse; when accepted, export and read back to the same graph.
int ncclXml(const uint8_t* data, size_t size);
// nvidia-smi topo -m: parse; when accepted, the same round trip through NCCL XML.
int nvsmiMatrix(const uint8_t* data, size_t size);
// hwloc XML, as the library reads a file: text the format check takes for hwloc XML goes
// through parseHwlocXml (downgrade of 3.0 files, hwloc's loader, the import); when accepted,
// the same round trip through NCCL XML. Without hwloc in the build it only checks refusal.
int hwlocXml(const uint8_t* data, size_t size);

}  // namespace weft::topo::fuzz
