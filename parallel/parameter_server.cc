#include "weft/parallel/parameter_server.hpp"

#include <string>

#include "agree.h"
#include "errors.h"  // the layer sees only include/ and itself
#include "step_end.h"

namespace weft::parallel {
namespace {

constexpr const char* kWho = "parameter server";

BucketLayout checkedLayout(Comm& comm, int servers, const std::vector<size_t>& counts,
                           size_t capBytes) {
  return withContext(kWho, [&] {
    BucketLayout layout =
        agreedLayout(comm, counts, weftFloat32, capBytes, 1, {}, {static_cast<size_t>(servers)});
    if (servers < 1 || servers > comm.size()) {
      throw Error(weftInvalidArgument, std::to_string(servers) + " servers: there are " +
                                           std::to_string(comm.size()) + " ranks to serve");
    }
    return layout;
  });
}

}  // namespace

ParameterServer::ParameterServer(Comm& comm, int servers, std::vector<size_t> counts,
                                 size_t bucketBytes, const AdamConfig& adam, MemoryLedger& ledger)
    : comm_(comm),
      servers_(static_cast<size_t>(servers)),
      rank_(comm.rank()),
      counts_(std::move(counts)),
      adam_(adam),
      layout_(checkedLayout(comm, servers, counts_, bucketBytes)),
      readiness_(layout_),
      params_(layout_.total * sizeof(float), MemoryKind::kParameters, ledger),
      grads_(layout_.total * sizeof(float), MemoryKind::kGradients, ledger) {
  momentOffset_.assign(layout_.buckets.size(), SIZE_MAX);
  for (size_t b = 0; b < layout_.buckets.size(); ++b) {
    if (serverOf(b) != rank_) continue;
    momentOffset_[b] = served_;
    served_ += layout_.buckets[b].elements;
  }
  moments_ = Buffer(2 * served_ * sizeof(float), MemoryKind::kOptimizerState, ledger);
}

ParameterServer::~ParameterServer() {
  // Reductions may still be in flight on the stream, reading the gradients.
  weftStreamSynchronize(stream_.get());
}

void ParameterServer::checkParam(size_t param) const {
  if (param >= counts_.size()) {
    fail(weftInvalidArgument, kWho,
         "no parameter " + std::to_string(param) + " (there are " + std::to_string(counts_.size()) +
             ")");
  }
}

std::span<float> ParameterServer::param(size_t param) {
  checkParam(param);
  return {at(params_, layout_.offsets[param]), counts_[param]};
}

std::span<float> ParameterServer::grad(size_t param) {
  checkParam(param);
  return {at(grads_, layout_.offsets[param]), counts_[param]};
}

void ParameterServer::markReady(size_t param) {
  for (size_t b : withContext(kWho, [&] { return readiness_.markReady(param); })) {
    const BucketLayout::Bucket& bucket = layout_.buckets[b];
    float* data = at(grads_, bucket.first);
    float* result = serverOf(b) == rank_ ? data : nullptr;  // only the server gets the sum
    check(weftReduce(data, result, bucket.elements, weftFloat32, weftAvg, serverOf(b), comm_.get(),
                     stream_.get()),
          comm_.get());
  }
}

void ParameterServer::step() {
  endReductions(readiness_, weftStreamSynchronize(stream_.get()), comm_, kWho, "step()");
  ++steps_;
  for (size_t b = 0; b < layout_.buckets.size(); ++b) {
    if (serverOf(b) != rank_) continue;
    const BucketLayout::Bucket& bucket = layout_.buckets[b];
    const size_t m = momentOffset_[b];
    adamStep(adam_, steps_, {at(params_, bucket.first), bucket.elements},
             {at(grads_, bucket.first), bucket.elements}, {at(moments_, m), bucket.elements},
             {at(moments_, served_ + m), bucket.elements});
  }
  for (size_t b = 0; b < layout_.buckets.size(); ++b) {
    const BucketLayout::Bucket& bucket = layout_.buckets[b];
    float* data = at(params_, bucket.first);
    check(weftBroadcast(data, data, bucket.elements, weftFloat32, serverOf(b), comm_.get(),
                        stream_.get()),
          comm_.get());
  }
  check(weftStreamSynchronize(stream_.get()), comm_.get());
}

}  // namespace weft::parallel
