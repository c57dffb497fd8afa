#include "collectives/direct.h"

#include <algorithm>
#include <cstring>

#include "collectives/algo_override.h"
#include "collectives/call_stamp.h"
#include "collectives/stream_copy.h"
#include "src/base/status.h"

namespace weft {
namespace {

int slotOf(uint64_t sequence) {
  return static_cast<int>(sequence & 1);
}

// An all-reduce posts this much or more with non-temporal stores: every rank reads every slot,
// from memory then rather than from the poster's cache. All-reduces this large go direct only
// where staging is off (src/enqueue/plan.cc). Posted that way, 2-rank all-reduces of
// 16K-64K per rank ran up to 1.4x faster on a 2-core VM while its vCPUs shared an L3, and about
// 3.4x faster while they did not (a cache-line round trip of 310 ns instead of 70). Smaller
// posts, and the other kinds (whose readers read a part of a slot, or one slot), ran as fast or
// faster with ordinary stores while the vCPUs shared an L3.
constexpr size_t kStreamedPostBytes = 16u << 10;

}  // namespace

DirectGroup::DirectGroup(int rank, std::vector<const SlotArea*> areas)
    : rank_(rank), areas_(std::move(areas)) {
  seen_.assign(areas_.size(), 0);
  slotBytes_ = areas_.empty() ? 0 : areas_[0]->slotBytes;
  stagingBytes_ = areas_.empty() ? 0 : areas_[0]->stagingBytes;
  // Each rank published whether it may read all the others before the communicator connected.
  singleCopy_ = areas_.size() >= 2;
  for (const SlotArea* a : areas_) {
    slotBytes_ = std::min(slotBytes_, a->slotBytes);
    stagingBytes_ = std::min(stagingBytes_, a->stagingBytes);
    singleCopy_ = singleCopy_ && a->owner->readsPeers.load(std::memory_order_acquire) == 1;
  }
}

// One line: a rank posts in order, so the slot of `sequence` holds it or a later one once the
// rank has posted it. The other slot's line is the one the rank may be writing now.
bool DirectGroup::hasPosted(int r, uint64_t sequence) {
  if (seen_[r] >= sequence) return true;
  const uint64_t latest =
      areas_[r]->control->posted[slotOf(sequence)].sequence.load(std::memory_order_acquire);
  seen_[r] = std::max(seen_[r], latest);
  return latest >= sequence;
}

Status DirectGroup::mayPost(uint64_t sequence, int* waitingFor, bool* may) {
  *may = true;
  const bool check = unchecked_ != 0 && unchecked_ == sequence - 1;
  if (sequence <= 2 && !check) return okStatus();
  for (int r = 0; r < nranks(); ++r) {
    if (r != rank_ && !hasPosted(r, sequence - 1)) {
      *waitingFor = r;
      *may = false;
      return okStatus();
    }
  }
  if (!check) return okStatus();
  unchecked_ = 0;
  for (int r = 0; r < nranks(); ++r) {
    if (r == rank_) continue;
    // Its slot still holds sequence - 1: it posts sequence + 1 there only after this rank
    // posts sequence.
    const uint64_t theirs =
        areas_[r]->control->posted[slotOf(sequence - 1)].signature.load(std::memory_order_relaxed);
    if (theirs != uncheckedSignature_) {
      return slotMismatch(r, theirs, rank_, uncheckedSignature_).withContext("in the call before");
    }
  }
  return okStatus();
}

Status DirectGroup::checkPosted(int r, uint64_t sequence, uint64_t signature, bool* posted) {
  const SlotPost& p = areas_[r]->control->posted[slotOf(sequence)];
  *posted = p.sequence.load(std::memory_order_acquire) == sequence;
  if (*posted) seen_[r] = std::max(seen_[r], sequence);  // the next mayPost need not look again
  if (*posted) {
    const uint64_t theirs = p.signature.load(std::memory_order_relaxed);
    if (theirs != signature) return slotMismatch(r, theirs, rank_, signature);
  }
  return okStatus();
}

void DirectGroup::post(uint64_t sequence, uint64_t signature) {
  SlotPost& p = areas_[rank_]->control->posted[slotOf(sequence)];
  p.signature.store(signature, std::memory_order_relaxed);
  p.sequence.store(sequence, std::memory_order_release);
  ringPeers();
}

char* DirectGroup::postData(int r, uint64_t sequence) const {
  return areas_[r]->control->posted[slotOf(sequence)].inlineData;
}

void DirectGroup::ringPeers() const {
  for (int r = 0; r < nranks(); ++r) {
    if (r != rank_ && areas_[r]->doorbell != nullptr) areas_[r]->doorbell->ring();
  }
}

void DirectGroup::markFailed() const {
  areas_[rank_]->control->failed.store(1, std::memory_order_release);
  ringPeers();
}

bool DirectGroup::peerFailed(int r) const {
  return areas_[r]->control->failed.load(std::memory_order_acquire) != 0;
}

bool DirectGroup::fits(const CollArgs& a, size_t elemSize, size_t maxBytes) const {
  const auto n = static_cast<size_t>(nranks());
  if (n < 2 || !shmPathSupports(ShmPath::kDirect, a.kind)) return false;
  // Every rank's blocks together must be countable in bytes; checked without a division, as
  // this runs on every small call.
  size_t block = 0;
  size_t all = 0;
  if (__builtin_mul_overflow(a.count, elemSize, &block) || __builtin_mul_overflow(block, n, &all)) {
    return false;
  }
  const bool blockPerRank = a.kind == CollKind::kReduceScatter || a.kind == CollKind::kAllToAll;
  const size_t perRank = blockPerRank ? all : block;  // what one rank posts
  return perRank <= slotBytes_ && perRank <= maxBytes;
}

void GroupOp::begin(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
                    size_t elemSize, ReduceFn reduce, uint64_t signature) {
  group_ = group;
  args_ = args;
  send_ = static_cast<const char*>(send);
  recv_ = static_cast<char*>(recv);
  elemSize_ = elemSize;
  reduce_ = reduce;
  sequence_ = group->nextSequence();
  signature_ = signature;
  waitingFor_ = -1;
  pendingIo_.reserve(static_cast<size_t>(group->nranks()));  // no allocation in a blocked wait
}

// Only the peer this operation waits for: a peer that has published all this rank reads from
// it may finish, destroy its communicator and close its links, and that is no failure.
std::vector<int> GroupOp::pendingPeers() const {
  std::vector<int> out;
  forEachPendingPeer([&](int r) { out.push_back(r); });
  return out;
}

const std::vector<std::pair<int, bool>>& GroupOp::pendingIo() {
  pendingIo_.clear();
  forEachPendingPeer([&](int r) { pendingIo_.emplace_back(r, true); });
  return pendingIo_;
}

void DirectOp::start(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
                     size_t elemSize, ReduceFn reduce, uint64_t signature) {
  begin(group, args, send, recv, elemSize, reduce, signature);
  state_ = State::kWaitSlot;
  inline_ = postBytes(args.root) <= kInlineSlotBytes;  // only a broadcast's root posts data
}

size_t DirectOp::postBytes(int rank) const {
  const auto n = static_cast<size_t>(group_->nranks());
  switch (args_.kind) {
    case CollKind::kBroadcast:
      return rank == args_.root ? args_.count * elemSize_ : 0;
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return args_.count * n * elemSize_;
    case CollKind::kBarrier:
      return 0;
    default:
      return args_.count * elemSize_;
  }
}

// Broadcast reads only the root's slot; reduce only the root reads; everyone else reads all.
bool DirectOp::readsFrom(int peer) const {
  if (peer == group_->rank()) return false;
  if (args_.kind == CollKind::kBroadcast) return peer == args_.root;
  if (args_.kind == CollKind::kReduce) return group_->rank() == args_.root;
  return true;
}

Status DirectOp::peersPosted(bool* all) {
  *all = false;
  for (int r = std::max(waitingFor_, 0); r < group_->nranks(); ++r) {
    if (!readsFrom(r)) continue;
    bool posted = false;
    WEFT_RETURN_IF_ERROR(group_->checkPosted(r, sequence_, signature_, &posted));
    if (!posted) {
      waitingFor_ = r;
      return okStatus();
    }
  }
  waitingFor_ = group_->nranks();
  *all = true;
  return okStatus();
}

void DirectOp::post() {
  const SlotArea& mine = group_->area(group_->rank());
  const int slot = slotOf(sequence_);
  size_t bytes = postBytes(group_->rank());
  char* to = inline_ ? group_->postData(group_->rank(), sequence_) : mine.slots[slot];
  const bool stream = !inline_ && args_.kind == CollKind::kAllReduce && bytes >= kStreamedPostBytes;
  if (bytes > 0) copyOut(to, send_, bytes, stream);
  countSent(bytesForPeers(bytes));
  group_->post(sequence_, signature_);
  if (args_.kind == CollKind::kBroadcast || args_.kind == CollKind::kReduce) {
    group_->leaveUnchecked(sequence_, signature_);  // readsFrom leaves peers out
  }
}

// Of what this rank posted, what its peers read: a reduce's root and a rank's own block of a
// reduce-scatter or all-to-all stay with it.
size_t DirectOp::bytesForPeers(size_t posted) const {
  const int me = group_->rank();
  switch (args_.kind) {
    case CollKind::kReduce:
      return me == args_.root ? 0 : posted;
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return posted - args_.count * elemSize_;
    default:
      return posted;
  }
}

// Reads the peers' slots into the result; every rank combines in rank order.
void DirectOp::finish() {
  const int n = group_->nranks();
  const int me = group_->rank();
  const int slot = slotOf(sequence_);
  // Where each rank's data is: in its flag's line when small, else in its slot.
  auto slotOfRank = [&](int r) -> const char* {
    return inline_ ? group_->postData(r, sequence_) : group_->area(r).slots[slot];
  };
  const size_t block = args_.count * elemSize_;
  const size_t fromPeers = static_cast<size_t>(n - 1) * block;
  switch (args_.kind) {
    case CollKind::kAllReduce:
    case CollKind::kReduce:
      if (args_.kind == CollKind::kReduce && me != args_.root) break;
      countReceived(fromPeers);
      reduce_(recv_, slotOfRank(0), slotOfRank(1), args_.count);
      for (int r = 2; r < n; ++r)
        reduce_(recv_, recv_, slotOfRank(r), args_.count);
      break;
    case CollKind::kReduceScatter: {
      const size_t at = static_cast<size_t>(me) * block;
      countReceived(fromPeers);
      reduce_(recv_, slotOfRank(0) + at, slotOfRank(1) + at, args_.count);
      for (int r = 2; r < n; ++r)
        reduce_(recv_, recv_, slotOfRank(r) + at, args_.count);
      break;
    }
    case CollKind::kBroadcast:
      if (me == args_.root) {
        if (recv_ != send_) memmove(recv_, send_, block);
      } else {
        memcpy(recv_, slotOfRank(args_.root), block);
        countReceived(block);
      }
      break;
    case CollKind::kAllGather:
      countReceived(fromPeers);
      for (int r = 0; r < n; ++r) {
        const char* from = r == me ? send_ : slotOfRank(r);
        char* to = recv_ + static_cast<size_t>(r) * block;
        if (from != to) memmove(to, from, block);
      }
      break;
    case CollKind::kAllToAll:
      countReceived(fromPeers);
      for (int r = 0; r < n; ++r) {
        const char* from = (r == me ? send_ : slotOfRank(r)) + static_cast<size_t>(me) * block;
        memcpy(recv_ + static_cast<size_t>(r) * block, from, block);
      }
      break;
    default:
      break;
  }
}

Status DirectOp::progress(bool* progressed) {
  *progressed = false;
  if (state_ == State::kWaitSlot) {
    bool may = false;
    WEFT_RETURN_IF_ERROR(group_->mayPost(sequence_, &waitingFor_, &may));
    if (!may) return okStatus();
    waitingFor_ = -1;
    post();
    state_ = State::kWaitPeers;
    *progressed = true;
  }
  if (state_ == State::kWaitPeers) {
    bool all = false;
    WEFT_RETURN_IF_ERROR(peersPosted(&all));
    if (!all) return okStatus();
    finish();
    state_ = State::kDone;
    *progressed = true;
  }
  return okStatus();
}

std::string DirectOp::describeWait() const {
  if (state_ == State::kWaitSlot) {
    return strprintf("direct operation #%llu: waiting for rank %d to reach operation #%llu",
                     static_cast<unsigned long long>(sequence_), waitingFor_,
                     static_cast<unsigned long long>(sequence_ - 1));
  }
  return strprintf("direct operation #%llu: waiting for rank %d to post its data",
                   static_cast<unsigned long long>(sequence_), waitingFor_);
}

}  // namespace weft
