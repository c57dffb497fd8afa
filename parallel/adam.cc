#include "weft/parallel/adam.hpp"

#include <algorithm>
#include <cmath>

#include "weft/float16.hpp"

namespace weft::parallel {
namespace {

// One step's constants, as torch.optim.Adam derives them.
struct AdamStepConstants {
  float stepSize;
  float root2;

  AdamStepConstants(const AdamConfig& c, int64_t step)
      : stepSize(c.lr / (1.0f - std::pow(c.beta1, static_cast<float>(step)))),
        root2(std::sqrt(1.0f - std::pow(c.beta2, static_cast<float>(step)))) {}
};

inline void update(const AdamConfig& c, const AdamStepConstants& k, float grad, float& p, float& m,
                   float& v) {
  const float g = grad + c.weightDecay * p;
  m = c.beta1 * m + (1.0f - c.beta1) * g;
  v = c.beta2 * v + (1.0f - c.beta2) * g * g;
  p -= k.stepSize * m / (std::sqrt(v) / k.root2 + c.eps);
}

// Loads gradient i as a float and stores parameter i in the 16-bit type T.
template <float (*Load)(uint16_t), uint16_t (*Store)(float)>
void mixedSteps(const AdamConfig& c, const AdamStepConstants& k, std::span<float> master,
                const uint16_t* grads, float factor, std::span<float> m, std::span<float> v,
                uint16_t* params) {
  for (size_t i = 0; i < master.size(); ++i) {
    update(c, k, Load(grads[i]) * factor, master[i], m[i], v[i]);
    params[i] = Store(master[i]);
  }
}

}  // namespace

void adamStep(const AdamConfig& c, int64_t step, std::span<float> params,
              std::span<const float> grads, std::span<float> m, std::span<float> v) {
  const AdamStepConstants k(c, step);
  for (size_t i = 0; i < params.size(); ++i)
    update(c, k, grads[i], params[i], m[i], v[i]);
}

void adamStepMixed(const AdamConfig& c, int64_t step, std::span<float> master, const void* grads,
                   weftDataType_t type, float gradFactor, std::span<float> m, std::span<float> v,
                   void* params) {
  const AdamStepConstants k(c, step);
  switch (type) {
    case weftBfloat16:
      mixedSteps<bf16ToFloat, floatToBf16>(c, k, master, static_cast<const uint16_t*>(grads),
                                           gradFactor, m, v, static_cast<uint16_t*>(params));
      return;
    case weftFloat16:
      mixedSteps<halfToFloat, floatToHalf>(c, k, master, static_cast<const uint16_t*>(grads),
                                           gradFactor, m, v, static_cast<uint16_t*>(params));
      return;
    default: {
      const auto* g = static_cast<const float*>(grads);
      for (size_t i = 0; i < master.size(); ++i)
        update(c, k, g[i] * gradFactor, master[i], m[i], v[i]);
      if (params != nullptr && params != master.data()) {
        std::copy(master.begin(), master.end(), static_cast<float*>(params));
      }
    }
  }
}

}  // namespace weft::parallel
