// kb::swiglu::check_output and swiglu_ref, on outputs made on the CPU: an
// fp32 SwiGLU rounded to bf16 (what the kernel computes) passes; wrong
// elements fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/swiglu/swiglu_cpu.h"
#include "tests/bf16_test_util.h"

namespace {

using kb::test::round_bf16;
using kb::test::uniform_bf16;

// The kernel's arithmetic on the CPU: silu(g) · u in fp32, bf16 output.
std::vector<float> swiglu_fp32(const std::vector<float>& gu, int64_t tokens, int64_t F) {
  std::vector<float> y(tokens * F);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < F; ++i) {
      const float g = gu[t * 2 * F + i], u = gu[t * 2 * F + F + i];
      y[t * F + i] = round_bf16(g / (1.f + std::exp(-g)) * u);
    }
  return y;
}

struct Data {
  std::vector<float> out, ref;
};

// GU uniform in [lo, hi), bf16 (the experiment's: [-5, 5]).
Data make(int64_t tokens, int64_t F, uint32_t seed, float lo = -5.f, float hi = 5.f) {
  const auto gu = uniform_bf16(tokens * 2 * F, seed, lo, hi);
  Data d;
  d.ref.resize(tokens * F);
  kb::swiglu::swiglu_ref(gu.data(), d.ref.data(), tokens, F);
  d.out = swiglu_fp32(gu, tokens, F);
  return d;
}

TEST(SwigluRef, KnownValues) {
  // Two rows of F = 2: row t is [g0, g1, u0, u1].
  const std::vector<float> gu = {0,  1,  3,  2,  // silu(0) = 0; silu(1) · 2
                                 -1, 20, -4, 0.5f};
  std::vector<float> y(4);
  kb::swiglu::swiglu_ref(gu.data(), y.data(), 2, 2);
  EXPECT_EQ(y[0], 0.f);
  EXPECT_NEAR(y[1], 2 / (1 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(y[2], -1 / (1 + std::exp(1.0)) * -4, 1e-6);
  EXPECT_NEAR(y[3], 20 / (1 + std::exp(-20.0)) * 0.5, 1e-5);
  // Far in the tails silu(g) is g (g > 0) and 0 (g < 0), finite both ways.
  const std::vector<float> tails = {200, -200, 1, 1};
  kb::swiglu::swiglu_ref(tails.data(), y.data(), 1, 2);
  EXPECT_EQ(y[0], 200.f);
  EXPECT_EQ(y[1], -0.f);
}

TEST(SwigluCheck, PassesAnFp32SwigluRoundedToBf16) {
  struct Case {
    int64_t tokens, F;
    float lo, hi;
  };
  // The experiment's range at both F; a range past the point where e^-g
  // overflows fp32 (g < -88.7), where the kernel's silu is 0.
  for (const Case& c : {Case{64, 11008, -5, 5}, Case{16, 14336, -5, 5}, Case{8, 4096, -120, 120}}) {
    SCOPED_TRACE("tokens=" + std::to_string(c.tokens) + " F=" + std::to_string(c.F) +
                 " range=" + std::to_string(c.hi));
    const Data d = make(c.tokens, c.F, 7, c.lo, c.hi);
    const auto check = kb::swiglu::check_output(d.out, d.ref);
    EXPECT_TRUE(check.ok) << check.text();
  }
}

TEST(SwigluCheck, RejectsOneWrongOrNonFiniteElement) {
  const Data d = make(64, 1024, 13);
  kb::test::expect_check_rejects_each_wrong_element(kb::swiglu::check_output, d.out, d.ref);
}

}  // namespace
