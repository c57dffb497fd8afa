#include "collectives/single_copy.h"

#include <cstring>
#include <optional>

#include "collectives/algo_override.h"
#include "src/base/log.h"
#include "src/base/text.h"
#include "transports/cross_memory.h"
#include "transports/shm/shared_memory.h"

namespace weft {
namespace {

// What a rank posts in its flag's line: where its input is, and, when the input lies in
// weftMemAlloc memory, the allocation, which readers map and copy from themselves instead of
// asking the kernel to copy.
struct SingleCopyPost {
  uint64_t input = 0;  // in the poster's address space
  int32_t fd = -1;     // -1: not in weftMemAlloc memory
  uint64_t serial = 0;
  uint64_t offset = 0;
};
static_assert(sizeof(SingleCopyPost) <= kInlineSlotBytes);

}  // namespace

Status SingleCopyLimits::parse(const std::string& colls, size_t minBytes, size_t maxBytes,
                               int maxRanks, SingleCopyLimits* out) {
  SingleCopyLimits l;
  l.minBytes = minBytes;
  l.maxBytes = maxBytes;
  l.maxRanks = maxRanks;
  if (minBytes > 0 && maxBytes > 0 && maxBytes < minBytes) {
    WEFT_WARN(kInit,
              "WEFT_SHM_SINGLE_COPY_MAX_BYTES (%zu) is below WEFT_SHM_SINGLE_COPY_BYTES (%zu): "
              "nothing goes single copy",
              maxBytes, minBytes);
  }
  for (std::string_view piece : split(colls, ',')) {
    const std::string name(trim(piece));
    if (name.empty()) continue;
    std::optional<CollKind> kind = parseCollName(name);
    if (!kind || (*kind != CollKind::kAllGather && *kind != CollKind::kBroadcast &&
                  *kind != CollKind::kAllToAll)) {
      return errorf(weftInvalidArgument,
                    "WEFT_SHM_SINGLE_COPY_COLLS='%s': '%s' is not allgather, broadcast or alltoall",
                    colls.c_str(), name.c_str());
    }
    l.kinds |= 1u << static_cast<int>(*kind);
  }
  *out = l;
  return okStatus();
}

bool SingleCopyOp::fits(const DirectGroup& g, const CollArgs& a, size_t elemSize,
                        const SingleCopyLimits& limits) {
  const size_t perPeer = a.count * elemSize;
  if (!g.singleCopy() || (limits.kinds & (1u << static_cast<int>(a.kind))) == 0) return false;
  if (limits.maxRanks > 0 && g.nranks() > limits.maxRanks) return false;
  if (limits.minBytes == 0 || perPeer < limits.minBytes) return false;
  return limits.maxBytes == 0 || perPeer <= limits.maxBytes;
}

void SingleCopyOp::start(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
                         size_t elemSize, uint64_t signature) {
  begin(group, args, send, recv, elemSize, nullptr, signature);
  group->peerMemory().beginCall();
  state_ = State::kWaitSlot;
  read_.assign(static_cast<size_t>(group->nranks()), 0);
}

bool SingleCopyOp::reads(int reader, int owner) const {
  if (reader == owner) return false;
  if (args_.kind == CollKind::kBroadcast) return owner == args_.root;
  return true;
}

// This rank's own part of the output, from its own input.
void SingleCopyOp::copyOwn() {
  const int me = group_->rank();
  const size_t block = args_.count * elemSize_;
  switch (args_.kind) {
    case CollKind::kAllToAll:
      memcpy(recv_ + static_cast<size_t>(me) * block, send_ + static_cast<size_t>(me) * block,
             block);
      return;
    case CollKind::kAllGather:
      if (recv_ + static_cast<size_t>(me) * block != send_) {
        memcpy(recv_ + static_cast<size_t>(me) * block, send_, block);
      }
      return;
    case CollKind::kBroadcast:
      if (me == args_.root && recv_ != send_) memcpy(recv_, send_, block);
      return;
    default:
      return;
  }
}

// The peer posted this operation with where its input is in the flag's line.
Status SingleCopyOp::readFrom(int peer) {
  SingleCopyPost post;
  memcpy(&post, group_->postData(peer, sequence_), sizeof(post));
  const int me = group_->rank();
  const size_t block = args_.count * elemSize_;
  char* to = recv_;
  const size_t skip = args_.kind == CollKind::kAllToAll ? static_cast<size_t>(me) * block : 0;
  if (args_.kind != CollKind::kBroadcast) to += static_cast<size_t>(peer) * block;
  const pid_t pid = group_->area(peer).control->pid;
  if (post.fd >= 0) {
    CollArgs theirs = args_;
    theirs.rank = peer;
    char* input = nullptr;
    Status s = group_->peerMemory().map(pid, post.fd, post.serial, post.offset,
                                        sendBufferCount(theirs) * elemSize_, {skip, block}, &input);
    if (s.ok()) {
      WEFT_TRACE(kColl, "single copy #%llu: read rank %d's weftMemAlloc input through a mapping",
                 static_cast<unsigned long long>(sequence_), peer);
      memcpy(to, input + skip, block);
      return okStatus();
    }
    // The kernel's copy, which the ranks probed as they connected, still works.
    WEFT_INFO(kColl, "single copy from rank %d: %s; reading it with process_vm_readv", peer,
              s.message().c_str());
  }
  Status s = readProcessMemory(pid, to, post.input + skip, block);
  if (!s.ok() && group_->peerFailed(peer)) {
    // It left this operation with an error (one of its own peers died, say) and may have freed
    // the input it posted.
    s = errorf(weftRemoteError, "rank %d failed: %s", peer, s.message().c_str());
  }
  if (!s.ok()) return s.withContext(strprintf("single copy from rank %d", peer));
  return okStatus();
}

// Reads every peer that has posted; *all once every peer read from is in the output.
Status SingleCopyOp::readPosted(bool* all, bool* moved) {
  const int n = group_->nranks();
  const int me = group_->rank();
  *all = true;
  // From the next rank on, so that ranks do not all read the same peer at once.
  for (int k = 1; k < n; ++k) {
    const int peer = (me + k) % n;
    if (read_[peer] || !reads(me, peer)) continue;
    bool posted = false;
    WEFT_RETURN_IF_ERROR(group_->checkPosted(peer, sequence_, signature_, args_.kind, &posted));
    if (!posted) {
      *all = false;
      waitingFor_ = peer;
      continue;
    }
    WEFT_RETURN_IF_ERROR(readFrom(peer));
    read_[peer] = 1;
    *moved = true;
  }
  return okStatus();
}

// Whether every rank that reads this rank's input has finished this operation's reads.
bool SingleCopyOp::readersDone() {
  const int me = group_->rank();
  for (int r = 0; r < group_->nranks(); ++r) {
    if (!reads(r, me)) continue;
    if (group_->area(r).control->opsDone.load(std::memory_order_acquire) < sequence_) {
      waitingFor_ = r;
      return false;
    }
  }
  return true;
}

Status SingleCopyOp::progress(bool* progressed) {
  *progressed = false;
  if (state_ == State::kWaitSlot) {
    if (!group_->mayPost(sequence_, &waitingFor_)) return okStatus();
    waitingFor_ = -1;
    SingleCopyPost post;
    post.input = addressOf(send_);
    shm::SharedRange range;
    if (shm::findShared(send_, sendBufferCount(args_) * elemSize_, &range)) {
      post.fd = range.fd;
      post.serial = range.serial;
      post.offset = range.offset;
    }
    memcpy(group_->postData(group_->rank(), sequence_), &post, sizeof(post));
    group_->post(sequence_, signature_);
    copyOwn();
    state_ = State::kReading;
    *progressed = true;
  }
  if (state_ == State::kReading) {
    bool all = false;
    WEFT_RETURN_IF_ERROR(readPosted(&all, progressed));
    if (!all) return okStatus();
    group_->area(group_->rank()).control->opsDone.store(sequence_, std::memory_order_release);
    group_->ringPeers();
    state_ = State::kWaitReaders;
    *progressed = true;
  }
  if (state_ == State::kWaitReaders) {
    if (!readersDone()) return okStatus();
    state_ = State::kDone;
    *progressed = true;
  }
  return okStatus();
}

std::string SingleCopyOp::describeWait() const {
  const auto seq = static_cast<unsigned long long>(sequence_);
  switch (state_) {
    case State::kWaitSlot:
      return strprintf("single-copy operation #%llu: waiting for rank %d to reach operation #%llu",
                       seq, waitingFor_, seq - 1);
    case State::kReading:
      return strprintf("single-copy operation #%llu: waiting for rank %d to post its input", seq,
                       waitingFor_);
    case State::kWaitReaders:
      return strprintf(
          "single-copy operation #%llu: waiting for rank %d to finish reading this "
          "rank's input",
          seq, waitingFor_);
    default:
      return "nothing";
  }
}

}  // namespace weft
