#include "weft/parallel/zero.hpp"

#include <string>

#include "errors.h"  // the layer sees only include/ and itself

#include "weft/parallel/data_parallel.hpp"

namespace weft::parallel {
namespace {

constexpr const char* kWho = "zero";

BucketLayout checkedLayout(Comm& comm, const std::vector<size_t>& counts, size_t capBytes) {
  return withContext(kWho, [&] {
    BucketLayout layout(counts, sizeof(float), capBytes, static_cast<size_t>(comm.size()));
    checkSameLayoutEverywhere(comm, counts, weftFloat32, capBytes);
    return layout;
  });
}

}  // namespace

Zero::Zero(Comm& comm, std::vector<size_t> counts, size_t bucketBytes, const AdamConfig& adam,
           MemoryLedger& ledger)
    : comm_(comm),
      rank_(static_cast<size_t>(comm.rank())),
      nranks_(static_cast<size_t>(comm.size())),
      counts_(std::move(counts)),
      adam_(adam),
      layout_(checkedLayout(comm, counts_, bucketBytes)),
      readiness_(layout_),
      params_(layout_.total * sizeof(float), MemoryKind::kParameters, ledger),
      grads_(layout_.total * sizeof(float), MemoryKind::kGradients, ledger),
      gradShard_(layout_.total / nranks_ * sizeof(float), MemoryKind::kGradients, ledger),
      moments_(2 * layout_.total / nranks_ * sizeof(float), MemoryKind::kOptimizerState, ledger) {}

Zero::~Zero() {
  weftStreamSynchronize(stream_.get());
}

void Zero::checkParam(size_t param) const {
  if (param >= counts_.size()) {
    fail(weftInvalidArgument, kWho,
         "no parameter " + std::to_string(param) + " (there are " + std::to_string(counts_.size()) +
             ")");
  }
}

std::span<float> Zero::param(size_t param) {
  checkParam(param);
  return {at(params_, layout_.offsets[param]), counts_[param]};
}

std::span<float> Zero::grad(size_t param) {
  checkParam(param);
  return {at(grads_, layout_.offsets[param]), counts_[param]};
}

void Zero::broadcastParameters(int root) {
  check(weftBroadcast(params_.data(), params_.data(), layout_.total, weftFloat32, root, comm_.get(),
                      nullptr),
        comm_.get());
}

void Zero::markReady(size_t param) {
  for (size_t b : withContext(kWho, [&] { return readiness_.markReady(param); })) {
    check(weftReduceScatter(at(grads_, layout_.buckets[b].first), at(gradShard_, sliceInShard(b)),
                            sliceLength(b), weftFloat32, weftAvg, comm_.get(), stream_.get()),
          comm_.get());
  }
}

void Zero::step() {
  const weftResult_t waited = weftStreamSynchronize(stream_.get());
  const std::string missing = readiness_.endStep();
  check(waited, comm_.get());
  if (!missing.empty()) {
    fail(weftInvalidUsage, kWho,
         "step() before the gradients of parameters " + missing +
             " were marked ready (their buckets were not reduced)");
  }
  ++steps_;
  const size_t shard = layout_.total / nranks_;
  for (size_t b = 0; b < layout_.buckets.size(); ++b) {
    const size_t len = sliceLength(b), s = sliceInShard(b);
    adamStep(adam_, steps_, {at(params_, sliceInFlat(b)), len}, {at(gradShard_, s), len},
             {at(moments_, s), len}, {at(moments_, shard + s), len});
  }
  for (size_t b = 0; b < layout_.buckets.size(); ++b) {
    check(weftAllGather(at(params_, sliceInFlat(b)), at(params_, layout_.buckets[b].first),
                        sliceLength(b), weftFloat32, comm_.get(), stream_.get()),
          comm_.get());
  }
  check(weftStreamSynchronize(stream_.get()), comm_.get());
}

}  // namespace weft::parallel
