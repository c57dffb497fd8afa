#include "collectives/mapped.h"

#include "collectives/line_slice.h"
#include "transports/shareable_memory.h"

namespace weft {

MappedNeeds mappedNeeds(const CollArgs& a, int r) {
  switch (a.kind) {
    case CollKind::kAllReduce:
      return {true, true};
    case CollKind::kReduce:
      return {true, r == a.root};
    case CollKind::kReduceScatter:
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      return {true, false};
    case CollKind::kBroadcast:
      return {r == a.root, false};
    default:
      return {false, false};
  }
}

ByteRange mappedShare(const CollArgs& a, size_t elemSize) {
  const size_t block = a.count * elemSize;
  switch (a.kind) {
    case CollKind::kAllReduce:
    case CollKind::kReduce: {
      auto [first, count] = lineSlice(a.count, elemSize, a.nranks, a.rank);
      return {first * elemSize, count * elemSize};
    }
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return {static_cast<size_t>(a.rank) * block, block};
    default:  // all_gather, broadcast: the whole input
      return {0, SIZE_MAX};
  }
}

bool describeMapped(const CollArgs& a, const void* send, const void* recv, size_t elemSize,
                    MappedPost* post) {
  *post = MappedPost();
  const MappedNeeds needs = mappedNeeds(a, a.rank);
  MemoryRef range;
  if (needs.send) {
    if (!findShareable(send, sendBufferCount(a) * elemSize, &range)) return false;
    post->sendFd = range.fd;
    post->sendSerial = range.serial;
    post->sendOffset = range.offset;
  }
  if (needs.recv) {
    if (!findShareable(recv, recvBufferCount(a) * elemSize, &range)) return false;
    post->recvFd = range.fd;
    post->recvSerial = range.serial;
    post->recvOffset = range.offset;
  }
  return true;
}

}  // namespace weft
