// Mixed precision (Micikevicius et al. 2018, as torch.cuda.amp and DeepSpeed do it): parameters
// and gradients in a 16-bit type for compute and communication, float32 master weights beside
// the optimizer state, the loss scaled so that float16 gradients neither underflow nor
// overflow, and gradients clipped by their global norm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "weft/weft.hpp"

namespace weft::parallel {

struct PrecisionConfig {
  // Parameters and gradients: weftFloat32, weftBfloat16 or weftFloat16. With a 16-bit type, the
  // optimizer keeps float32 master weights.
  weftDataType_t type = weftFloat32;
  // Dynamic loss scaling, float16 only (bfloat16 has float32's range): the backward pass scales
  // the loss by LossScaler::scale(); a step whose gradients hold an inf or a NaN on any rank is
  // skipped and halves the scale, and growthInterval good steps in a row double it.
  float initialLossScale = 65536.0f;
  int growthInterval = 1000;
  // Clips the gradients to this global L2 norm (over every rank's); 0 does not clip.
  float maxGradNorm = 0.0f;
};

// Throws weft::Error (weftInvalidArgument) naming what is wrong with a config.
void checkPrecision(const PrecisionConfig& config);

// What a step's gradients hold, summed over slices and then over ranks.
struct GradientCheck {
  double nonFinite = 0;   // elements that are inf or NaN
  double sumSquares = 0;  // of the gradients times the factor given
};

class LossScaler {
 public:
  explicit LossScaler(const PrecisionConfig& config);
  float scale() const { return scale_; }
  // After a step's global check: an overflow halves the scale; growthInterval steps without
  // one double it.
  void update(bool overflow);
  // A step's end, given its gradients' check over every rank (made with factor 1 / scale()):
  // what to multiply the gradients by (unscaled by the scale they were computed with, clipped to
  // maxNorm when it is positive), or 0 when the step must be skipped; then update().
  float stepFactor(const GradientCheck& global, float maxNorm);

 private:
  bool dynamic_;
  float scale_;
  int growthInterval_;
  int goodSteps_ = 0;
};

// Adds n gradients of `type` at `grads`, each times `factor`, to *check.
void checkGradients(const void* grads, weftDataType_t type, size_t n, float factor,
                    GradientCheck* check);
// The ranks' checks summed, in one small all-reduce over comm.
GradientCheck globalCheck(Comm& comm, const GradientCheck& local);
// What clipping to maxNorm multiplies the gradients by (1 when maxNorm is 0 or not exceeded).
float clipFactor(const GradientCheck& global, float maxNorm);

}  // namespace weft::parallel
