// CPU reference of layer_norm: fp64 statistics (two-pass), fp32 output;
// and the check of a kernel's output against it.
#include "kernels/layer_norm/layer_norm_cpu.h"

#include <cmath>
#include <vector>

namespace kb::layer_norm {

void layer_norm_ref(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                    int64_t D, float eps, Activation act, const float* bias) {
  std::vector<double> h(static_cast<size_t>(D));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < D; ++i) h[i] = double(x[r * D + i]) + (bias ? bias[i] : 0.0);
    double sum = 0;
    for (int64_t i = 0; i < D; ++i) sum += h[i];
    const double mean = sum / static_cast<double>(D);
    double m2 = 0;
    for (int64_t i = 0; i < D; ++i) m2 += (h[i] - mean) * (h[i] - mean);
    const double rstd = 1.0 / std::sqrt(m2 / static_cast<double>(D) + eps);
    for (int64_t i = 0; i < D; ++i) {
      double v = (h[i] - mean) * rstd * (gamma ? gamma[i] : 1.0) + (beta ? beta[i] : 0.0);
      // v·Φ(v) as 0.5·v·erfc(-v/√2): exact in the negative tail, where
      // 1 + erf(v/√2) cancels to nothing.
      if (act == Activation::gelu_erf) v = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      y[r * D + i] = static_cast<float>(v);
    }
  }
}

AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref) {
  return allclose(out, ref, 1.0 / 256, 1e-4 * rms(ref));
}

}  // namespace kb::layer_norm
