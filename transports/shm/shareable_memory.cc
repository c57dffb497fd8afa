// The memory face for the caller's buffers (transports/shareable_memory.h), over memfds.
#include "transports/shareable_memory.h"

#include "transports/shm/peer_memory.h"
#include "transports/shm/shared_memory.h"

namespace weft {

Status allocateShareable(size_t bytes, void** out) {
  return shm::allocateShared(bytes, out);
}

Status freeShareable(void* p) {
  return shm::freeShared(p);
}

bool findShareable(const void* p, size_t bytes, MemoryRef* out) {
  return shm::findShared(p, bytes, out);
}

PeerMappings::PeerMappings() : memory_(std::make_unique<shm::PeerMemory>()) {}
PeerMappings::~PeerMappings() = default;

Status PeerMappings::map(pid_t pid, const MemoryRef& ref, size_t bytes, ByteRange used,
                         char** out) {
  return memory_->map(pid, ref.fd, ref.serial, ref.offset, bytes, used, out);
}

void PeerMappings::beginCall() {
  memory_->beginCall();
}

}  // namespace weft
