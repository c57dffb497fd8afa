#include "collectives/staged.h"

#include <algorithm>
#include <cstring>

#include "collectives/algo_override.h"
#include "collectives/line_slice.h"
#include "collectives/single_copy.h"
#include "collectives/stream_copy.h"
#include "src/base/log.h"
#include "transports/cross_memory.h"

namespace weft {
namespace {

// Chunks a staging area holds: how far a rank may run ahead of the slowest.
constexpr size_t kChunksInFlight = 8;
// What an in-place 2-rank all-reduce reduces at a time before copying it out (StagedOp::combine):
// small enough to stay in the L1 cache.
constexpr size_t kInPlacePieceBytes = 16u << 10;
constexpr size_t kLine = 64;
// The mapped schedule's steps a progress() call runs at most, so that the caller's thread can
// look at other work in between.
constexpr size_t kScheduleStepsPerPass = 32;

size_t chunkBytesOf(const DirectGroup& g) {
  return g.stagingBytes() / kChunksInFlight / kLine * kLine;
}

}  // namespace

bool StagedOp::fits(const DirectGroup& g, const CollArgs& a) {
  const size_t chunk = chunkBytesOf(g);
  return a.count > 0 && chunk >= kLine * static_cast<size_t>(g.nranks()) &&
         shmPathSupports(ShmPath::kStaged, a.kind);
}

size_t StagedOp::leastStagingBytes(int nranks) {
  return kChunksInFlight * kLine * static_cast<size_t>(nranks);
}

bool StagedOp::perBlock() const {
  return args_.kind == CollKind::kReduceScatter || args_.kind == CollKind::kAllToAll;
}

bool StagedOp::combines() const {
  return args_.kind == CollKind::kAllReduce || args_.kind == CollKind::kReduce;
}

void StagedOp::start(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
                     size_t elemSize, ReduceFn reduce, uint64_t signature, size_t streamBytes,
                     const StagedWays& ways) {
  begin(group, args, send, recv, elemSize, reduce, signature);
  mine_ = Post();
  // Both ways run the mapped schedule, whose signals have a counter per rank.
  const bool signals = group->nranks() <= kMaxSignalRanks;
  mayMap_ = ways.mapped && signals && describeMapped(args, send, recv, elemSize, &mine_.mapped);
  mapped_ = false;
  singleCopyBand_ = ways.singleCopyBand && signals;
  singleCopied_ = false;
  streamOut_ =
      args.kind != CollKind::kReduceScatter && recvBufferCount(args) * elemSize >= streamBytes;
  combining_ = combiningFor(args, group->nranks());
  timedBy_ = nullptr;
  chooseStagingStores(send == recv);
  // No reduction is in the band (SingleCopyLimits::parse), so one choice at most times a call.
  if (singleCopyBand_) {
    bool offer = true;  // every rank but the decider offers its input
    if (args.rank == singleCopyDecider(args) && !ways.singleCopyOnly) {
      const uint64_t s = addressOf(send);
      const uint64_t r = addressOf(recv);
      const bool inPlace = s != 0 && s >= r && s < r + recvBufferCount(args) * elemSize;
      timedBy_ = &group->singleCopyChoice(args.kind);
      offer = timedBy_->secondFor(args.count * elemSize, inPlace);
    }
    mine_.singleCopyInput = offer ? std::max<uint64_t>(addressOf(send), 1) : 0;
  }
  if (timedBy_ != nullptr) started_ = std::chrono::steady_clock::now();
  state_ = State::kWaitSlot;
  peersChecked_ = false;
  const size_t chunkBytes = chunkBytesOf(*group);
  if (perBlock()) {
    // A chunk holds the same part of every block, each part on whole cache lines.
    blockStride_ = chunkBytes / static_cast<size_t>(group->nranks()) / kLine * kLine;
    chunkCount_ = std::max<size_t>(1, blockStride_ / elemSize);
  } else {
    blockStride_ = 0;
    chunkCount_ = std::max<size_t>(1, chunkBytes / elemSize);
  }
  chunks_ = (args.count + chunkCount_ - 1) / chunkCount_;
  base_ = group->takeChunks(chunks_);
  std::fill(std::begin(next_), std::end(next_), 0);
  for (auto& s : seen_)
    s.assign(static_cast<size_t>(group->nranks()), 0);
}

size_t StagedOp::countOf(size_t i) const {
  return std::min(chunkCount_, args_.count - firstOf(i));
}

char* StagedOp::stagingOf(int rank, size_t i) const {
  return group_->area(rank).staging + (base_ + i) % kChunksInFlight * chunkBytesOf(*group_);
}

bool StagedOp::reached(Stage stage, uint64_t chunks, int only) {
  static const char* const kWhat[] = {"stage", "combine", "drain"};
  std::vector<uint64_t>& seen = seen_[stage];
  const int first = only < 0 ? 0 : only;
  const int last = only < 0 ? group_->nranks() - 1 : only;
  for (int r = first; r <= last; ++r) {
    if (seen[r] >= chunks) continue;
    seen[r] = group_->area(r).control->chunksDone[stage].load(std::memory_order_acquire);
    if (seen[r] < chunks) {
      waitingFor_ = r;
      waitingWhat_ = kWhat[stage];
      return false;
    }
  }
  return true;
}

void StagedOp::publish(Stage stage, uint64_t chunks) {
  group_->area(group_->rank()).control->chunksDone[stage].store(chunks, std::memory_order_release);
  seen_[stage][group_->rank()] = chunks;
}

// Before this rank reads any peer's staging area for this operation: every peer is in it too.
Status StagedOp::checkPeersPosted(bool* all) {
  *all = true;
  if (peersChecked_) return okStatus();
  for (int r = 0; r < group_->nranks(); ++r) {
    if (r == group_->rank()) continue;
    bool posted = false;
    WEFT_RETURN_IF_ERROR(group_->checkPosted(r, sequence_, signature_, &posted));
    if (!posted) {
      *all = false;
      waitingFor_ = r;
      waitingWhat_ = "start";
      return okStatus();
    }
  }
  peersChecked_ = true;
  return okStatus();
}

void StagedOp::stage(size_t i) {
  const int me = group_->rank();
  char* to = stagingOf(me, i);
  const size_t bytes = countOf(i) * elemSize_;
  const char* from = send_ + firstOf(i) * elemSize_;
  if (combining_ == Combining::kEveryWhole) {
    copyOut(to, from, bytes, streamStage_);
    countSent(bytes);
    return;
  }
  if (combines()) {
    // This rank's own slice is combined straight from its input: only the others' go in.
    auto [first, count] = combineSlice(countOf(i), me);
    const size_t at = first * elemSize_;
    const size_t end = at + count * elemSize_;
    copyOut(to, from, at, streamStage_);
    copyOut(to + end, from + end, bytes - end, streamStage_);
    countSent(bytes - (end - at));
    return;
  }
  if (!perBlock()) {
    // All-gather and broadcast: whoever stages also copies the chunk to its own output now,
    // while it is in cache, instead of back out of the staging area in the drain.
    if (args_.kind == CollKind::kBroadcast && me != args_.root) return;
    copyOut(to, from, bytes, streamStage_);
    countSent(bytes);
    const size_t block = args_.kind == CollKind::kAllGather ? static_cast<size_t>(me) : 0;
    char* own = recv_ + (block * args_.count + firstOf(i)) * elemSize_;
    if (own != from) copyOut(own, from, bytes, streamOut_);
    return;
  }
  // This rank's own block never leaves it: the drain reads it from the input.
  const size_t blockBytes = args_.count * elemSize_;
  for (int b = 0; b < group_->nranks(); ++b) {
    if (b == me) continue;
    copyOut(to + static_cast<size_t>(b) * blockStride_,
            send_ + static_cast<size_t>(b) * blockBytes + firstOf(i) * elemSize_, bytes,
            streamStage_);
    countSent(bytes);
  }
}

// Who combines what, for a call of this kind on this many ranks. Two ranks share a chunk's
// combining by halves only where sums must be read back out of a staging area anyway: the
// writes a rank makes to lines its peer then reads were what cost most here (a 2-rank reduce
// whose peer combined half took 1.9x as long as one whose root combined it all).
StagedOp::Combining StagedOp::combiningFor(const CollArgs& args, int nranks) {
  if (nranks != 2) return Combining::kBySlices;
  if (args.kind == CollKind::kReduce) return Combining::kRootWhole;
  if (args.kind == CollKind::kAllReduce) return Combining::kEveryWhole;
  return Combining::kBySlices;
}

// A 2-rank all-reduce of kHalvesMinBytes and up whose probe found the cores sharing a cache
// combines by halves after all: such calls no longer fit in that cache, and by halves each rank
// reads 2.5 and writes 2 bytes per byte of its input, its output past the cache (stage the
// peer's half, sum its own into its staging area, copy both halves' sums out), where whole it
// reads 3 and writes 2, all through the cache. Measured on the 2-vCPU VM, 5 calls a size, cores
// near: 8M-256M 1.1-1.5x faster by halves (64M 8.0-8.2 ms against 12.1-12.3); 1M-4M about
// even; cores far apart, every size 2-2.5x slower, as each rank then reads the sums its peer
// wrote out of the peer's cache. Both ranks take the verdict of the same probe.
void StagedOp::chooseCombiningByHalves() {
  // kEveryWhole: a 2-rank all-reduce (combiningFor).
  if (combining_ == Combining::kEveryWhole && !probe_.far() &&
      args_.count * elemSize_ >= kHalvesMinBytes) {
    combining_ = Combining::kBySlices;
  }
}

// Whether this rank's sums go straight to its output: a reduce's root, as nobody else reads
// them, and every rank that combines whole chunks.
bool StagedOp::combinesIntoOutput() const {
  return combining_ == Combining::kEveryWhole ||
         (args_.kind == CollKind::kReduce && group_->rank() == args_.root);
}

// Rank r's sub-slice of a chunk of `count` elements, which it combines.
std::pair<size_t, size_t> StagedOp::combineSlice(size_t count, int r) const {
  switch (combining_) {
    case Combining::kRootWhole:
      return r == args_.root ? std::pair<size_t, size_t>(0, count)
                             : std::pair<size_t, size_t>(count, 0);
    case Combining::kEveryWhole:
      return {0, count};
    default:
      return lineSlice(count, elemSize_, group_->nranks(), r);
  }
}

// This rank's sub-slice of chunk i, reduced from its input and the others' staging areas into its
// own staging area or its output.
void StagedOp::combine(size_t i) {
  const int n = group_->nranks();
  const int me = group_->rank();
  auto [first, count] = combineSlice(countOf(i), me);
  if (count == 0) return;
  const size_t at = first * elemSize_;
  const char* own = send_ + (firstOf(i) + first) * elemSize_;
  char* acc =
      combinesIntoOutput() ? recv_ + (firstOf(i) + first) * elemSize_ : stagingOf(me, i) + at;
  auto part = [&](int r) { return r == me ? own : stagingOf(r, i) + at; };
  if (n == 1) {
    if (acc != own) memcpy(acc, own, count * elemSize_);
    return;
  }
  countReceived(static_cast<size_t>(n - 1) * count * elemSize_);
  if (!combinesIntoOutput()) countSent(count * elemSize_);
  // Ranks that combine whole chunks must all get the same bits, NaN payloads included, so they
  // run the same loop of reducePlain on the same bytes in rank order. Each reads its own part
  // from its input: twice as fast as from its staging area, which its peer reads at the same time
  // (2 ranks, 2M, while the vCPUs shared an L3: 128-149 us against 262-342 out of place, 157-194
  // against 233-275 in place). In place, the output is then one of the loop's inputs, and
  // reducePlain would take another loop on one rank than on the other; so there each reduces
  // into a small buffer of its own, piece by piece, and copies the piece out.
  if (combining_ == Combining::kEveryWhole) {
    if (acc != own) {
      reduce_(acc, part(0), part(1), count);
      return;
    }
    alignas(64) static thread_local char piece[kInPlacePieceBytes];
    const size_t pieceCount = sizeof(piece) / elemSize_;
    for (size_t done = 0; done < count; done += pieceCount) {
      const size_t offset = done * elemSize_;
      const size_t elems = std::min(pieceCount, count - done);
      reduce_(piece, part(0) + offset, part(1) + offset, elems);
      memcpy(acc + offset, piece, elems * elemSize_);
    }
    return;
  }
  // Own part first, so that an output that is also the input is read before it is written.
  reduce_(acc, part(me), part((me + 1) % n), count);
  for (int k = 2; k < n; ++k)
    reduce_(acc, acc, part((me + k) % n), count);
}

void StagedOp::drain(size_t i) {
  const int n = group_->nranks();
  const int me = group_->rank();
  const size_t count = countOf(i);
  const size_t bytes = count * elemSize_;
  const size_t offset = firstOf(i) * elemSize_;
  switch (args_.kind) {
    case CollKind::kAllReduce:
    case CollKind::kReduce:
      if (combining_ == Combining::kEveryWhole) return;  // combined into the output
      if (args_.kind == CollKind::kReduce && me != args_.root) return;
      for (int r = 0; r < n; ++r) {
        auto [first, part] = combineSlice(count, r);
        if (part == 0 || (r == me && combinesIntoOutput())) continue;
        copyOut(recv_ + offset + first * elemSize_, stagingOf(r, i) + first * elemSize_,
                part * elemSize_, streamOut_);
        if (r != me) countReceived(part * elemSize_);
      }
      return;
    case CollKind::kBroadcast:
      if (me != args_.root) {
        copyOut(recv_ + offset, stagingOf(args_.root, i), bytes, streamOut_);
        countReceived(bytes);
      }
      return;
    case CollKind::kAllGather: {
      const size_t blockBytes = args_.count * elemSize_;
      for (int r = 0; r < n; ++r) {
        if (r != me)
          copyOut(recv_ + static_cast<size_t>(r) * blockBytes + offset, stagingOf(r, i), bytes,
                  streamOut_);
      }
      countReceived(static_cast<size_t>(n - 1) * bytes);
      return;
    }
    case CollKind::kReduceScatter: {
      const size_t mine = static_cast<size_t>(me) * blockStride_;
      const char* own = send_ + static_cast<size_t>(me) * args_.count * elemSize_ + offset;
      const char* acc = own;
      countReceived(static_cast<size_t>(n - 1) * bytes);
      for (int k = 1; k < n; ++k) {
        reduce_(recv_ + offset, acc, stagingOf((me + k) % n, i) + mine, count);
        acc = recv_ + offset;
      }
      if (acc != recv_ + offset) memmove(recv_ + offset, acc, bytes);  // alone: a copy
      return;
    }
    case CollKind::kAllToAll: {
      const size_t blockBytes = args_.count * elemSize_;
      const size_t mine = static_cast<size_t>(me) * blockStride_;
      countReceived(static_cast<size_t>(n - 1) * bytes);
      for (int r = 0; r < n; ++r) {
        char* to = recv_ + static_cast<size_t>(r) * blockBytes + offset;
        const char* from = r == me ? send_ + static_cast<size_t>(me) * blockBytes + offset
                                   : stagingOf(r, i) + mine;
        copyOut(to, from, bytes, streamOut_);
      }
      return;
    }
    default:
      return;
  }
}

// A chunk's slot in the staging areas is free once every rank has drained the chunk that used
// it before.
bool StagedOp::tryStage(size_t i) {
  if (i >= chunks_) return false;
  const uint64_t g = base_ + i;
  if (g >= kChunksInFlight && !reached(kDrain, g - kChunksInFlight + 1)) return false;
  stage(i);
  publish(kStage, g + 1);
  ++next_[kStage];
  return true;
}

Status StagedOp::tryCombine(size_t i, bool* moved) {
  *moved = false;
  if (i >= next_[kStage]) return okStatus();
  bool posted = false;
  WEFT_RETURN_IF_ERROR(checkPeersPosted(&posted));
  if (!posted || !reached(kStage, base_ + i + 1)) return okStatus();
  combine(i);
  publish(kCombine, base_ + i + 1);
  ++next_[kCombine];
  *moved = true;
  return okStatus();
}

Status StagedOp::tryDrain(size_t i, bool* moved) {
  *moved = false;
  const Stage before = combines() ? kCombine : kStage;
  if (i >= next_[before]) return okStatus();
  bool posted = false;
  WEFT_RETURN_IF_ERROR(checkPeersPosted(&posted));
  if (!posted) return okStatus();
  const uint64_t need = base_ + i + 1;
  const int me = group_->rank();
  bool ready = false;
  switch (args_.kind) {
    case CollKind::kReduce:  // only the root reads the others' sums
      ready = me != args_.root || reached(kCombine, need);
      break;
    case CollKind::kAllReduce:  // kEveryWhole: nothing to drain; combine read the peers' chunks
      ready = combining_ == Combining::kEveryWhole || reached(kCombine, need);
      break;
    case CollKind::kBroadcast:
      ready = reached(kStage, need, args_.root);
      break;
    default:
      ready = reached(before, need);
      break;
  }
  if (!ready) return okStatus();
  drain(i);
  publish(kDrain, need);
  ++next_[kDrain];
  *moved = true;
  return okStatus();
}

StagedOp::Post StagedOp::postOf(int rank) const {
  Post post;
  memcpy(&post, group_->postData(rank, sequence_), sizeof(post));
  return post;
}

bool StagedOp::everyRankMapped() const {
  for (int r = 0; r < group_->nranks(); ++r) {
    const MappedPost post = postOf(r).mapped;
    const MappedNeeds needs = mappedNeeds(args_, r);
    if ((needs.send && post.sendFd < 0) || (needs.recv && post.recvFd < 0)) return false;
  }
  return true;
}

// Every rank's buffers as addresses here: this rank's own, and the peers' through their posts.
Status StagedOp::mapPeers(MappedBuffers* out) {
  const int n = group_->nranks();
  const int me = group_->rank();
  out->send.assign(static_cast<size_t>(n), nullptr);
  out->recv.assign(static_cast<size_t>(n), nullptr);
  out->send[me] = send_;
  out->recv[me] = recv_;
  PeerMappings& peers = group_->peerMemory();
  peers.beginCall();
  const ByteRange used = mappedShare(args_, elemSize_);
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    const MappedPost post = postOf(r).mapped;
    const MappedNeeds needs = mappedNeeds(args_, r);
    CollArgs theirs = args_;
    theirs.rank = r;
    const pid_t pid = group_->area(r).owner->pid;
    char* at = nullptr;
    if (needs.send) {
      WEFT_RETURN_IF_ERROR(peers.map(pid, {post.sendFd, post.sendSerial, post.sendOffset},
                                     sendBufferCount(theirs) * elemSize_, used, &at));
      out->send[r] = at;
    }
    if (needs.recv) {
      WEFT_RETURN_IF_ERROR(peers.map(pid, {post.recvFd, post.recvSerial, post.recvOffset},
                                     recvBufferCount(theirs) * elemSize_, used, &at));
      out->recv[r] = at;
    }
  }
  return okStatus();
}

// Once every rank has posted: mapped if all can, else single copy if the decider posted so,
// else staged, as every rank decides alike.
Status StagedOp::decide(bool* progressed) {
  bool all = false;
  WEFT_RETURN_IF_ERROR(checkPeersPosted(&all));
  if (!all) return okStatus();
  *progressed = true;
  if (!everyRankMapped()) {
    if (singleCopyBand_ && postOf(singleCopyDecider(args_)).singleCopyInput != 0) {
      return runSingleCopy();
    }
    beginStaged();
    return okStatus();
  }
  Status s = mapPeers(&mappedBuffers_);
  if (!s.ok()) return s.withContext("mapping the peers' weftMemAlloc buffers");
  mapped_ = true;
  return startSchedule(/*throughKernel=*/false, streamOut_);
}

// The schedule ends in a barrier, so once it is done nobody touches this rank's buffers any more.
Status StagedOp::runSchedule(bool* progressed) {
  bool moved = false;
  Status s = mappedRun_->progress(&moved);
  if (!s.ok()) return s.withContext(singleCopied_ ? "single copy" : "mapped call");
  *progressed = *progressed || moved;
  // As the bytes move, so that a call that fails or times out says how far it got.
  countReceived(mappedRun_->bytesGotten() - gottenCounted_);
  countSent(mappedRun_->bytesPut() - putCounted_);
  gottenCounted_ = mappedRun_->bytesGotten();
  putCounted_ = mappedRun_->bytesPut();
  if (!mappedRun_->done()) {
    waitingFor_ = mappedRun_->signalAwaited();
    return okStatus();
  }
  state_ = State::kDone;
  recordTime();
  return okStatus();
}

// Single copy is the mapped schedule, with the peers' inputs read where they are, through the
// kernel (collectives/single_copy.h).
Status StagedOp::runSingleCopy() {
  singleCopyInputs_.resize(static_cast<size_t>(group_->nranks()));
  for (int r = 0; r < group_->nranks(); ++r)
    singleCopyInputs_[r] = postOf(r).singleCopyInput;
  singleCopied_ = true;
  return startSchedule(/*throughKernel=*/true, /*stream=*/false);
}

Status StagedOp::startSchedule(bool throughKernel, bool stream) {
  mappedFace_.beginCall(group_, sequence_, args_, elemSize_, &mappedBuffers_,
                        throughKernel ? &singleCopyInputs_ : nullptr);
  MappedOptions options;
  options.elemSize = elemSize_;
  options.stream = stream;
  if (throughKernel) options.pieceBytes = SIZE_MAX;  // a block a get
  options.entered = true;                            // every rank has posted
  WEFT_RETURN_IF_ERROR(
      mappedExecutors_.get(args_, options, reduce_, send_, recv_, &mappedFace_, &mappedRun_));
  mappedRun_->setLocalStepsPerPass(kScheduleStepsPerPass);
  gottenCounted_ = 0;
  putCounted_ = 0;
  publishShare();
  state_ = State::kMapped;
  return okStatus();
}

// Which stores stage the chunks, unless WEFT_SHM_STAGE_STORES says: at 2 ranks, as the latest
// probe of the cores' distance found (calls of kMinBytes and up per rank probe at their start,
// and call this again once it is done); at more ranks, as the timings of the kind say.
// Reductions timed at 2 ranks too, but each try of the other stores cost a call, and ranks
// could settle on non-temporal stores while the cores shared a cache: 2-rank all_reduce, 20
// calls a size, near: 162 us at 1M and 253 at 2M under the timings, 111 and 200 with ordinary
// stores. Copies at more ranks once always staged with non-temporal stores, as 4-rank
// all_to_all of 256M ran 2.3x slower with ordinary ones while the cores were far apart (1.3x
// faster while they were near); but on a second VM, whose cores were neither, ordinary ones
// were 1.15-1.4x faster at most sizes of 4-rank all_to_all, all_gather and broadcast, 1M-64M.
void StagedOp::chooseStagingStores(bool inPlace) {
  const TimedChoice::Mode mode = group_->stagingStoresMode();
  const size_t bytes = sendBufferCount(args_) * elemSize_;
  const bool reduces = isReduction(args_.kind);
  // Both ranks probe or neither, whatever each was told: the probe waits for the other. (In the
  // single-copy band, they probe once all have chosen to stage: StagedOp::decide.)
  const bool twoRanks = group_->nranks() == 2;
  probes_ = twoRanks && bytes >= TimedChoice::kMinBytes;
  if (mode != TimedChoice::Mode::kAuto) {
    streamStage_ = mode == TimedChoice::Mode::kSecond;
  } else if (twoRanks) {
    streamStage_ = group_->coresFar().value_or(!reduces);
  } else if (singleCopyBand_) {
    // The single-copy choice times this call (no reduction is in the band), so the stores go as
    // the kind's timings of calls out of the band say.
    streamStage_ = group_->stagingStores(args_.kind).second();
  } else {
    timedBy_ = &group_->stagingStores(args_.kind);
    streamStage_ = timedBy_->secondFor(bytes, inPlace);
  }
}

void StagedOp::beginStaged() {
  if (!probes_) {
    state_ = State::kRunning;
    return;
  }
  probe_.begin(*group_, sequence_);
  group_->ringPeers();  // the first rank has written the first round
  state_ = State::kProbing;
}

// Nobody waits for these counters, which every rank moves past the chunks alike.
void StagedOp::publishShare() {
  for (Stage stage : {kStage, kCombine, kDrain})
    publish(stage, base_ + chunks_);
}

void StagedOp::recordTime() {
  // A call that went mapped ran neither way the choice was between.
  if (timedBy_ == nullptr || mapped_) return;
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started_;
  timedBy_->record(took.count());
}

Status StagedOp::progress(bool* progressed) {
  *progressed = false;
  if (state_ == State::kWaitSlot) {
    bool may = false;
    WEFT_RETURN_IF_ERROR(group_->mayPost(sequence_, &waitingFor_, &may));
    if (!may) {
      waitingWhat_ = "reach the previous operation";
      return okStatus();
    }
    memcpy(group_->postData(group_->rank(), sequence_), &mine_, sizeof(mine_));
    group_->post(sequence_, signature_);
    if (mayMap_ || singleCopyBand_)
      state_ = State::kDeciding;
    else
      beginStaged();
    *progressed = true;
  }
  if (state_ == State::kDeciding) WEFT_RETURN_IF_ERROR(decide(progressed));
  if (state_ == State::kMapped) WEFT_RETURN_IF_ERROR(runSchedule(progressed));
  if (state_ == State::kProbing) {
    // A peer that called with other arguments would never answer: find out first.
    bool posted = false;
    WEFT_RETURN_IF_ERROR(checkPeersPosted(&posted));
    if (!posted) return okStatus();
    bool wrote = false;
    const bool probed = probe_.poll(&wrote);
    if (wrote) group_->ringPeers();
    if (!probed) {
      waitingFor_ = 1 - group_->rank();
      waitingWhat_ = "answer the probe of the cores' distance";
      return okStatus();
    }
    group_->noteCoresFar(probe_.far());
    chooseStagingStores(send_ == recv_);
    chooseCombiningByHalves();
    WEFT_TRACE(kColl, "staged %s #%llu: a round trip to the peer's core took %.0f ns: %s stores%s",
               collName(args_.kind), static_cast<unsigned long long>(sequence_), probe_.nanos(),
               streamStage_ ? "non-temporal" : "ordinary",
               combinesByHalves() ? ", combined by halves" : "");
    state_ = State::kRunning;
    *progressed = true;
  }
  if (state_ != State::kRunning) return okStatus();
  // Stage, combine and drain in turn, chunk by chunk, while anything moves: a chunk goes
  // through this rank's stages while it is still in cache.
  bool any = *progressed;
  for (bool moved = true; moved;) {
    moved = tryStage(next_[kStage]);
    if (combines()) {
      bool combined = false;
      WEFT_RETURN_IF_ERROR(tryCombine(next_[kCombine], &combined));
      moved = moved || combined;
    }
    bool drained = false;
    WEFT_RETURN_IF_ERROR(tryDrain(next_[kDrain], &drained));
    moved = moved || drained;
    any = any || moved;
  }
  if (any) group_->ringPeers();
  if (next_[kDrain] == chunks_) {
    state_ = State::kDone;
    recordTime();
  }
  *progressed = any;
  return okStatus();
}

std::string StagedOp::describeWait() const {
  const auto seq = static_cast<unsigned long long>(sequence_);
  if (state_ == State::kDone) return "nothing";
  if (state_ == State::kDeciding) {
    return strprintf("staged operation #%llu: waiting for rank %d to start", seq, waitingFor_);
  }
  if (state_ == State::kMapped) {
    const char* way = singleCopied_ ? "single-copy" : "mapped";
    const int peer = mappedRun_->signalAwaited();  // in the last barrier: StagedOp has no first
    if (peer >= 0) {
      return strprintf("%s operation #%llu: waiting for rank %d to finish with this rank's buffers",
                       way, seq, peer);
    }
    return strprintf("%s operation #%llu: %s", way, seq, mappedRun_->describeWait().c_str());
  }
  return strprintf("staged operation #%llu: chunk %zu of %zu: waiting for rank %d to %s", seq,
                   next_[kDrain] + 1, chunks_, waitingFor_, waitingWhat_);
}

}  // namespace weft
