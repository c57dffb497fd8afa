#include "tools/weft_train/strategy.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "weft/float16.hpp"
#include "weft/parallel/data_parallel.hpp"
#include "weft/parallel/parameter_server.hpp"
#include "weft/parallel/zero.hpp"

namespace weft_train {
namespace {

using weft::parallel::Buffer;
using weft::parallel::LossScaler;
using weft::parallel::MemoryKind;

// Every rank holds every parameter, its gradient (in DataParallel's buckets) and Adam's state of
// all of them (with master weights for a 16-bit type), and updates all of them after the
// buckets' all-reduces. Every rank has the same averaged gradients, so the overflow check and
// the norm need no communication.
class DataParallelStrategy : public Strategy {
 public:
  DataParallelStrategy(weft::Comm& comm, const std::vector<size_t>& counts,
                       std::vector<size_t> units, size_t bucketBytes, const AdamConfig& adam,
                       const PrecisionConfig& precision, MemoryLedger& ledger)
      : Strategy(precision.type, counts, std::move(units)),
        adam_(adam),
        precision_(precision),
        scaler_(precision),
        dp_(comm, precision.type, counts, bucketBytes, ledger) {
    weft::parallel::checkPrecision(precision);
    offsets_.resize(counts_.size() + 1, 0);
    std::partial_sum(counts_.begin(), counts_.end(), offsets_.begin() + 1);
    const size_t total = offsets_.back();
    params_ = Buffer(total * weft::sizeOf(type_), MemoryKind::kParameters, ledger);
    if (type_ != weftFloat32) {
      master_ = Buffer(total * sizeof(float), MemoryKind::kOptimizerState, ledger);
    }
    moments_ = Buffer(2 * total * sizeof(float), MemoryKind::kOptimizerState, ledger);
  }

  void setParameters(const std::vector<std::vector<float>>& values) override {
    for (size_t i = 0; i < counts_.size(); ++i) {
      for (size_t x = 0; x < counts_[i]; ++x) {
        weft::storeFloat(values[i][x], type_, element(params_, offsets_[i] + x));
        if (type_ != weftFloat32) master_.as<float>()[offsets_[i] + x] = values[i][x];
      }
    }
  }
  float lossScale() const override { return scaler_.scale(); }
  bool step() override {
    dp_.finish();
    float factor = 1.0f;
    if (type_ != weftFloat32 || precision_.maxGradNorm > 0) {
      weft::parallel::GradientCheck check;
      for (size_t i = 0; i < counts_.size(); ++i)
        weft::parallel::checkGradients(gradData(i), type_, counts_[i], 1 / lossScale(), &check);
      factor = scaler_.stepFactor(check, precision_.maxGradNorm);
      if (factor == 0.0f) return false;
    }
    ++steps_;
    const size_t total = offsets_.back();
    std::span<float> m = moments_.as<float>().first(total), v = moments_.as<float>().last(total);
    std::span<float> master = type_ == weftFloat32 ? params_.as<float>() : master_.as<float>();
    for (size_t i = 0; i < counts_.size(); ++i) {
      weft::parallel::adamStepMixed(adam_, steps_, master.subspan(offsets_[i], counts_[i]),
                                    gradData(i), type_, factor, m.subspan(offsets_[i], counts_[i]),
                                    v.subspan(offsets_[i], counts_[i]),
                                    element(params_, offsets_[i]));
    }
    return true;
  }
  std::vector<float> allParameters() override {
    std::vector<float> out(offsets_.back());
    for (size_t x = 0; x < out.size(); ++x)
      out[x] = weft::loadFloat(type_, element(params_, x));
    return out;
  }

 protected:
  const void* paramData(size_t i) override { return element(params_, offsets_[i]); }
  void* gradData(size_t i) override { return dp_.gradData(i); }
  void gradsWritten(size_t unit) override {
    for (size_t i : tensorsOf(unit))
      dp_.markReady(i);
  }

 private:
  char* element(const Buffer& b, size_t x) const {
    return static_cast<char*>(b.data()) + x * weft::sizeOf(type_);
  }

  AdamConfig adam_;
  PrecisionConfig precision_;
  LossScaler scaler_;
  weft::parallel::DataParallel dp_;
  std::vector<size_t> offsets_;  // of each tensor, and the total
  Buffer params_;
  Buffer master_;
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
               const PrecisionConfig& precision, bool offload, MemoryLedger& ledger)
      : Strategy(precision.type, counts, units),
        stage_(stage),
        zero_(comm, stage, counts, bucketBytes, adam, ledger, units,
              weft::parallel::ZeroOptions{precision, offload}) {}

  void setParameters(const std::vector<std::vector<float>>& values) override {
    for (size_t i = 0; i < counts_.size(); ++i)
      zero_.setParam(i, values[i]);
  }
  void forwardDone(size_t unit) override {
    if (stage_ == 3) zero_.release(unit);
  }
  float lossScale() const override { return zero_.lossScale(); }
  bool step() override { return zero_.step(); }
  std::vector<float> allParameters() override {
    std::vector<float> out;
    const size_t units = units_.empty() ? 0 : units_.back() + 1;
    for (size_t u = 0; u < units; ++u) {
      if (stage_ == 3) zero_.gather(u);
      for (size_t i : tensorsOf(u)) {
        const char* p = static_cast<const char*>(paramData(i));
        for (size_t x = 0; x < counts_[i]; ++x)
          out.push_back(weft::loadFloat(type_, p + x * weft::sizeOf(type_)));
      }
      if (stage_ == 3) zero_.release(u);
    }
    return out;
  }

 protected:
  void gathering(size_t unit, bool backward) override {
    if (stage_ != 3) return;
    if (backward) {
      zero_.gather(unit, unit == 0 ? SIZE_MAX : unit - 1);
    } else {
      zero_.gather(unit, unit + 1);
    }
  }
  const void* paramData(size_t i) override { return zero_.paramData(i); }
  void* gradData(size_t i) override { return zero_.gradData(i); }
  void gradsWritten(size_t unit) override {
    for (size_t i : tensorsOf(unit))
      zero_.markReady(i);
    if (stage_ == 3) zero_.release(unit);
  }

 private:
  int stage_;
  weft::parallel::Zero zero_;
};

// Parameter servers: ranks 0 to servers-1 keep the optimizer state of their share of the
// buckets, take the reduced gradients of those and broadcast the updated parameters.
class ParameterServerStrategy : public Strategy {
 public:
  ParameterServerStrategy(int servers, weft::Comm& comm, const std::vector<size_t>& counts,
                          std::vector<size_t> units, size_t bucketBytes, const AdamConfig& adam,
                          MemoryLedger& ledger)
      : Strategy(weftFloat32, counts, std::move(units)),
        ps_(comm, servers, counts, bucketBytes, adam, ledger) {}

  void setParameters(const std::vector<std::vector<float>>& values) override {
    for (size_t i = 0; i < counts_.size(); ++i)
      std::copy(values[i].begin(), values[i].end(), ps_.param(i).begin());
  }
  float lossScale() const override { return 1.0f; }
  bool step() override {
    ps_.step();
    return true;
  }
  std::vector<float> allParameters() override {
    std::vector<float> out;
    for (size_t i = 0; i < counts_.size(); ++i)
      out.insert(out.end(), ps_.param(i).begin(), ps_.param(i).end());
    return out;
  }

 protected:
  const void* paramData(size_t i) override { return ps_.param(i).data(); }
  void* gradData(size_t i) override { return ps_.grad(i).data(); }
  void gradsWritten(size_t unit) override {
    for (size_t i : tensorsOf(unit))
      ps_.markReady(i);
  }

 private:
  weft::parallel::ParameterServer ps_;
};

}  // namespace

Strategy::Strategy(weftDataType_t type, std::vector<size_t> counts, std::vector<size_t> units)
    : type_(type), counts_(std::move(counts)), units_(std::move(units)) {}

std::vector<size_t> Strategy::tensorsOf(size_t unit) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < units_.size(); ++i) {
    if (units_[i] == unit) out.push_back(i);
  }
  return out;
}

std::vector<std::span<const float>> Strategy::paramsOf(size_t unit) {
  const std::vector<size_t> tensors = tensorsOf(unit);
  std::vector<std::span<const float>> out;
  paramWork_.resize(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    const size_t i = tensors[k];
    if (type_ == weftFloat32) {
      out.emplace_back(static_cast<const float*>(paramData(i)), counts_[i]);
      continue;
    }
    const char* p = static_cast<const char*>(paramData(i));
    paramWork_[k].resize(counts_[i]);
    for (size_t x = 0; x < counts_[i]; ++x)
      paramWork_[k][x] = weft::loadFloat(type_, p + x * weft::sizeOf(type_));
    out.emplace_back(paramWork_[k]);
  }
  return out;
}

std::vector<std::span<const float>> Strategy::forwardParams(size_t unit) {
  gathering(unit, false);
  return paramsOf(unit);
}

std::vector<std::span<const float>> Strategy::backwardParams(size_t unit) {
  gathering(unit, true);
  return paramsOf(unit);
}

std::vector<std::span<float>> Strategy::grads(size_t unit) {
  const std::vector<size_t> tensors = tensorsOf(unit);
  std::vector<std::span<float>> out;
  gradWork_.resize(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    const size_t i = tensors[k];
    if (type_ == weftFloat32) {
      out.emplace_back(static_cast<float*>(gradData(i)), counts_[i]);
    } else {
      gradWork_[k].resize(counts_[i]);
      out.emplace_back(gradWork_[k]);
    }
  }
  return out;
}

void Strategy::backwardDone(size_t unit) {
  if (type_ != weftFloat32) {
    const std::vector<size_t> tensors = tensorsOf(unit);
    for (size_t k = 0; k < tensors.size(); ++k) {
      char* g = static_cast<char*>(gradData(tensors[k]));
      for (size_t x = 0; x < gradWork_[k].size(); ++x)
        weft::storeFloat(gradWork_[k][x], type_, g + x * weft::sizeOf(type_));
    }
  }
  gradsWritten(unit);
}

std::unique_ptr<Strategy> Strategy::create(const Options& o, weft::Comm& comm,
                                           const std::vector<size_t>& counts,
                                           const std::vector<size_t>& units, const AdamConfig& adam,
                                           const PrecisionConfig& precision, MemoryLedger& ledger) {
  if (o.paramServers > 0) {
    return std::make_unique<ParameterServerStrategy>(o.paramServers, comm, counts, units,
                                                     o.bucketBytes, adam, ledger);
  }
  if (o.zero == 0) {
    return std::make_unique<DataParallelStrategy>(comm, counts, units, o.bucketBytes, adam,
                                                  precision, ledger);
  }
  return std::make_unique<ZeroStrategy>(o.zero, comm, counts, units, o.bucketBytes, adam, precision,
                                        o.offload, ledger);
}

}  // namespace weft_train
