// CPU reference of swiglu (fp64) and the check of a kernel's output.
#include "kernels/swiglu/swiglu_cpu.h"

#include <cmath>

namespace kb::swiglu {

void swiglu_ref(const float* gu, float* y, int64_t tokens, int64_t F) {
  for (int64_t t = 0; t < tokens; ++t) {
    const float* g = gu + t * 2 * F;
    const float* u = g + F;
    for (int64_t i = 0; i < F; ++i) {
      const double z = g[i];
      y[t * F + i] = static_cast<float>(z / (1.0 + std::exp(-z)) * u[i]);
    }
  }
}

AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref) {
  return allclose(out, ref, 1.0 / 256 + 1.0 / 65536, 1e-6 * rms(ref));
}

}  // namespace kb::swiglu
