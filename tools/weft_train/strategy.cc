#include "tools/weft_train/strategy.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "weft/parallel/data_parallel.hpp"
#include "weft/parallel/zero.hpp"

namespace weft_train {
namespace {

using weft::parallel::Buffer;
using weft::parallel::MemoryKind;

template <typename T>
std::vector<std::span<const T>> asConst(const std::vector<std::span<T>>& spans) {
  return {spans.begin(), spans.end()};
}

// Every rank holds every parameter, its gradient (in DataParallel's buckets) and Adam's moments
// of all of them, and updates all of them after the buckets' all-reduces.
class DataParallelStrategy : public Strategy {
 public:
  DataParallelStrategy(weft::Comm& comm, const std::vector<size_t>& counts,
                       std::vector<size_t> units, size_t bucketBytes, const AdamConfig& adam,
                       MemoryLedger& ledger)
      : Strategy(counts, std::move(units)),
        adam_(adam),
        dp_(comm, weftFloat32, counts, bucketBytes, ledger) {
    offsets_.resize(counts_.size() + 1, 0);
    std::partial_sum(counts_.begin(), counts_.end(), offsets_.begin() + 1);
    const size_t total = offsets_.back();
    params_ = Buffer(total * sizeof(float), MemoryKind::kParameters, ledger);
    moments_ = Buffer(2 * total * sizeof(float), MemoryKind::kOptimizerState, ledger);
  }

  void setParameters(const std::vector<std::vector<float>>& values) override {
    for (size_t i = 0; i < counts_.size(); ++i)
      std::copy(values[i].begin(), values[i].end(), param(i).begin());
  }
  std::vector<std::span<const float>> forwardParams(size_t unit) override {
    return backwardParams(unit);
  }
  std::vector<std::span<const float>> backwardParams(size_t unit) override {
    std::vector<std::span<const float>> out;
    for (size_t i : tensorsOf(unit))
      out.push_back(param(i));
    return out;
  }
  std::vector<std::span<float>> grads(size_t unit) override {
    std::vector<std::span<float>> out;
    for (size_t i : tensorsOf(unit))
      out.push_back(dp_.grad<float>(i));
    return out;
  }
  void backwardDone(size_t unit) override {
    for (size_t i : tensorsOf(unit))
      dp_.markReady(i);
  }
  void step() override {
    dp_.finish();
    ++steps_;
    const size_t total = offsets_.back();
    std::span<float> m = moments_.as<float>().first(total), v = moments_.as<float>().last(total);
    for (size_t i = 0; i < counts_.size(); ++i) {
      weft::parallel::adamStep(adam_, steps_, param(i), dp_.grad<float>(i),
                               m.subspan(offsets_[i], counts_[i]),
                               v.subspan(offsets_[i], counts_[i]));
    }
  }
  std::vector<float> allParameters() override {
    std::span<const float> all = params_.as<float>();
    return {all.begin(), all.end()};
  }

 private:
  std::span<float> param(size_t i) const {
    return params_.as<float>().subspan(offsets_[i], counts_[i]);
  }

  AdamConfig adam_;
  weft::parallel::DataParallel dp_;
  std::vector<size_t> offsets_;  // of each tensor in params_, and the total
  Buffer params_;
  Buffer moments_;
  int64_t steps_ = 0;
};

// ZeRO: the layer keeps what each stage shards; under stage 3 each unit's parameters are
// gathered before its forward and again before its backward (the next prefetched), and freed
// after each.
class ZeroStrategy : public Strategy {
 public:
  ZeroStrategy(int stage, weft::Comm& comm, const std::vector<size_t>& counts,
               const std::vector<size_t>& units, size_t bucketBytes, const AdamConfig& adam,
               MemoryLedger& ledger)
      : Strategy(counts, units),
        stage_(stage),
        zero_(comm, stage, counts, bucketBytes, adam, ledger, units) {}

  void setParameters(const std::vector<std::vector<float>>& values) override {
    for (size_t i = 0; i < counts_.size(); ++i)
      zero_.setParam(i, values[i]);
  }
  std::vector<std::span<const float>> forwardParams(size_t unit) override {
    if (stage_ == 3) zero_.gather(unit, unit + 1);
    return params(unit);
  }
  void forwardDone(size_t unit) override {
    if (stage_ == 3) zero_.release(unit);
  }
  std::vector<std::span<const float>> backwardParams(size_t unit) override {
    if (stage_ == 3) zero_.gather(unit, unit == 0 ? SIZE_MAX : unit - 1);
    return params(unit);
  }
  std::vector<std::span<float>> grads(size_t unit) override {
    std::vector<std::span<float>> out;
    for (size_t i : tensorsOf(unit))
      out.push_back(zero_.grad(i));
    return out;
  }
  void backwardDone(size_t unit) override {
    for (size_t i : tensorsOf(unit))
      zero_.markReady(i);
    if (stage_ == 3) zero_.release(unit);
  }
  void step() override { zero_.step(); }
  std::vector<float> allParameters() override {
    std::vector<float> out;
    const size_t units = units_.empty() ? 0 : units_.back() + 1;
    for (size_t u = 0; u < units; ++u) {
      if (stage_ == 3) zero_.gather(u);
      for (std::span<const float> p : params(u))
        out.insert(out.end(), p.begin(), p.end());
      if (stage_ == 3) zero_.release(u);
    }
    return out;
  }

 private:
  std::vector<std::span<const float>> params(size_t unit) {
    std::vector<std::span<float>> out;
    for (size_t i : tensorsOf(unit))
      out.push_back(zero_.param(i));
    return asConst(out);
  }

  int stage_;
  weft::parallel::Zero zero_;
};

}  // namespace

Strategy::Strategy(std::vector<size_t> counts, std::vector<size_t> units)
    : counts_(std::move(counts)), units_(std::move(units)) {}

std::vector<size_t> Strategy::tensorsOf(size_t unit) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < units_.size(); ++i) {
    if (units_[i] == unit) out.push_back(i);
  }
  return out;
}

std::unique_ptr<Strategy> Strategy::create(int zero, weft::Comm& comm,
                                           const std::vector<size_t>& counts,
                                           const std::vector<size_t>& units, size_t bucketBytes,
                                           const AdamConfig& adam, MemoryLedger& ledger) {
  if (zero == 0) {
    return std::make_unique<DataParallelStrategy>(comm, counts, units, bucketBytes, adam, ledger);
  }
  return std::make_unique<ZeroStrategy>(zero, comm, counts, units, bucketBytes, adam, ledger);
}

}  // namespace weft_train
