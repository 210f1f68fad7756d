// kb::rms_norm::check_output and rms_norm_ref, on outputs made on the CPU:
// an fp32 RMSNorm rounded to bf16 (what the kernel computes) passes; wrong
// elements fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/rms_norm/rms_norm_cpu.h"
#include "tests/bf16_test_util.h"

namespace {

using kb::test::round_bf16;
using kb::test::uniform_bf16;

// The kernel's arithmetic on the CPU: an fp32 sum of squares (sequential,
// which errs more than the kernel's tree of partial sums), w · (x · rstd)
// in fp32, bf16 output.
std::vector<float> rms_norm_fp32(const std::vector<float>& x, const std::vector<float>& w,
                                 int64_t rows, int64_t D) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * D;
    float ss = 0.f;
    for (int64_t i = 0; i < D; ++i) ss = std::fma(xr[i], xr[i], ss);
    const float rstd = 1.f / std::sqrt(ss / static_cast<float>(D) + 1e-5f);
    for (int64_t i = 0; i < D; ++i) y[r * D + i] = round_bf16(w[i] * (xr[i] * rstd));
  }
  return y;
}

struct Data {
  std::vector<float> out, ref;
};

// The rms_norm experiment's data: x in [-2, 4], w in [0.5, 1.5], bf16.
Data make(int64_t rows, int64_t D, uint32_t seed) {
  const auto x = uniform_bf16(rows * D, seed, -2.f, 4.f);
  const auto w = uniform_bf16(D, seed + 1, 0.5f, 1.5f);
  Data d;
  d.ref.resize(x.size());
  kb::rms_norm::rms_norm_ref(x.data(), w.data(), d.ref.data(), rows, D, 1e-5f);
  d.out = rms_norm_fp32(x, w, rows, D);
  return d;
}

TEST(RmsNormRef, KnownValues) {
  // x = [1, 2, 3, 4]: mean of squares 7.5; w scales each element.
  const std::vector<float> x = {1, 2, 3, 4}, w = {1, 1, 2, 0.5f};
  std::vector<float> y(4);
  kb::rms_norm::rms_norm_ref(x.data(), w.data(), y.data(), 1, 4, 0.f);
  const double s = 1 / std::sqrt(7.5);
  EXPECT_NEAR(y[0], 1 * s, 1e-6);
  EXPECT_NEAR(y[2], 6 * s, 1e-6);
  EXPECT_NEAR(y[3], 2 * s, 1e-6);
  // eps counts inside the root: a zero row stays finite (zero).
  const std::vector<float> z(4, 0.f);
  kb::rms_norm::rms_norm_ref(z.data(), w.data(), y.data(), 1, 4, 1e-5f);
  for (float v : y) EXPECT_EQ(v, 0.f);
}

TEST(RmsNormCheck, PassesAnFp32RmsNormRoundedToBf16) {
  struct Case {
    int64_t rows, D;
  };
  for (const Case& c : {Case{4096, 1024}, Case{64, 16384}, Case{4, 65544}}) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) + " D=" + std::to_string(c.D));
    const Data d = make(c.rows, c.D, 7);
    const auto check = kb::rms_norm::check_output(d.out, d.ref);
    EXPECT_TRUE(check.ok) << check.text();
  }
}

TEST(RmsNormCheck, RejectsOneWrongOrNonFiniteElement) {
  const Data d = make(64, 1024, 13);
  kb::test::expect_check_rejects_each_wrong_element(kb::rms_norm::check_output, d.out, d.ref);
}

}  // namespace
