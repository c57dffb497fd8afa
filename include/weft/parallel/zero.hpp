// Zero: sharded data parallelism (ZeRO, Rajbhandari et al. 2020) over flat float32
// parameters that the layer holds. Parameters are laid out in buckets (buckets.hpp) whose
// lengths split into one equal slice per rank; rank r owns slice r of every bucket, and keeps
// the optimizer state (Adam's moments) of its slices only.
//
// Stage 1: every rank holds all parameters and all gradients. A bucket whose gradients are all
// ready is reduce-scattered (an average) on the layer's stream, so that it overlaps the rest
// of the backward pass; step() waits, runs Adam on this rank's slices, and all-gathers every
// bucket's parameters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "weft/parallel/adam.hpp"
#include "weft/parallel/buckets.hpp"
#include "weft/parallel/memory.hpp"
#include "weft/weft.hpp"

namespace weft::parallel {

class Zero {
 public:
  // Collective over `comm` (which must outlive it). Throws weft::Error as DataParallel does for
  // bad or differing layouts.
  Zero(Comm& comm, std::vector<size_t> counts, size_t bucketBytes, const AdamConfig& adam,
       MemoryLedger& ledger);
  ~Zero();
  Zero(const Zero&) = delete;
  Zero& operator=(const Zero&) = delete;

  // Parameter `param`: the caller sets it before the first step (the same on every rank, or
  // call broadcastParameters()) and reads it after each.
  std::span<float> param(size_t param);
  // Its gradient, which the backward pass writes before markReady(param).
  std::span<float> grad(size_t param);
  // Makes every rank's parameters rank `root`'s.
  void broadcastParameters(int root = 0);

  void markReady(size_t param);
  // Waits for the gradients' reduce-scatters, updates this rank's slices, and gathers the
  // parameters. Throws if a gradient was not marked ready this step.
  void step();

  const BucketLayout& layout() const { return layout_; }

 private:
  float* at(const Buffer& b, size_t element) const { return b.as<float>().data() + element; }
  void checkParam(size_t param) const;
  // Bucket b's slice length, and where this rank's slice starts in the flat buffer and in the
  // shard buffers.
  size_t sliceLength(size_t b) const { return layout_.buckets[b].elements / nranks_; }
  size_t sliceInFlat(size_t b) const { return layout_.buckets[b].first + rank_ * sliceLength(b); }
  size_t sliceInShard(size_t b) const { return layout_.buckets[b].first / nranks_; }

  Comm& comm_;
  size_t rank_;
  size_t nranks_;
  std::vector<size_t> counts_;
  AdamConfig adam_;
  int64_t steps_ = 0;
  BucketLayout layout_;
  BucketReadiness readiness_;
  Buffer params_;     // all of them
  Buffer grads_;      // all of them
  Buffer gradShard_;  // this rank's slices, averaged
  Buffer moments_;    // Adam's m then v, for this rank's slices
  Stream stream_;
};

}  // namespace weft::parallel
