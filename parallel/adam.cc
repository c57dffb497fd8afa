#include "weft/parallel/adam.hpp"

#include <cmath>

namespace weft::parallel {

void adamStep(const AdamConfig& c, int64_t step, std::span<float> params,
              std::span<const float> grads, std::span<float> m, std::span<float> v) {
  const float correction1 = 1.0f - std::pow(c.beta1, static_cast<float>(step));
  const float correction2 = 1.0f - std::pow(c.beta2, static_cast<float>(step));
  const float stepSize = c.lr / correction1;
  const float root2 = std::sqrt(correction2);
  for (size_t i = 0; i < params.size(); ++i) {
    const float g = grads[i] + c.weightDecay * params[i];
    m[i] = c.beta1 * m[i] + (1.0f - c.beta1) * g;
    v[i] = c.beta2 * v[i] + (1.0f - c.beta2) * g * g;
    params[i] -= stepSize * m[i] / (std::sqrt(v[i]) / root2 + c.eps);
  }
}

}  // namespace weft::parallel
