#include "collectives/memory_face.h"

#include "collectives/stream_copy.h"
#include "transports/cross_memory.h"

namespace weft {
namespace {

Status checkRange(int peer, const PeerBuffer& b, size_t at, size_t bytes) {
  if (b.base == nullptr && b.remote == 0) {
    return errorf(weftInternalError, "rank %d's buffer is out of reach", peer);
  }
  if (at > b.bytes || bytes > b.bytes - at) {
    return errorf(weftInternalError, "rank %d's buffer is too short (%zu bytes)", peer, b.bytes);
  }
  return okStatus();
}

}  // namespace

Status MemoryFace::reach(int peer, BufId buf, size_t at, size_t bytes, char** out) {
  const PeerBuffer b = buffer(peer, buf);
  WEFT_RETURN_IF_ERROR(checkRange(peer, b, at, bytes));
  if (b.base == nullptr) {
    return errorf(weftInternalError, "rank %d's buffer is reached through the kernel: gets only",
                  peer);
  }
  *out = b.base + at;
  return okStatus();
}

Status MemoryFace::get(int peer, BufId buf, size_t at, void* to, size_t bytes, bool stream) {
  const PeerBuffer b = buffer(peer, buf);
  WEFT_RETURN_IF_ERROR(checkRange(peer, b, at, bytes));
  if (b.base != nullptr) {
    copyOut(to, b.base + at, bytes, stream);
    return okStatus();
  }
  Status s = readProcessMemory(b.pid, to, b.remote + at, bytes);
  if (s.code() == weftRemoteError) {  // the process exited: said as the links say it
    return errorf(weftRemoteError, "rank %d (pid %d) exited", peer, static_cast<int>(b.pid));
  }
  if (!s.ok() && peerFailed(peer)) {
    // It left the call with an error (one of its own peers died, say) and may have freed the
    // buffer it posted.
    return errorf(weftRemoteError, "rank %d failed: %s", peer, s.message().c_str());
  }
  return s;
}

}  // namespace weft
