#include "collectives/mapped.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "collectives/line_slice.h"
#include "collectives/stream_copy.h"
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

void MappedWork::start(const CollArgs& args, size_t elemSize, ReduceFn reduce, bool stream) {
  args_ = args;
  elemSize_ = elemSize;
  reduce_ = reduce;
  stream_ = stream;
  perPiece_ = std::max<size_t>(1, kPieceBytes / elemSize);
  if (stream_ && (args.kind == CollKind::kAllReduce || args.kind == CollKind::kReduce)) {
    scratch_.resize(perPiece_ * elemSize);
  }
  first_ = 0;
  count_ = args.count;
  perBlock_ = 0;
  const int me = args.rank;
  switch (args.kind) {
    case CollKind::kAllReduce:
    case CollKind::kReduce:
      std::tie(first_, count_) = lineSlice(args.count, elemSize, args.nranks, me);
      break;
    case CollKind::kBroadcast:
      if (me == args.root && b_.recv[me] == b_.send[me]) count_ = 0;
      break;
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      perBlock_ = (count_ + perPiece_ - 1) / perPiece_;
      pieces_ = perBlock_ * static_cast<size_t>(args.nranks);
      return;
    default:
      break;
  }
  pieces_ = (count_ + perPiece_ - 1) / perPiece_;
}

void MappedWork::copy(char* to, const char* from, size_t bytes) const {
  if (to != from && bytes > 0) copyOut(to, from, bytes, stream_);
}

void MappedWork::reduceInto(char* dst, int block, size_t first, size_t count, int from) const {
  const int n = args_.nranks;
  const size_t at = (static_cast<size_t>(block) * args_.count + first) * elemSize_;
  if (n == 1) {  // a group of one (the unit tests' smallest): a copy
    memmove(dst, b_.send[from] + at, count * elemSize_);
    return;
  }
  reduce_(dst, b_.send[from] + at, b_.send[(from + 1) % n] + at, count);
  for (int k = 2; k < n; ++k)
    reduce_(dst, dst, b_.send[(from + k) % n] + at, count);
}

void MappedWork::run(size_t piece, Traffic* traffic) {
  const int n = args_.nranks;
  const int me = args_.rank;
  const size_t es = elemSize_;
  const auto peers = static_cast<size_t>(n - 1);
  if (perBlock_ > 0) {  // all_gather, all_to_all: the next peer's block first, this rank's last
    const int p = (me + 1 + static_cast<int>(piece / perBlock_)) % n;
    const size_t first = piece % perBlock_ * perPiece_;
    const size_t bytes = std::min(perPiece_, count_ - first) * es;
    const size_t block = args_.count * es;
    const size_t from = args_.kind == CollKind::kAllToAll ? static_cast<size_t>(me) * block : 0;
    copy(b_.recv[me] + static_cast<size_t>(p) * block + first * es, b_.send[p] + from + first * es,
         bytes);
    if (p != me) traffic->received += bytes;
    return;
  }
  const size_t first = first_ + piece * perPiece_;
  const size_t count = std::min(perPiece_, first_ + count_ - first);
  const size_t at = first * es;
  const size_t bytes = count * es;
  if (args_.kind != CollKind::kBroadcast) traffic->received += peers * bytes;  // reduceInto
  switch (args_.kind) {
    case CollKind::kAllReduce: {
      char* sum = stream_ ? scratch_.data() : b_.recv[me] + at;
      reduceInto(sum, 0, first, count, me);
      for (int k = stream_ ? 0 : 1; k < n; ++k)
        copy(b_.recv[(me + k) % n] + at, sum, count * es);
      traffic->sent += peers * bytes;
      return;
    }
    case CollKind::kReduce:
      if (stream_) {
        reduceInto(scratch_.data(), 0, first, count, args_.root);
        copy(b_.recv[args_.root] + at, scratch_.data(), count * es);
      } else {
        reduceInto(b_.recv[args_.root] + at, 0, first, count, args_.root);
      }
      if (me != args_.root) traffic->sent += bytes;
      return;
    case CollKind::kReduceScatter:
      reduceInto(b_.recv[me] + at, me, first, count, me);
      return;
    case CollKind::kBroadcast:
      copy(b_.recv[me] + at, b_.send[args_.root] + at, count * es);
      if (me != args_.root) traffic->received += bytes;
      return;
    default:
      return;
  }
}

}  // namespace weft
