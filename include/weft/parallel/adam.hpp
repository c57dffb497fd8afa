// Adam, as torch.optim.Adam computes it (weight decay added to the gradient, bias-corrected
// moments), on flat float spans: the one piece of arithmetic the training layer does itself.
#pragma once

#include <cstdint>
#include <span>

#include "weft/weft.h"

namespace weft::parallel {

struct AdamConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weightDecay = 0.0f;
};

// One step (`step` counts from 1) over equally long spans: params -= lr * mhat / (sqrt(vhat) +
// eps).
void adamStep(const AdamConfig& config, int64_t step, std::span<float> params,
              std::span<const float> grads, std::span<float> m, std::span<float> v);
// The same on float32 master weights, from gradients of `type` (float32, bfloat16 or float16)
// each times gradFactor (which unscales and clips them); with a 16-bit type it then stores each
// updated weight, rounded to that type, in params; with float32, a copy of it unless params is
// null or the master weights themselves.
void adamStepMixed(const AdamConfig& config, int64_t step, std::span<float> master,
                   const void* grads, weftDataType_t type, float gradFactor, std::span<float> m,
                   std::span<float> v, void* params);

}  // namespace weft::parallel
