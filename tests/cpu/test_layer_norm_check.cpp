// kb::layer_norm::check_output, the check the layer_norm experiment and
// its GPU test apply, on outputs made on the CPU: an fp32 LayerNorm rounded
// to bf16 (what the kernel computes) passes; wrong elements fail, also
// where a relative L2 bound lets them through.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/allclose.h"
#include "kernels/layer_norm/layer_norm_cpu.h"
#include "tests/bf16_test_util.h"

namespace {

using kb::layer_norm::Activation;
using kb::test::round_bf16;
using kb::test::uniform_bf16;

// The kernel's arithmetic on the CPU: fp32 two-pass statistics (sequential
// sums, which err more than the kernel's tree of partial sums), the fused
// multiply-add of normalize_store, the activation in float, bf16 output.
std::vector<float> layer_norm_fp32(const std::vector<float>& x, const std::vector<float>& g,
                                   const std::vector<float>& b, int64_t rows, int64_t D,
                                   Activation act) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * D;
    float sum = 0.f;
    for (int64_t i = 0; i < D; ++i) sum += xr[i];
    const float mean = sum / static_cast<float>(D);
    float m2 = 0.f;
    for (int64_t i = 0; i < D; ++i) m2 += (xr[i] - mean) * (xr[i] - mean);
    const float rstd = 1.f / std::sqrt(m2 / static_cast<float>(D) + 1e-5f);
    for (int64_t i = 0; i < D; ++i) {
      float v = std::fma((xr[i] - mean) * rstd, g[i], b[i]);
      if (act == Activation::gelu_erf) v = 0.5f * v * std::erfc(-v * 0.70710678f);
      y[r * D + i] = round_bf16(v);
    }
  }
  return y;
}

// The layer_norm experiment's data: x in [-2, 4], gamma in [0.5, 1.5],
// beta in [-0.5, 0.5], all bf16.
struct Data {
  std::vector<float> out, ref;
};

Data make(int64_t rows, int64_t D, Activation act, uint32_t seed) {
  const auto x = uniform_bf16(rows * D, seed, -2.f, 4.f);
  const auto g = uniform_bf16(D, seed + 1, 0.5f, 1.5f);
  const auto b = uniform_bf16(D, seed + 2, -0.5f, 0.5f);
  Data d;
  d.ref.resize(x.size());
  kb::layer_norm::layer_norm_ref(x.data(), g.data(), b.data(), d.ref.data(), rows, D, 1e-5f, act);
  d.out = layer_norm_fp32(x, g, b, rows, D, act);
  return d;
}

TEST(LayerNormCheck, PassesAnFp32LayerNormRoundedToBf16) {
  struct Case {
    int64_t rows, D;
    Activation act;
  };
  for (const Case& c : {Case{4096, 1024, Activation::none}, Case{64, 16384, Activation::none},
                        Case{4, 65544, Activation::none}, Case{256, 1024, Activation::gelu_erf}}) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) + " D=" + std::to_string(c.D) +
                 " act=" + std::to_string(static_cast<int>(c.act)));
    const Data d = make(c.rows, c.D, c.act, 7);
    const auto check = kb::layer_norm::check_output(d.out, d.ref);
    EXPECT_TRUE(check.ok) << check.text();
  }
}

// At the experiment's BS = 4096, D = 1024, 270 outputs off by 1.0
// (the outputs' standard deviation is about 1) kept the relative L2 error
// under the old check's 8e-3; the element-wise check names every one.
TEST(LayerNormCheck, RejectsWrongOutputsThatARelativeL2BoundPasses) {
  const int64_t rows = 4096, D = 1024;
  Data d = make(rows, D, Activation::none, 11);
  const size_t n_wrong = 270, stride = d.out.size() / n_wrong;
  for (size_t k = 0; k < n_wrong; ++k) d.out[k * stride + k % D] += k % 2 ? 1.f : -1.f;
  const auto l2 = kb::compare(d.out, d.ref, 8e-3);
  EXPECT_TRUE(l2.ok) << "the old check no longer passes them: " << l2.text();
  const auto check = kb::layer_norm::check_output(d.out, d.ref);
  EXPECT_FALSE(check.ok) << check.text();
  EXPECT_EQ(check.bad, n_wrong) << check.text();
}

TEST(LayerNormCheck, RejectsOneWrongOrNonFiniteElement) {
  const Data d = make(64, 1024, Activation::none, 13);
  kb::test::expect_check_rejects_each_wrong_element(kb::layer_norm::check_output, d.out, d.ref);
}

}  // namespace
