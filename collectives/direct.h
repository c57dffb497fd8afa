// Direct collectives: for communicators whose ranks all share memory, small collectives skip
// messages. Each rank copies its part into its own slot (collectives/slot_area.h), posts the
// operation's sequence number, and reads what it needs straight from its peers' slots. A small
// all-reduce costs one copy in and one pass over the slots, and a flag per rank; the message
// path's headers, rings and schedules are gone.
//
// Two slots alternate between operations. A rank writes slot (seq % 2) only after every peer
// has posted operation seq - 1: a rank posts an operation only once it has finished the one
// before, so by then nobody reads operation seq - 2 from that slot any more. Every rank
// reduces in rank order, so all get the same bits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/progressable.h"
#include "collectives/reduce.h"
#include "collectives/schedule.h"
#include "collectives/slot_area.h"
#include "collectives/timed_choice.h"
#include "transports/shareable_memory.h"
#include "transports/traffic.h"

namespace weft {

// The slots and staging areas of every rank of a communicator (its own included), and the
// sequence of direct and staged operations, which all ranks count alike.
class DirectGroup {
 public:
  DirectGroup(int rank, std::vector<const SlotArea*> areas);

  int rank() const { return rank_; }
  int nranks() const { return static_cast<int>(areas_.size()); }
  const SlotArea& area(int r) const { return *areas_[r]; }
  // The smallest slot of all ranks: the same number on every rank.
  size_t slotBytes() const { return slotBytes_; }
  // Whether every rank may read every other rank's memory (collectives/single_copy.h).
  bool singleCopy() const { return singleCopy_; }
  uint64_t nextSequence() { return ++sequence_; }
  // Whether rank r has posted operation `sequence` (or a later one), remembering what was seen
  // so the shared flag is read again only when needed.
  bool hasPosted(int r, uint64_t sequence);
  // Whether this rank may post `sequence` in slot sequence % 2: every peer has posted the one
  // before, so nobody reads what that slot held two operations ago. Else *waitingFor is the
  // first peer that has not.
  // Also compares the peers' signatures of an operation left unchecked (leaveUnchecked).
  Status mayPost(uint64_t sequence, int* waitingFor, bool* may);
  // An operation that read only some peers' slots (a broadcast's root reads none): the next
  // operation's mayPost compares the others' signatures of it with this one.
  void leaveUnchecked(uint64_t sequence, uint64_t signature) {
    unchecked_ = sequence;
    uncheckedSignature_ = signature;
  }
  // Whether rank r's slot holds `sequence`; weftInvalidUsage naming both calls if it was
  // posted with another signature (collectives/call_stamp.h).
  Status checkPosted(int r, uint64_t sequence, uint64_t signature, bool* posted);
  // Publishes this rank's slot for `sequence` (its data written before), then ringPeers().
  void post(uint64_t sequence, uint64_t signature);
  // The kInlineSlotBytes in rank r's flag line for `sequence`: written before post(), read once
  // checkPosted() says it is there.
  char* postData(int r, uint64_t sequence) const;
  void ringPeers() const;
  // Tells the peers this rank's communicator failed (SlotControl::failed); any thread may call.
  void markFailed() const;
  bool peerFailed(int r) const;

  // Whether this collective goes direct: its data fits the slots and is at most maxBytes per
  // rank. Depends only on values every rank shares, so all ranks decide alike.
  bool fits(const CollArgs& args, size_t elemSize, size_t maxBytes) const;

  // Staged collectives (collectives/staged.h): the smallest staging area of all ranks, and the
  // chunks the communicator has sent through them so far; takeChunks reserves the next n.
  size_t stagingBytes() const { return stagingBytes_; }
  uint64_t takeChunks(uint64_t n) {
    uint64_t first = chunks_;
    chunks_ += n;
    return first;
  }

  // The peers' weftMemAlloc memory that mapped collectives have mapped here.
  PeerMappings& peerMemory() { return peerMemory_; }
  // How this rank stages the chunks of staged collectives of a kind at 3 ranks and more (second
  // option: non-temporal stores; 2 ranks probe instead), and, where it decides, whether calls of a
  // kind in the single-copy band go single copy (second option); both learnt from the calls' times,
  // kind by kind, as their times for a size differ.
  TimedChoice& stagingStores(CollKind kind) { return stagingStores_[static_cast<int>(kind)]; }
  TimedChoice& singleCopyChoice(CollKind kind) {
    return singleCopyChoices_[static_cast<int>(kind)];
  }
  // How staged collectives stage their chunks (WEFT_SHM_STAGE_STORES): kFirst with ordinary
  // stores, kSecond with non-temporal ones, kAuto as StagedOp::chooseStagingStores says.
  TimedChoice::Mode stagingStoresMode() const { return stagingStoresMode_; }
  void setStagingStoresMode(TimedChoice::Mode mode) { stagingStoresMode_ = mode; }
  // What the latest probe between the two ranks' cores found (collectives/core_probe.h): for
  // 2-rank calls too small to probe. Empty before any.
  std::optional<bool> coresFar() const { return coresFar_; }
  void noteCoresFar(bool far) { coresFar_ = far; }
  // Fixes the verdict this rank's probes give when it leads them (rank 0), whatever they time, so
  // that tests can run either way of sharing the work that follows it; empty: as timed.
  std::optional<bool> probeVerdict() const { return probeVerdict_; }
  void setProbeVerdict(std::optional<bool> far) { probeVerdict_ = far; }

 private:
  int rank_;
  std::vector<const SlotArea*> areas_;
  size_t slotBytes_ = 0;
  size_t stagingBytes_ = 0;
  bool singleCopy_ = false;
  uint64_t sequence_ = 0;
  uint64_t chunks_ = 0;
  std::vector<uint64_t> seen_;  // per rank, the latest operation seen posted
  uint64_t unchecked_ = 0;      // see leaveUnchecked
  uint64_t uncheckedSignature_ = 0;
  PeerMappings peerMemory_;
  std::array<TimedChoice, kNumCollKinds> stagingStores_;      // by kind
  std::array<TimedChoice, kNumCollKinds> singleCopyChoices_;  // by kind
  TimedChoice::Mode stagingStoresMode_ = TimedChoice::Mode::kAuto;
  std::optional<bool> coresFar_;
  std::optional<bool> probeVerdict_;
};

// What direct and staged operations share: the call, its place in the group's sequence, and
// the peer they wait for (every peer until one is known).
class GroupOp : public Progressable {
 public:
  // Where the operations count the bytes they write for their peers and read of theirs.
  void countInto(Traffic* traffic) { traffic_ = traffic; }
  std::vector<int> pendingPeers() const override;
  const std::vector<std::pair<int, bool>>& pendingIo() override;

 protected:
  // signature identifies the call and its path (slotSignature, collectives/call_stamp.h); ranks
  // whose signatures differ get weftInvalidUsage instead of each other's data.
  void begin(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
             size_t elemSize, ReduceFn reduce, uint64_t signature);

  DirectGroup* group_ = nullptr;
  CollArgs args_;
  const char* send_ = nullptr;
  char* recv_ = nullptr;
  size_t elemSize_ = 1;
  ReduceFn reduce_ = nullptr;
  uint64_t sequence_ = 0;
  uint64_t signature_ = 0;
  int waitingFor_ = -1;  // the peer last found not ready
  Traffic* traffic_ = nullptr;

  void countSent(size_t bytes) const {
    if (traffic_ != nullptr) traffic_->sent += bytes;
  }
  void countReceived(size_t bytes) const {
    if (traffic_ != nullptr) traffic_->received += bytes;
  }

 private:
  // The peer waited for, or every peer while none is known; nobody once done. A template, so
  // that pendingIo(), which a blocked runner calls on every wait, allocates nothing.
  template <typename F>
  void forEachPendingPeer(F&& f) const {
    if (done()) return;
    if (waitingFor_ >= 0 && waitingFor_ < group_->nranks() && waitingFor_ != group_->rank()) {
      f(waitingFor_);
      return;
    }
    for (int r = 0; r < group_->nranks(); ++r) {
      if (r != group_->rank()) f(r);
    }
  }

  std::vector<std::pair<int, bool>> pendingIo_;
};

class DirectOp : public GroupOp {
 public:
  void start(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
             size_t elemSize, ReduceFn reduce, uint64_t signature);

  Status progress(bool* progressed) override;
  bool done() const override { return state_ == State::kDone; }
  std::string describeWait() const override;

 private:
  enum class State { kWaitSlot, kWaitPeers, kDone };

  // What a rank puts in its slot, and whom this rank reads.
  size_t postBytes(int rank) const;
  size_t bytesForPeers(size_t posted) const;
  bool readsFrom(int peer) const;
  Status peersPosted(bool* all);
  void post();
  void finish();

  State state_ = State::kDone;
  // Whether the posted data travels in the flags' lines (kInlineSlotBytes): the same for every
  // rank that posts any.
  bool inline_ = false;
};

}  // namespace weft
