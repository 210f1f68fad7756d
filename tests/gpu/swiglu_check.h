// The GEMV tests' check of SwiGLU outputs (gemv_swiglu, gather_gemv_swiglu)
// against the CPU reference, slot by slot.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/allclose.h"
#include "kernels/gemv/gemv.h"

namespace kb::test {

// got: [n_sel][F] outputs, slot s expert ids[s] (ids empty: one matrix,
// expert 0); an id outside [0, E) must give NaN rows. wf: the weights
// [E][2F][K] as floats; sf: their row scales [E][2F] (int8) or nullptr;
// `what` names the kernel in failures.
inline void expect_swiglu_slots(const std::vector<float>& got, const std::vector<int32_t>& ids,
                                int E, int64_t F, int64_t K, float eps,
                                const std::vector<float>& wf, const float* sf,
                                const std::vector<float>& xf, const std::string& what) {
  const bool gather = !ids.empty();
  const int n_sel = gather ? static_cast<int>(ids.size()) : 1;
  for (int s = 0; s < n_sel; ++s) {
    const int e = gather ? ids[s] : 0;
    const std::string where = what + " SwiGLU F=" + std::to_string(F) + " K=" + std::to_string(K) +
                              " slot " + std::to_string(s);
    const std::vector<float> out(got.begin() + s * F, got.begin() + (s + 1) * F);
    if (e < 0 || e >= E) {
      for (int64_t i = 0; i < F; ++i) ASSERT_TRUE(std::isnan(out[i])) << where << " row " << i;
      continue;
    }
    std::vector<float> ref(F);
    gemv::gemv_swiglu_ref(wf.data() + int64_t(e) * 2 * F * K,
                          sf ? sf + int64_t(e) * 2 * F : nullptr, xf.data(), ref.data(), F, K, eps);
    const auto r = allclose(out, ref, 1.0 / 128, 1e-3 * rms(ref));
    EXPECT_TRUE(r.ok) << where << ": " << r.text();
  }
}

}  // namespace kb::test
