// Memory that other processes on this host can map (weftMemAlloc): each allocation is a memfd
// whose first page names it (magic, a process-wide serial, its size), then the caller's bytes.
// Ranks of an all-local communicator whose buffers all lie in such memory map each other's and
// read and write them in place (collectives/mapped.h). A peer opens the memfd through
// /proc/<pid>/fd, as it opens shm segments, and checks the first page before trusting it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/base/status.h"
#include "transports/shareable_memory.h"

namespace weft::shm {

// The first page of every allocation.
struct SharedHeader {
  uint64_t magic;
  uint64_t serial;  // unique among this process's allocations, never reused
  uint64_t bytes;   // the memfd's size, this page included
};
constexpr uint64_t kSharedMagic = 0x4d454d5446455757ull;  // "WWEFTMEM"
constexpr size_t kSharedHeaderBytes = 4096;

// Where a buffer lies in an allocation: the memfd (as this process numbers it), the allocation's
// serial, and the buffer's offset from the memfd's start.
using SharedRange = MemoryRef;

constexpr size_t kHugePageBytes = size_t{2} << 20;

// Asks for huge pages (MADV_HUGEPAGE) for the whole kHugePageBytes steps of a mapping of an
// allocation, its owner's or a peer's: on a VM, 4 KiB pages that several processes map cost each
// many times what a page of its own does. A host whose shmem_enabled is advise needs the request;
// the tail, and mappings under a step, keep 4 KiB pages, so no huge page reaches past the memfd's
// end. The peer asks too, for the pages its populate touches first.
void adviseHugePages(void* base, size_t bytes);

// At least `bytes` of zeroed, page-aligned memory.
Status allocateShared(size_t bytes, void** out);
// Frees what allocateShared returned; weftInvalidArgument for any other pointer.
Status freeShared(void* p);
// Whether [p, p + bytes) lies inside one allocation; *out says where.
bool findShared(const void* p, size_t bytes, SharedRange* out);

}  // namespace weft::shm
