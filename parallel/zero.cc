#include "weft/parallel/zero.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "agree.h"  // the layer sees only include/ and itself
#include "errors.h"
#include "thread_pool.h"
#include "weft/float16.hpp"

namespace weft::parallel {
namespace {

constexpr const char* kWho = "zero";

// The layout, after the ranks agree on it, on the stage, the type and offloading (agree.h).
BucketLayout checkedLayout(Comm& comm, int stage, const std::vector<size_t>& counts,
                           size_t capBytes, const std::vector<size_t>& unitOf,
                           const ZeroOptions& options) {
  return withContext(kWho, [&] {
    BucketLayout layout = agreedLayout(
        comm, counts, options.precision.type, capBytes, static_cast<size_t>(comm.size()), unitOf,
        {static_cast<size_t>(stage), static_cast<size_t>(options.precision.type),
         static_cast<size_t>(options.offload)});
    if (stage < 1 || stage > 3) {
      throw Error(weftInvalidArgument, "stage " + std::to_string(stage) + " is not 1, 2 or 3");
    }
    checkPrecision(options.precision);
    if (options.offload && options.offloadThreads < 1) {
      throw Error(weftInvalidArgument, "offloadThreads must be at least 1");
    }
    return layout;
  });
}

}  // namespace

Zero::Zero(Comm& comm, int stage, std::vector<size_t> counts, size_t bucketBytes,
           const AdamConfig& adam, MemoryLedger& ledger, const std::vector<size_t>& unitOf,
           const ZeroOptions& options)
    : comm_(comm),
      stage_(stage),
      rank_(static_cast<size_t>(comm.rank())),
      nranks_(static_cast<size_t>(comm.size())),
      counts_(std::move(counts)),
      adam_(adam),
      precision_(options.precision),
      offload_(options.offload),
      type_(options.precision.type),
      elemSize_(sizeOf(options.precision.type)),
      scaler_(options.precision),
      layout_(checkedLayout(comm, stage, counts_, bucketBytes, unitOf, options)),
      readiness_(layout_),
      ledger_(ledger),
      params_((stage == 3 ? layout_.total / nranks_ : layout_.total) * elemSize_,
              MemoryKind::kParameters, ledger),
      master_(hasMaster() ? layout_.total / nranks_ * sizeof(float) : 0,
              offload_ ? MemoryKind::kHostPool : MemoryKind::kOptimizerState, ledger),
      grads_(stage == 1 ? layout_.total * elemSize_ : 0, MemoryKind::kGradients, ledger),
      gradShard_(stage == 1 ? 0 : layout_.total / nranks_ * elemSize_, MemoryKind::kGradients,
                 ledger),
      moments_(2 * layout_.total / nranks_ * sizeof(float),
               offload_ ? MemoryKind::kHostPool : MemoryKind::kOptimizerState, ledger),
      slotOf_(layout_.buckets.size(), SIZE_MAX),
      reduced_(layout_.buckets.size(), false) {
  const size_t units = layout_.unitOf.back() + 1;
  unitFirst_.assign(units, layout_.total);
  unitElements_.assign(units, 0);
  for (const BucketLayout::Bucket& b : layout_.buckets) {
    largestBucket_ = std::max(largestBucket_, b.elements);
    unitFirst_[b.unit] = std::min(unitFirst_[b.unit], b.first);
    unitElements_[b.unit] += b.elements;
  }
  if (stage_ == 3) gathered_.resize(units);
  if (offload_) {
    pool_ = std::make_unique<ThreadPool>(options.offloadThreads);
    updates_.resize(layout_.buckets.size());
  }
}

Zero::~Zero() {
  for (std::future<void>& f : updates_) {  // wait(), not get(): nothing may throw from here
    if (f.valid()) f.wait();
  }
  waitForBuckets();
  for (Stream& s : gatherStreams_)
    weftStreamSynchronize(s.get());
}

void Zero::checkParam(size_t param) const {
  if (param >= counts_.size()) {
    fail(weftInvalidArgument, kWho,
         "no parameter " + std::to_string(param) + " (there are " + std::to_string(counts_.size()) +
             ")");
  }
}

void Zero::checkType(weftDataType_t type) const {
  if (type != type_) {
    fail(weftInvalidArgument, kWho,
         "parameters and gradients are of type " + std::to_string(static_cast<int>(type_)) +
             ", not " + std::to_string(static_cast<int>(type)) + " (PrecisionConfig::type)");
  }
}

void* Zero::paramData(size_t param) {
  checkParam(param);
  if (stage_ < 3) return typedAt(params_, layout_.offsets[param]);
  const size_t u = layout_.unitOf[param];
  if (!gathered_[u].ready) {
    fail(weftInvalidUsage, kWho,
         "parameter " + std::to_string(param) + " is in unit " + std::to_string(u) +
             ", which is not gathered: call gather(" + std::to_string(u) + ") first");
  }
  return typedAt(gathered_[u].buffer, layout_.offsets[param] - unitFirst_[u]);
}

void Zero::setParam(size_t param, std::span<const float> values) {
  checkParam(param);
  if (values.size() != counts_[param]) {
    fail(weftInvalidArgument, kWho,
         "parameter " + std::to_string(param) + " has " + std::to_string(counts_[param]) +
             " elements, not " + std::to_string(values.size()));
  }
  waitForUpdates();  // an update in flight would overwrite it
  const size_t first = layout_.offsets[param];
  if (stage_ < 3) {
    for (size_t x = 0; x < values.size(); ++x)
      storeFloat(values[x], type_, typedAt(params_, first + x));
  } else {
    dropGathered(layout_.unitOf[param]);  // its gathered copy would be stale
  }
  // The part of the parameter that falls in this rank's slice of its bucket, which stage 3
  // keeps, and master weights keep in float32.
  const size_t b = layout_.bucketOf[param];
  const size_t sliceFirst = sliceInFlat(b), sliceEnd = sliceFirst + sliceLength(b);
  const size_t from = std::max(first, sliceFirst), to = std::min(first + values.size(), sliceEnd);
  for (size_t x = from; x < to; ++x) {
    const size_t inShard = sliceInShard(b) + (x - sliceFirst);
    if (stage_ == 3) storeFloat(values[x - first], type_, typedAt(params_, inShard));
    if (hasMaster()) *at(master_, inShard) = values[x - first];
  }
}

void Zero::gather(size_t unit, size_t prefetch) {
  if (stage_ != 3) fail(weftInvalidUsage, kWho, "gather() is for stage 3");
  if (unit >= gathered_.size()) {
    fail(weftInvalidArgument, kWho, "no unit " + std::to_string(unit));
  }
  Gathered& g = gathered_[unit];
  if (!g.started) startGather(unit);
  check(weftStreamSynchronize(gatherStream(unit).get()), comm_.get());
  g.ready = true;
  if (prefetch < gathered_.size() && !gathered_[prefetch].started) startGather(prefetch);
}

void Zero::startGather(size_t unit) {
  Gathered& g = gathered_[unit];
  g.buffer = Buffer(unitElements_[unit] * elemSize_, MemoryKind::kGathered, ledger_);
  g.started = true;  // before the calls: a failure half way leaves gathers to wait for
  for (size_t b = 0; b < layout_.buckets.size(); ++b) {
    if (layout_.buckets[b].unit != unit) continue;
    waitForUpdate(b);  // offload: this step's update of the slice
    check(weftAllGather(typedAt(params_, sliceInShard(b)),
                        typedAt(g.buffer, layout_.buckets[b].first - unitFirst_[unit]),
                        sliceLength(b), type_, comm_.get(), gatherStream(unit).get()),
          comm_.get());
  }
}

void Zero::release(size_t unit) {
  if (stage_ != 3 || unit >= gathered_.size()) {
    fail(weftInvalidUsage, kWho, "release(" + std::to_string(unit) + "): no such stage 3 unit");
  }
  dropGathered(unit);
}

void Zero::dropGathered(size_t unit) {
  if (stage_ != 3) return;
  Gathered& g = gathered_[unit];
  if (!g.started) return;
  const weftResult_t waited = weftStreamSynchronize(gatherStream(unit).get());
  g.buffer.reset();
  g.started = false;
  g.ready = false;
  check(waited, comm_.get());
}

void* Zero::gradData(size_t param) {
  checkParam(param);
  const size_t b = layout_.bucketOf[param];
  return bucketGrads(b) + (layout_.offsets[param] - layout_.buckets[b].first) * elemSize_;
}

char* Zero::bucketGrads(size_t b) {
  if (stage_ == 1) return typedAt(grads_, layout_.buckets[b].first);
  if (reduced_[b]) {
    fail(weftInvalidUsage, kWho,
         "a gradient of bucket " + std::to_string(b) +
             " was asked for after the bucket was reduced in this step");
  }
  if (slotOf_[b] == SIZE_MAX) slotOf_[b] = takeSlot(b);
  return static_cast<char*>(slots_[slotOf_[b]]->buffer.data());
}

// A free bucket buffer; else a new one while there are fewer than two (so that one bucket's
// reduce-scatter overlaps the next bucket's gradients); else one whose reduce-scatter has
// started, once it is done; else a new one.
size_t Zero::takeSlot(size_t b) {
  constexpr size_t kOverlapped = 2;
  size_t pick = SIZE_MAX;
  for (size_t s = 0; s < slots_.size() && pick == SIZE_MAX; ++s) {
    if (slots_[s]->bucket == SIZE_MAX) pick = s;
  }
  for (size_t s = 0; s < slots_.size() && pick == SIZE_MAX && slots_.size() >= kOverlapped; ++s) {
    if (reduced_[slots_[s]->bucket]) {
      check(weftStreamSynchronize(slots_[s]->stream.get()), comm_.get());
      slotOf_[slots_[s]->bucket] = SIZE_MAX;
      pick = s;
    }
  }
  if (pick == SIZE_MAX) {
    auto slot = std::make_unique<Slot>();
    slot->buffer = Buffer(largestBucket_ * elemSize_, MemoryKind::kBuckets, ledger_);
    slots_.push_back(std::move(slot));
    pick = slots_.size() - 1;
  }
  Slot& slot = *slots_[pick];
  slot.bucket = b;
  std::memset(slot.buffer.data(), 0, layout_.buckets[b].elements * elemSize_);
  return pick;
}

void Zero::startBucket(size_t b) {
  waitForUpdate(b);  // offload: the last update still reads the gradient shard
  char* grads = bucketGrads(b);
  weftStream_t stream = stream_.get();
  if (stage_ > 1) {
    stream = slots_[slotOf_[b]]->stream.get();
    reduced_[b] = true;
  }
  check(weftReduceScatter(grads, averagedSlice(b), sliceLength(b), type_, weftAvg, comm_.get(),
                          stream),
        comm_.get());
}

weftResult_t Zero::waitForBuckets() {
  weftResult_t first = weftStreamSynchronize(stream_.get());
  for (auto& slot : slots_) {
    const weftResult_t r = weftStreamSynchronize(slot->stream.get());
    if (first == weftSuccess) first = r;
    slot->bucket = SIZE_MAX;
  }
  std::fill(slotOf_.begin(), slotOf_.end(), SIZE_MAX);
  std::fill(reduced_.begin(), reduced_.end(), false);
  return first;
}

void Zero::broadcastParameters(int root) {
  if (stage_ == 3) {
    fail(weftInvalidUsage, kWho,
         "stage 3 keeps slices of the parameters: set them with setParam()");
  }
  check(weftBroadcast(params_.data(), params_.data(), layout_.total, type_, root, comm_.get(),
                      nullptr),
        comm_.get());
  if (!hasMaster()) return;
  for (size_t b = 0; b < layout_.buckets.size(); ++b) {  // the master weights follow
    for (size_t i = 0; i < sliceLength(b); ++i)
      *at(master_, sliceInShard(b) + i) = loadFloat(type_, typedAt(params_, sliceInFlat(b) + i));
  }
}

void Zero::markReady(size_t param) {
  for (size_t b : withContext(kWho, [&] { return readiness_.markReady(param); }))
    startBucket(b);
}

bool Zero::checkOverflow(float* factor) {
  GradientCheck local;
  const float unscale = 1.0f / scaler_.scale();
  for (size_t b = 0; b < layout_.buckets.size(); ++b)
    checkGradients(averagedSlice(b), type_, sliceLength(b), unscale, &local);
  *factor = scaler_.stepFactor(globalCheck(comm_, local), precision_.maxGradNorm);
  return *factor == 0.0f;
}

void Zero::update(size_t b, float factor, int64_t step) {
  const size_t len = sliceLength(b), s = sliceInShard(b), shard = layout_.total / nranks_;
  auto run = [this, b, factor, step, len, s, shard] {
    adamStepMixed(adam_, step, {masterSlice(b), len}, averagedSlice(b), type_, factor,
                  {at(moments_, s), len}, {at(moments_, shard + s), len},
                  typedAt(params_, ownSlice(b)));
  };
  if (offload_) {
    updates_[b] = pool_->submit(run);
  } else {
    run();
  }
}

void Zero::waitForUpdate(size_t b) {
  if (offload_ && updates_[b].valid()) updates_[b].get();
}

void Zero::waitForUpdates() {
  for (size_t b = 0; b < updates_.size(); ++b)
    waitForUpdate(b);
}

bool Zero::step() {
  const std::string missing = readiness_.endStep();  // the next step starts whole either way
  check(waitForBuckets(), comm_.get());
  for (size_t u = 0; u < gathered_.size(); ++u)
    dropGathered(u);  // the slices change: units are gathered afresh when next used
  if (!missing.empty()) {
    fail(weftInvalidUsage, kWho,
         "step() before the gradients of parameters " + missing +
             " were marked ready (their buckets were not reduced)");
  }
  // Float32 without clipping neither scales nor checks: no all-reduce.
  float factor = 1.0f;
  if ((type_ != weftFloat32 || precision_.maxGradNorm > 0) && checkOverflow(&factor)) {
    ++skipped_;
    return false;
  }
  ++steps_;
  // Buckets hold the parameters last first: the last bucket is what the next forward needs
  // first.
  for (size_t b = layout_.buckets.size(); b-- > 0;)
    update(b, factor, steps_);
  if (stage_ == 3) return true;  // the units are gathered when next used
  for (size_t b = layout_.buckets.size(); b-- > 0;) {
    waitForUpdate(b);
    check(
        weftAllGather(typedAt(params_, sliceInFlat(b)), typedAt(params_, layout_.buckets[b].first),
                      sliceLength(b), type_, comm_.get(), stream_.get()),
        comm_.get());
  }
  check(weftStreamSynchronize(stream_.get()), comm_.get());
  return true;
}

}  // namespace weft::parallel
