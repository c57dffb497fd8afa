// The mapped path as a schedule builder (collectives/mapped.h says what each rank's share is):
// memory steps that reduce from, get from and put into the peers' buffers, between two barriers
// of signals with the ranks whose buffers each touches. The simulator runs it over virtual ranks;
// StagedOp runs it on the executor over MappedFace once every rank has posted mapped buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/direct.h"
#include "collectives/executor.h"
#include "collectives/lru_cache.h"
#include "collectives/mapped.h"
#include "collectives/memory_face.h"
#include "collectives/reduce.h"
#include "collectives/schedule.h"

namespace weft {

struct MappedOptions {
  size_t elemSize = 1;
  // Bytes a step covers: the runner can stop between steps, and a sum that is streamed out
  // collects in scratch of this size, in cache. (Gets through the kernel take whole blocks: a
  // call each costs more than a copy of a piece.)
  size_t pieceBytes = size_t{128} << 10;
  // Outputs are written with non-temporal stores; reductions then sum in scratch first, so
  // that each output byte is written once and never read.
  bool stream = false;
  // The runner has seen every rank enter the call (StagedOp: all have posted their buffers),
  // so the schedule leaves out its first barrier, as StagedOp always does; the simulator runs
  // the first barrier too.
  bool entered = false;
};

// Whether rank `rank`'s share reads or writes rank `owner`'s buffers: every other rank's, but
// in a broadcast, where every rank reads the root's input only.
bool mappedTouches(const CollArgs& args, int rank, int owner);

// For the collectives that have a mapped form (mappedNeeds): broadcast, reduce, all-reduce,
// reduce-scatter, all-gather, all-to-all.
Schedule buildMappedSchedule(const CollArgs& args, const MappedOptions& options);

// The memory face of mapped and single-copy calls on shared memory: every rank's buffers, as
// mapped here (StagedOp::mapPeers) or, for single copy, as addresses in the peers' processes that
// the kernel reads (collectives/single_copy.h), and the signal counters in the ranks' windows
// (SlotControl::signals). A signal stores the call's number with its place among the signals to
// that peer in the call, and a wait takes a value at least as high: a peer that has gone on to
// later calls has signalled this one too, so no wait ever takes another call's signal.
class MappedFace : public MemoryFace {
 public:
  // The most signals one call raises to a peer (the mapped schedule: 2).
  static constexpr uint64_t kSignalsPerCall = 16;

  // `call`: the operation's number, the same on every rank and growing from call to call.
  // kernelInputs: for single copy, every rank's input as an address in its own process, which
  // the kernel reads; else nullptr, and buffers holds every rank's buffers as mapped here.
  void beginCall(DirectGroup* group, uint64_t call, const CollArgs& args, size_t elemSize,
                 const MappedBuffers* buffers, const std::vector<uint64_t>* kernelInputs);
  PeerBuffer buffer(int peer, BufId buf) override;
  void signal(int peer) override;
  bool takeSignal(int peer) override;
  bool peerFailed(int peer) override { return group_->peerFailed(peer); }

 private:
  DirectGroup* group_ = nullptr;
  size_t sendBytes_ = 0, recvBytes_ = 0;  // of every rank's buffers
  const MappedBuffers* buffers_ = nullptr;
  const std::vector<uint64_t>* kernelInputs_ = nullptr;
  uint64_t base_ = 0;            // the call's first signal value
  std::vector<uint64_t> sent_;   // by peer: this call's signals to it so far
  std::vector<uint64_t> taken_;  // by peer: this call's signals from it taken so far
};

// Executors of mapped schedules that a group ran, ready to run again on other buffers of the
// same call (analysing a schedule costs more than a small call).
class MappedExecutors {
 public:
  // The executor for this call of this rank, started on buffers send, recv and its own scratch.
  Status get(const CollArgs& args, const MappedOptions& options, ReduceFn reduce, const void* send,
             void* recv, MemoryFace* memory, Executor** out);

 private:
  // What a schedule's executor depends on: the call, and how its buffers overlap.
  struct MappedShape {
    CollKind kind = CollKind::kAllReduce;
    size_t count = 0;
    int root = 0;
    int rank = 0;
    int nranks = 1;
    size_t elemSize = 1;
    size_t pieceBytes = 0;
    ReduceFn reduce = nullptr;
    bool stream = false;
    bool entered = false;
    int64_t recvFromSend = 0;  // recv - send where they overlap, else INT64_MIN
    bool operator==(const MappedShape&) const = default;
  };
  struct Entry {
    std::vector<char> scratch;
    std::vector<BufferView> views;  // this call's: send, recv, scratch
    std::unique_ptr<Executor> executor;
  };
  LruCache<MappedShape, Entry, 8> entries_;
};

}  // namespace weft
