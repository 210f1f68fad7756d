// CPU reference of rms_norm (fp64) and the check of a kernel's output.
#include "kernels/rms_norm/rms_norm_cpu.h"

#include <cmath>

namespace kb::rms_norm {

void rms_norm_ref(const float* x, const float* w, float* y, int64_t rows, int64_t D, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * D;
    double ss = 0;
    for (int64_t i = 0; i < D; ++i) ss += double(xr[i]) * xr[i];
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(D) + eps);
    for (int64_t i = 0; i < D; ++i)
      y[r * D + i] = static_cast<float>(xr[i] * rstd * (w ? w[i] : 1.0));
  }
}

AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref) {
  return allclose(out, ref, 1.0 / 256, 1e-4 * rms(ref));
}

}  // namespace kb::rms_norm
