#include "weft/parallel/precision.hpp"

#include <cmath>
#include <string>

#include "errors.h"
#include "weft/float16.hpp"

namespace weft::parallel {
namespace {

constexpr const char* kWho = "precision";

}  // namespace

void checkPrecision(const PrecisionConfig& c) {
  if (c.type != weftFloat32 && c.type != weftBfloat16 && c.type != weftFloat16) {
    fail(weftInvalidArgument, kWho,
         "type " + std::to_string(static_cast<int>(c.type)) +
             " is not weftFloat32, weftBfloat16 or weftFloat16");
  }
  if (!(c.initialLossScale > 0) || !std::isfinite(c.initialLossScale)) {
    fail(weftInvalidArgument, kWho, "the initial loss scale must be positive and finite");
  }
  if (c.growthInterval < 1) fail(weftInvalidArgument, kWho, "growthInterval must be at least 1");
  if (!(c.maxGradNorm >= 0) || !std::isfinite(c.maxGradNorm)) {
    fail(weftInvalidArgument, kWho, "maxGradNorm must be 0 (no clipping) or positive");
  }
}

LossScaler::LossScaler(const PrecisionConfig& c)
    : dynamic_(c.type == weftFloat16),
      scale_(dynamic_ ? c.initialLossScale : 1.0f),
      growthInterval_(c.growthInterval) {}

void LossScaler::update(bool overflow) {
  if (!dynamic_) return;
  if (overflow) {
    scale_ = std::max(scale_ / 2, 1.0f);
    goodSteps_ = 0;
  } else if (++goodSteps_ >= growthInterval_) {
    scale_ *= 2;
    goodSteps_ = 0;
  }
}

float LossScaler::stepFactor(const GradientCheck& global, float maxNorm) {
  const float unscale = 1.0f / scale_;  // before update() changes it
  const bool overflow = global.nonFinite > 0;
  update(overflow);
  return overflow ? 0.0f : unscale * clipFactor(global, maxNorm);
}

void checkGradients(const void* grads, weftDataType_t type, size_t n, float factor,
                    GradientCheck* check) {
  const size_t size = sizeOf(type);
  double squares = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const float g = loadFloat(type, static_cast<const char*>(grads) + i * size) * factor;
    if (std::isfinite(g)) {
      squares += static_cast<double>(g) * g;
    } else {
      ++bad;
    }
  }
  check->nonFinite += static_cast<double>(bad);
  check->sumSquares += squares;
}

GradientCheck globalCheck(Comm& comm, const GradientCheck& local) {
  double both[2] = {local.nonFinite, local.sumSquares};
  comm.allReduce(std::span<double>(both));
  return {both[0], both[1]};
}

float clipFactor(const GradientCheck& global, float maxNorm) {
  if (maxNorm <= 0) return 1.0f;
  const double norm = std::sqrt(global.sumSquares);
  return norm > maxNorm ? static_cast<float>(maxNorm / (norm + 1e-6)) : 1.0f;
}

}  // namespace weft::parallel
