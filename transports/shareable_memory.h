// The memory face for the caller's buffers: memory that the ranks on one host can map in place
// (weftMemAlloc, as ncclMemAlloc), where a buffer lies in such memory as its peers name it, and
// the peers' such buffers mapped into this process. Shared memory provides it
// (transports/shm/shared_memory.h, peer_memory.h); collectives and the C API use only this.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "src/base/status.h"

namespace weft {

namespace shm {
class PeerMemory;
}

// Where a buffer lies in shareable memory: its allocation (as the owner's process numbers and
// counts it) and the buffer's offset there. A peer checks all of it before trusting it.
struct MemoryRef {
  int32_t fd = -1;
  uint64_t serial = 0;
  uint64_t offset = 0;
};

// Bytes [from, from + bytes) of a buffer.
struct ByteRange {
  size_t from = 0;
  size_t bytes = 0;
};

// At least `bytes` of zeroed, page-aligned shareable memory.
Status allocateShareable(size_t bytes, void** out);
// Frees what allocateShareable returned; weftInvalidArgument for any other pointer.
Status freeShareable(void* p);
// Whether [p, p + bytes) lies inside one shareable allocation; *out says where.
bool findShareable(const void* p, size_t bytes, MemoryRef* out);

// Peers' shareable buffers mapped here, kept for the calls that name them again.
class PeerMappings {
 public:
  PeerMappings();
  ~PeerMappings();
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;

  // Where `bytes` of process `pid`'s buffer at `ref` lie in this process, with the `used` part
  // of them ready to touch; a wrong reference gives weftRemoteError, not a wild pointer.
  Status map(pid_t pid, const MemoryRef& ref, size_t bytes, ByteRange used, char** out);
  // Starts a call: what map() returns from here on stays mapped until the next beginCall().
  void beginCall();

 private:
  std::unique_ptr<shm::PeerMemory> memory_;
};

}  // namespace weft
