// Zero: sharded data parallelism (ZeRO, Rajbhandari et al. 2020) over flat parameters that the
// layer holds, in float32 or a 16-bit type (precision.hpp). Parameters are laid out in buckets
// (buckets.hpp) whose lengths split into one equal slice per rank; rank r owns slice r of every
// bucket, and keeps the optimizer state (Adam's moments, and float32 master weights beside a
// 16-bit type) of its slices only.
//
// A bucket whose gradients are all ready is reduce-scattered (an average) on a stream, so that
// it overlaps the rest of the backward pass; step() waits, runs Adam on this rank's slices, and
// all-gathers every bucket's parameters.
//  - Stage 1: every rank holds all gradients as well as all parameters.
//  - Stage 2: gradients live in bucket buffers, each reused once its reduce-scatter is done;
//    two suffice for a backward pass that finishes one bucket before it starts the next (the
//    pool grows, and reports it, when more buckets are open at once).
//  - Stage 3 (FSDP): parameters are sharded too. The caller groups them into units (layers);
//    gather(u) all-gathers unit u's parameters before its forward and again before its
//    backward, and may prefetch the next unit meanwhile; release(u) frees them. Gradients are
//    as under stage 2, and step() has nothing to gather.
// With offload (ZeRO-Offload, Ren et al. 2021), the float32 master weights and Adam's moments live
// in the host pool (MemoryKind::kHostPool) and the update runs on a pool of threads, bucket by
// bucket in the order the next forward needs them: stages 1-2 all-gather each bucket as soon as
// its update is done; under stage 3 step() returns at once and a gather waits only for the
// updates of the units it gathers (gather(u, prefetch): u's and prefetch's), so the update
// overlaps the next step's gathers and forward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <vector>

#include "weft/parallel/adam.hpp"
#include "weft/parallel/buckets.hpp"
#include "weft/parallel/memory.hpp"
#include "weft/parallel/precision.hpp"
#include "weft/weft.hpp"

namespace weft::parallel {

class ThreadPool;

struct ZeroOptions {
  PrecisionConfig precision;
  bool offload = false;
  int offloadThreads = 2;  // the update's threads, with offload
};

class Zero {
 public:
  // Collective over `comm` (which must outlive it), as are markReady(), step(), gather() and
  // broadcastParameters(). unitOf gives each parameter's unit (see BucketLayout); stage 3 needs
  // it. Throws weft::Error for a stage other than 1-3, and as DataParallel does for bad or
  // differing layouts.
  // With a 16-bit precision.type, parameters and gradients (and the collectives on them) are of
  // that type, and this rank keeps float32 master weights of its slices with Adam's moments.
  Zero(Comm& comm, int stage, std::vector<size_t> counts, size_t bucketBytes,
       const AdamConfig& adam, MemoryLedger& ledger, const std::vector<size_t>& unitOf = {},
       const ZeroOptions& options = {});
  ~Zero();
  Zero(const Zero&) = delete;
  Zero& operator=(const Zero&) = delete;

  // Parameter `param`, to read (and, before the first step, to set alike on every rank or
  // followed by broadcastParameters()). Under stage 3, only while its unit is gathered, and
  // what is written there is lost: set parameters with setParam().
  // T is the precision's type: float, BFloat16 or Float16.
  template <typename T = float>
  std::span<T> param(size_t param) {
    checkType(dataTypeOf<T>());
    return {static_cast<T*>(paramData(param)), counts_.at(param)};
  }
  // The same untyped, for callers that convert by type().
  void* paramData(size_t param);
  void* gradData(size_t param);
  weftDataType_t type() const { return type_; }
  // Sets parameter `param` to `values` (its full length, the same on every rank), rounded to the
  // precision's type; under stage 3 this rank keeps its part.
  void setParam(size_t param, std::span<const float> values);
  // Its gradient, for the backward pass to write before markReady(param): zeros at first in
  // each step under stages 2 and 3 (whose buffers are reused), whatever the last step left
  // under 1.
  template <typename T = float>
  std::span<T> grad(size_t param) {
    checkType(dataTypeOf<T>());
    return {static_cast<T*>(gradData(param)), counts_.at(param)};
  }
  // Makes every rank's parameters rank `root`'s (stages 1 and 2).
  void broadcastParameters(int root = 0);
  // Stage 3: waits until unit `unit`'s parameters are gathered (starting the gather if it was
  // not prefetched), then starts gathering unit `prefetch` in the background; a number past the
  // last unit (the next of the last, or SIZE_MAX) prefetches nothing.
  // Every rank must gather and prefetch the same units in the same order.
  void gather(size_t unit, size_t prefetch = SIZE_MAX);
  // Stage 3: frees unit `unit`'s gathered parameters. step() and setParam() free those they
  // change.
  void release(size_t unit);

  void markReady(size_t param);
  // Waits for the gradients' reduce-scatters, updates this rank's slices, and gathers the
  // parameters. Throws if a gradient was not marked ready this step. With a 16-bit type or
  // clipping, one small all-reduce first checks every rank's gradients: a step with an inf or a
  // NaN anywhere changes nothing but the loss scale. Returns whether the step was taken.
  bool step();
  // What the backward pass multiplies the loss by (PrecisionConfig; 1 but for float16).
  float lossScale() const { return scaler_.scale(); }
  int64_t skippedSteps() const { return skipped_; }

  const BucketLayout& layout() const { return layout_; }
  // Stage 2's bucket buffers so far.
  size_t bucketBuffers() const { return slots_.size(); }

 private:
  // A bucket buffer (stages 2 and 3), holding one bucket's gradients at a time until its
  // reduce-scatter (reduced_) is done. Each has its own stream, so that waiting for one bucket's
  // reduce-scatter waits for no later one.
  struct Slot {
    Buffer buffer;
    Stream stream;
    size_t bucket = SIZE_MAX;  // SIZE_MAX: free
  };
  // A unit's gathered parameters (stage 3).
  struct Gathered {
    Buffer buffer;
    bool started = false;
    bool ready = false;  // gather() waited for it
  };
  float* at(const Buffer& b, size_t element) const { return b.as<float>().data() + element; }
  // Element `element` of a buffer of the precision's type.
  char* typedAt(const Buffer& b, size_t element) const {
    return static_cast<char*>(b.data()) + element * elemSize_;
  }
  void checkType(weftDataType_t type) const;
  // Where this rank's float32 copy of bucket b's slice is: the master weights, or with float32
  // the parameters themselves.
  bool hasMaster() const { return type_ != weftFloat32 || offload_; }
  float* masterSlice(size_t b) const {
    return hasMaster() ? at(master_, sliceInShard(b)) : at(params_, ownSlice(b));
  }
  // Bucket b's update on this rank's slices, and (with offload) waiting for it.
  void update(size_t b, float factor, int64_t step);
  void waitForUpdate(size_t b);
  void waitForUpdates();
  // Where this rank's slice of bucket b lives in params_: the flat buffer's slice, or under
  // stage 3 the shard's.
  size_t ownSlice(size_t b) const { return stage_ == 3 ? sliceInShard(b) : sliceInFlat(b); }
  // Where bucket b's reduce-scatter leaves this rank's averaged slice: under stage 1 in place,
  // in the full gradients (the slice a reduce-scatter's input holds of its output), else in the
  // gradient shard.
  char* averagedSlice(size_t b) const {
    return stage_ == 1 ? typedAt(grads_, sliceInFlat(b)) : typedAt(gradShard_, sliceInShard(b));
  }
  // The one small all-reduce of step(): whether any rank's gradients overflowed, and the factor
  // that unscales and clips them.
  bool checkOverflow(float* factor);
  void startGather(size_t unit);
  // Waits for unit `unit`'s gather if one was started, and frees what it gathered.
  void dropGathered(size_t unit);
  // The stream unit u's gather runs on: neighbouring units use different ones, so that waiting
  // for a unit never waits for the prefetch of the next.
  Stream& gatherStream(size_t unit) { return gatherStreams_[unit % 2]; }
  void checkParam(size_t param) const;
  // The gradients of bucket b, taking a bucket buffer for it under stage 2.
  char* bucketGrads(size_t b);
  size_t takeSlot(size_t b);
  void startBucket(size_t b);
  // Waits for every reduce-scatter and frees the bucket buffers; the first failure.
  weftResult_t waitForBuckets();
  // Bucket b's slice length, and where this rank's slice starts in the flat buffer and in the
  // shard buffers.
  size_t sliceLength(size_t b) const { return layout_.buckets[b].elements / nranks_; }
  size_t sliceInFlat(size_t b) const { return layout_.buckets[b].first + rank_ * sliceLength(b); }
  size_t sliceInShard(size_t b) const { return layout_.buckets[b].first / nranks_; }

  Comm& comm_;
  int stage_;
  size_t rank_;
  size_t nranks_;
  std::vector<size_t> counts_;
  AdamConfig adam_;
  PrecisionConfig precision_;
  bool offload_;
  weftDataType_t type_;
  size_t elemSize_;
  LossScaler scaler_;
  int64_t steps_ = 0;
  int64_t skipped_ = 0;
  BucketLayout layout_;
  BucketReadiness readiness_;
  MemoryLedger& ledger_;
  Buffer params_;  // all of them (stage 3: this rank's slices)
  Buffer master_;  // 16-bit types or offload: float32 copies of this rank's slices
  std::unique_ptr<ThreadPool> pool_;          // offload
  std::vector<std::future<void>> updates_;    // offload, per bucket: its update in flight
  Buffer grads_;                              // stage 1: all of them
  Buffer gradShard_;                          // stages 2-3: this rank's slices, averaged
  Buffer moments_;                            // Adam's m then v, for this rank's slices
  Stream stream_;                             // stage 1's reduce-scatters, and the gathers
  std::vector<std::unique_ptr<Slot>> slots_;  // stage 2
  std::vector<size_t> slotOf_;                // stages 2-3, per bucket; SIZE_MAX: none
  std::vector<bool> reduced_;  // stages 2-3, per bucket: its reduce-scatter started this step
  size_t largestBucket_ = 0;   // elements
  std::vector<size_t> unitFirst_, unitElements_;  // per unit, in the flat layout
  std::vector<Gathered> gathered_;                // stage 3, per unit
  Stream gatherStreams_[2];                       // stage 3
};

}  // namespace weft::parallel
