// CPU references of gemv / gather_gemv / gemv_swiglu and the host-side
// expert check.
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/gemv/gemv.h"

namespace kb::gemv {

void gemv_ref(const float* W, const float* scale, const float* x, float* y, int64_t N, int64_t K,
              const float* residual) {
  for (int64_t n = 0; n < N; ++n) {
    const float* w = W + n * K;
    double acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(w[k]) * x[k];
    if (scale) acc *= scale[n];
    if (residual) acc += residual[n];
    y[n] = static_cast<float>(acc);
  }
}

void gemv_swiglu_ref(const float* W, const float* scale, const float* x, float* h, int64_t F,
                     int64_t K, float eps) {
  double ss = 0;
  for (int64_t k = 0; k < K; ++k) ss += static_cast<double>(x[k]) * x[k];
  const double r = 1.0 / std::sqrt(ss / K + eps);
  for (int64_t i = 0; i < F; ++i) {
    double g = 0, u = 0;
    for (int64_t k = 0; k < K; ++k) {
      g += static_cast<double>(W[i * K + k]) * x[k];
      u += static_cast<double>(W[(F + i) * K + k]) * x[k];
    }
    if (scale) {
      g *= scale[i];
      u *= scale[F + i];
    }
    const double gg = r * g;
    h[i] = static_cast<float>(gg / (1 + std::exp(-gg)) * (r * u));
  }
}

void check_experts(const std::vector<int32_t>& experts, int E) {
  if (experts.empty()) throw std::invalid_argument("gather_gemv: no expert selected");
  for (size_t i = 0; i < experts.size(); ++i)
    if (experts[i] < 0 || experts[i] >= E)
      throw std::invalid_argument("gather_gemv: expert id " + std::to_string(experts[i]) +
                                  " at position " + std::to_string(i) + " is outside [0, " +
                                  std::to_string(E) + ")");
}

}  // namespace kb::gemv
