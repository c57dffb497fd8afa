#include "tools/weft_train/trainer.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace weft_train {
namespace {

PrecisionConfig precisionOf(const Options& o) {
  PrecisionConfig p;
  p.type = o.precision == "bf16" ? weftBfloat16 : o.precision == "fp16" ? weftFloat16 : weftFloat32;
  p.maxGradNorm = o.clip;
  p.initialLossScale = o.lossScale;
  return p;
}

ModelShape shapeFor(const Options& o, const TextData& data) {
  ModelShape s = o.shape;
  s.vocab = data.vocab();
  return s;
}

}  // namespace

Trainer::Trainer(const Options& o, weft::Comm& comm)
    : o_(o), data_(o.text, o.shape.context), shape_(shapeFor(o, data_)), model_(shape_) {
  const int rank = comm.rank(), nranks = comm.size();
  if (o.batch < nranks) {
    throw std::invalid_argument("--batch " + std::to_string(o.batch) + " is smaller than the " +
                                std::to_string(nranks) + " ranks that split it");
  }
  AdamConfig adam;
  adam.lr = o.lr;
  strategy_ = Strategy::create(o, comm, parameterCounts(shape_), parameterUnits(shape_), adam,
                               precisionOf(o), ledger_);
  strategy_->setParameters(initialParameters(shape_, o.seed));
  // The ranks' average of their gradients is the global batch's mean gradient however the batch
  // divides.
  first_ = rank * o.batch / nranks;
  count_ = (rank + 1) * o.batch / nranks - first_;
  share_ = static_cast<float>(nranks) * static_cast<float>(count_) / static_cast<float>(o.batch);
}

double Trainer::step(int step, bool* taken) {
  data_.batch(o_.seed, static_cast<uint64_t>(step), o_.batch, first_, count_, &contexts_,
              &targets_);
  model_.setBatch(contexts_, targets_);
  const size_t units = model_.units();
  for (size_t u = 0; u < units; ++u) {
    model_.forward(u, strategy_->forwardParams(u));
    strategy_->forwardDone(u);
  }
  const double loss = model_.loss();
  const float scale = share_ * strategy_->lossScale();
  for (size_t u = units; u-- > 0;) {
    const auto params = strategy_->backwardParams(u);
    model_.backward(u, params, strategy_->grads(u), scale);
    strategy_->backwardDone(u);
  }
  *taken = strategy_->step();
  return loss;
}

void Trainer::computeOnly(int step, const std::vector<std::vector<float>>& params) {
  data_.batch(o_.seed, static_cast<uint64_t>(step), o_.batch, first_, count_, &contexts_,
              &targets_);
  model_.setBatch(contexts_, targets_);
  const std::vector<size_t> unitOf = parameterUnits(shape_);
  std::vector<std::vector<float>> grads(params.size());
  auto spansOf = [&](size_t u) {
    std::vector<std::span<const float>> p;
    std::vector<std::span<float>> g;
    for (size_t i = 0; i < params.size(); ++i) {
      if (unitOf[i] != u) continue;
      grads[i].resize(params[i].size());
      p.emplace_back(params[i]);
      g.emplace_back(grads[i]);
    }
    return std::make_pair(p, g);
  };
  const size_t units = model_.units();
  for (size_t u = 0; u < units; ++u)
    model_.forward(u, spansOf(u).first);
  for (size_t u = units; u-- > 0;) {
    auto [p, g] = spansOf(u);
    model_.backward(u, p, g, share_);
  }
}

void Trainer::communicationOnly(double idleMs) {
  const auto idle = std::chrono::duration<double, std::milli>(idleMs);
  const size_t units = model_.units();
  for (size_t u = 0; u < units; ++u) {
    strategy_->forwardParams(u);
    if (idleMs > 0) std::this_thread::sleep_for(idle);
    strategy_->forwardDone(u);
  }
  for (size_t u = units; u-- > 0;) {
    strategy_->backwardParams(u);
    for (std::span<float> g : strategy_->grads(u))
      std::fill(g.begin(), g.end(), 0.0f);
    if (idleMs > 0) std::this_thread::sleep_for(idle);
    strategy_->backwardDone(u);
  }
  strategy_->step();
}

std::vector<std::vector<float>> Trainer::parameters() {
  const std::vector<float> all = strategy_->allParameters();
  std::vector<std::vector<float>> out;
  size_t at = 0;
  for (size_t count : parameterCounts(shape_)) {
    out.emplace_back(all.begin() + static_cast<long>(at),
                     all.begin() + static_cast<long>(at + count));
    at += count;
  }
  return out;
}

}  // namespace weft_train
