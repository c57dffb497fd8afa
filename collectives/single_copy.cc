#include "collectives/single_copy.h"

#include <cstring>

#include "transports/cross_memory.h"

namespace weft {

bool SingleCopyOp::fits(const DirectGroup& g, const CollArgs& a, size_t elemSize, size_t minBytes) {
  if (!g.singleCopy() || minBytes == 0 || a.count * elemSize < minBytes) return false;
  return a.kind == CollKind::kAllToAll || a.kind == CollKind::kAllGather ||
         a.kind == CollKind::kBroadcast;
}

void SingleCopyOp::start(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
                         size_t elemSize, uint64_t signature) {
  begin(group, args, send, recv, elemSize, nullptr, signature);
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

// The peer posted this operation with the address of its input in the flag's line.
Status SingleCopyOp::readFrom(int peer) {
  uint64_t from = 0;  // the peer's input, in its address space
  memcpy(&from, group_->postData(peer, sequence_), sizeof(from));
  const int me = group_->rank();
  const size_t block = args_.count * elemSize_;
  char* to = recv_;
  if (args_.kind == CollKind::kAllToAll) from += static_cast<uint64_t>(me) * block;
  if (args_.kind != CollKind::kBroadcast) to += static_cast<size_t>(peer) * block;
  Status s = readProcessMemory(group_->area(peer).control->pid, to, from, block);
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
    const uint64_t input = addressOf(send_);
    memcpy(group_->postData(group_->rank(), sequence_), &input, sizeof(input));
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
