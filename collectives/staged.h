// Staged collectives: for communicators whose ranks all share memory, collectives too large for
// the direct slots go chunk by chunk through each rank's staging area (collectives/slot_area.h),
// a ring of chunks in shared memory. Every chunk passes three stages on every rank:
//   stage    copy this rank's part of the chunk from its input into its staging area
//   combine  (reductions) reduce this rank's sub-slice of the chunk from its input and the other
//            ranks' staging areas into its own staging area, or straight into its output where
//            nobody else reads the sums (below)
//   drain    copy what this rank receives from the staging areas into its output
// Each rank publishes how many chunks it has staged, combined and drained (SlotControl), and a
// stage waits only for the counters it reads. Inputs are read once and outputs written once;
// everything in between stays in the cache-sized staging areas, so a 2-rank all-reduce keeps
// both cores busy at memory speed instead of copying through rings twice over. (Which stores
// stage a chunk depends on where the cores sit: see streamStage_.)
//
// Which rank does what, per chunk:
//   all_reduce      stage the chunk but sub-slice r; combine sub-slice r; drain every rank's
//                   sub-slice. With 2 ranks: stage the whole chunk; combine all of it into
//                   the output; no drain
//   reduce          as all_reduce's first form, but only the root drains, and it combines its
//                   own sub-slice straight into its output. With 2 ranks the root's sub-slice
//                   is the whole chunk, and the other rank only stages
//   reduce_scatter  stage the chunk's part of every other rank's block; drain: reduce the
//                   part of this rank's block from the others' staging areas and its input
//   all_gather      stage the chunk of the input, and copy it to this rank's own block of the
//                   output while it is in cache; drain every other rank's chunk
//   broadcast       the root stages, and copies the chunk to its output; every other rank
//                   drains the root's chunk
//   all_to_all      stage the chunk's part of every other rank's block; drain this rank's
// Each sub-slice is reduced by one rank only, so every rank gets the same bits; 2 ranks that
// both reduce whole chunks run the same loop on the same bytes (StagedOp::combine).
//
// When every rank's buffers lie in weftMemAlloc memory, the operation skips the staging areas
// and goes mapped instead (collectives/mapped.h): each rank posts where its buffers are, and once
// all have posted, all go mapped or all go staged. A rank whose own buffers rule it out stages
// at once. In the single-copy band (collectives/single_copy.h), each rank also posts where its
// input is, and the decider whether this call goes single copy; all then go mapped, single copy
// or staged, as the posts say.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collectives/core_probe.h"
#include "collectives/direct.h"
#include "collectives/mapped.h"
#include "collectives/mapped_schedule.h"
#include "collectives/progressable.h"
#include "collectives/reduce.h"
#include "collectives/schedule.h"

namespace weft {

// The ways besides staging that a staged call may go, as the planner allows them (WEFT_ALGO,
// the single-copy band), on every rank alike. Staging is the way every rank can always go.
struct StagedWays {
  bool mapped = true;  // where every rank's buffers are weftMemAlloc memory
  // In the single-copy band: the decider chooses between single copy and staging, or, with
  // singleCopyOnly, always goes single copy.
  bool singleCopyBand = false;
  bool singleCopyOnly = false;
};

class StagedOp : public GroupOp {
 public:
  // What a rank posts in its slot's flag line.
  struct Post {
    MappedPost mapped;
    // In the single-copy band, where the rank's input is, in its own address space. The
    // decider posts 0 when the call stages, and never 0 when it goes single copy (1 where
    // nobody reads its input and it passed none: a broadcast's non-root).
    uint64_t singleCopyInput = 0;
  };
  static_assert(sizeof(Post) <= kInlineSlotBytes);

  // Whether this collective can go staged: its kind has a staged form and the staging areas
  // hold a cache line per rank. Depends only on values every rank shares.
  static bool fits(const DirectGroup& group, const CollArgs& args);
  // The smallest staging area that holds a cache line per rank in each chunk in flight.
  static size_t leastStagingBytes(int nranks);
  // As DirectOp::start; fits() must hold. When a rank's output is streamBytes or more, the drain
  // copies it out with non-temporal stores (collectives/stream_copy.h): it would not stay in cache
  // anyway. Sums reduced straight into the output (reduce_scatter's drain, a 2-rank all_reduce
  // or reduce, a reduce root's own sub-slice) are stored as usual.
  void start(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
             size_t elemSize, ReduceFn reduce, uint64_t signature, size_t streamBytes,
             const StagedWays& ways = StagedWays());

  // Whether this call's drain copies its output out with non-temporal stores. (streamOut_ stays
  // set for 2-rank reductions, which drain nothing: a call that goes mapped streams. A 2-rank
  // all-reduce that combines by halves after its probe streams too, unlike what this says at
  // its start; the probe's trace says so.)
  bool streamsOutput() const { return streamOut_ && combining_ == Combining::kBySlices; }
  // Whether this call went mapped or single copy instead (known once every rank has posted).
  bool wentMapped() const { return mapped_; }
  bool wentSingleCopy() const { return singleCopied_; }
  // From this size per rank, 2-rank all-reduces combine by halves while the cores are near.
  static constexpr size_t kHalvesMinBytes = size_t{8} << 20;
  // Whether this 2-rank all-reduce combines by halves (chooseCombiningByHalves).
  bool combinesByHalves() const {
    return combining_ == Combining::kBySlices && args_.kind == CollKind::kAllReduce &&
           group_->nranks() == 2;
  }

  Status progress(bool* progressed) override;
  bool done() const override { return state_ == State::kDone; }
  std::string describeWait() const override;

 private:
  // kDeciding: posted, waiting for every rank's post to choose mapped, single copy or staged;
  // kMapped: running the mapped schedule (mapped or single copy).
  // kProbing: timing the round trip to the peer's core before a 2-rank call stages
  // (collectives/core_probe.h).
  enum class State { kWaitSlot, kDeciding, kProbing, kRunning, kMapped, kDone };
  // The stages, as they index SlotControl::chunksDone.
  enum Stage : int { kStage, kCombine, kDrain };

  bool perBlock() const;
  // How ranks share the combining of a chunk: each its own sub-slice, into its staging area for
  // the others to drain; the root all of it, into its output (2-rank reduce); or every rank all
  // of it, into its own output (2-rank all-reduce: each stages its whole chunk and drains nothing;
  // by slices, halves, where chooseCombiningByHalves says).
  enum class Combining { kBySlices, kRootWhole, kEveryWhole };
  static Combining combiningFor(const CollArgs& args, int nranks);
  void chooseCombiningByHalves();
  bool combines() const;
  bool combinesIntoOutput() const;
  std::pair<size_t, size_t> combineSlice(size_t count, int r) const;
  // Whether every rank (or just `only`) has done `stage` for at least `chunks` chunks, reading
  // the shared counters only when the last values seen fall short.
  bool reached(Stage stage, uint64_t chunks, int only = -1);
  Status checkPeersPosted(bool* all);
  bool tryStage(size_t i);
  Status tryCombine(size_t i, bool* moved);
  Status tryDrain(size_t i, bool* moved);
  void publish(Stage stage, uint64_t chunks);

  // Chunk i: its first element (per block for per-block collectives), its element count, and
  // where it sits in a staging area.
  size_t firstOf(size_t i) const { return i * chunkCount_; }
  size_t countOf(size_t i) const;
  char* stagingOf(int rank, size_t i) const;

  void stage(size_t i);
  void combine(size_t i);
  void drain(size_t i);

  // Mapped instead of staged: whether every rank posted buffers in weftMemAlloc memory, their
  // addresses here, and running the mapped schedule over them.
  Post postOf(int rank) const;
  bool everyRankMapped() const;
  Status mapPeers(MappedBuffers* out);
  Status decide(bool* progressed);
  Status runSingleCopy();
  // Starts the mapped schedule over the peers' buffers: mappedBuffers_, or through the kernel
  // singleCopyInputs_; runSchedule moves it on.
  Status startSchedule(bool throughKernel, bool stream);
  Status runSchedule(bool* progressed);
  // The staging counters skip this operation's chunks, which nobody stages.
  void publishShare();
  void chooseStagingStores(bool inPlace);
  // Goes staged: probes first where the call's stores wait for it.
  void beginStaged();
  // Gives the call's time to the TimedChoice that chose how it ran, if one did.
  void recordTime();

  State state_ = State::kDone;
  bool peersChecked_ = false;
  bool streamOut_ = false;
  // Whether this rank stages with non-temporal stores: a peer then reads the chunk from memory
  // instead of from this core's cache, which was 3-7x slower whenever the two cores shared no
  // L3 (a cache-line round trip 180-250 ns instead of 50-90), and 15-30% faster when they did.
  // chooseStagingStores says which, and probes_ whether a probe of the cores' distance at the
  // call's start has the last word (2 ranks).
  bool streamStage_ = false;
  bool probes_ = false;
  CoreProbe probe_;
  Combining combining_ = Combining::kBySlices;
  // Which TimedChoice, if any, chose how this call runs and gets its time: the group's staging
  // stores for its kind (reductions), or its single-copy choice (the decider of a call in the
  // band).
  TimedChoice* timedBy_ = nullptr;
  std::chrono::steady_clock::time_point started_;
  Post mine_;            // as posted
  bool mayMap_ = false;  // this rank's buffers allow the mapped form
  bool mapped_ = false;  // every rank's do: going mapped
  bool singleCopyBand_ = false;
  bool singleCopied_ = false;
  // The mapped schedule's run: every rank's buffers, how this rank reaches them, and the
  // executors of the calls that went mapped.
  MappedBuffers mappedBuffers_;
  std::vector<uint64_t> singleCopyInputs_;  // every rank's, in its own process
  MappedFace mappedFace_;
  MappedExecutors mappedExecutors_;
  Executor* mappedRun_ = nullptr;
  uint64_t gottenCounted_ = 0, putCounted_ = 0;  // of its bytes, what the traffic counts hold

  uint64_t base_ = 0;           // the communicator's count of chunks before this operation's
  size_t chunks_ = 0;           // this operation's chunks
  size_t chunkCount_ = 0;       // elements a chunk holds (of each block, for per-block ones)
  size_t blockStride_ = 0;      // bytes between blocks' parts in a staged chunk (per-block ones)
  size_t next_[3] = {0, 0, 0};  // by Stage: the next chunk to go through it

  // What was last seen of each rank's counters, by Stage.
  std::vector<uint64_t> seen_[3];
  const char* waitingWhat_ = "";
};

}  // namespace weft
