// layer_norm against its CPU reference on fresh random data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/layer_norm/layer_norm.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using kb::layer_norm::Activation;

struct Param {
  int64_t rows, D;
  Activation act;
  bool affine;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << "rows=" << p.rows << " D=" << p.D << " act=" << static_cast<int>(p.act)
      << (p.affine ? " affine" : "");
}

class LayerNormTest : public ::testing::TestWithParam<Param> {};

// Each shape without and with an input bias (one that moves the mean and
// the variance, so a bias added after the statistics would show).
TEST_P(LayerNormTest, MatchesReference) {
  KB_REQUIRE_GPU();
  const auto p = GetParam();
  const uint64_t seed = 1234 + p.rows * 7 + p.D;
  // Offset and scale so the mean matters and the variance is not 1.
  auto xh = kb::random_bf16(p.rows * p.D, seed, -3.f, 5.f);
  auto gh = kb::random_bf16(p.D, seed + 1, 0.5f, 1.5f);
  auto bh = kb::random_bf16(p.D, seed + 2, -0.5f, 0.5f);
  auto ih = kb::random_bf16(p.D, seed + 3, -2.f, 6.f);
  kb::DeviceBuffer<kb::bf16> x(xh.size()), g(gh.size()), b(bh.size()), in_bias(ih.size()),
      y(xh.size());
  x.upload(xh);
  g.upload(gh);
  b.upload(bh);
  in_bias.upload(ih);
  auto xf = kb::to_float(xh), gf = kb::to_float(gh), bf = kb::to_float(bh), inf = kb::to_float(ih);
  for (bool with_bias : {false, true}) {
    SCOPED_TRACE(with_bias ? "input bias" : "no input bias");
    y.poison();
    kb::layer_norm::layer_norm(x.get(), p.affine ? g.get() : nullptr, p.affine ? b.get() : nullptr,
                               y.get(), p.rows, p.D, 1e-5f, p.act, nullptr,
                               with_bias ? in_bias.get() : nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto out = kb::to_float(y.download());
    std::vector<float> ref(out.size());
    kb::layer_norm::layer_norm_ref(xf.data(), p.affine ? gf.data() : nullptr,
                                   p.affine ? bf.data() : nullptr, ref.data(), p.rows, p.D, 1e-5f,
                                   p.act, with_bias ? inf.data() : nullptr);
    const auto c = kb::layer_norm::check_output(out, ref);  // what the experiment checks
    EXPECT_TRUE(c.ok) << c.text();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LayerNormTest,
    ::testing::Values(
        Param{64, 1024, Activation::none, true}, Param{33, 4096, Activation::none, true},
        Param{17, 8192, Activation::none, true}, Param{9, 16384, Activation::none, true},
        Param{5, 24, Activation::none, true},     // fewer threads than a warp
        Param{7, 4104, Activation::none, false},  // not a multiple of the block
        Param{3, 32768, Activation::none, true},  // the largest register version
        Param{31, 4096, Activation::gelu_erf, true},
        // warp-per-row versions: partial last block, each VPL, a partial lane tail
        Param{13, 512, Activation::none, true}, Param{9, 1032, Activation::none, true},
        Param{17, 2048, Activation::gelu_erf, false}, Param{1, 2056, Activation::none, true}),
    [](const ::testing::TestParamInfo<Param>& i) {
      return "rows" + std::to_string(i.param.rows) + "_D" + std::to_string(i.param.D) + "_act" +
             std::to_string(static_cast<int>(i.param.act)) + (i.param.affine ? "_affine" : "");
    });

// The erf GELU element by element over its whole range, tails included:
// gamma 4 and beta -3 put the normalized rows' values in about [-10, 4],
// where Φ(v) runs from 1e-23 to 1. Every output must be the reference's
// value to bf16 rounding (2^-8 relative) or within 1e-7 (the GELU's
// values below v = -5.3; erff's form returns 0 there): tighter in the tail
// than check_output's 1e-4 · rms above.
TEST(LayerNorm, GeluErfElementwiseOverItsRange) {
  KB_REQUIRE_GPU();
  for (int64_t D : {int64_t{1024}, int64_t{14336}}) {  // warp-per-row and block-per-row versions
    SCOPED_TRACE("D=" + std::to_string(D));
    const int64_t rows = 8;
    auto xh = kb::random_bf16(rows * D, 77 + D, -1.f, 1.f);
    const std::vector<float> gf(D, 4.f), bf(D, -3.f);
    const auto gh = kb::to_bf16(gf), bh = kb::to_bf16(bf);
    kb::DeviceBuffer<kb::bf16> x(xh.size()), g(D), b(D), y(xh.size());
    x.upload(xh);
    g.upload(gh);
    b.upload(bh);
    y.poison();
    kb::layer_norm::layer_norm(x.get(), g.get(), b.get(), y.get(), rows, D, 1e-5f,
                               Activation::gelu_erf, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto out = kb::to_float(y.download());
    const auto xf = kb::to_float(xh);
    std::vector<float> ref(out.size());
    kb::layer_norm::layer_norm_ref(xf.data(), gf.data(), bf.data(), ref.data(), rows, D, 1e-5f,
                                   Activation::gelu_erf);
    int bad = 0;
    float lo = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      lo = std::min(lo, ref[i]);
      const double tol = std::ldexp(std::fabs(ref[i]), -8) + 1e-7;
      if (!(std::fabs(out[i] - ref[i]) <= tol) && bad++ < 5)
        ADD_FAILURE() << "element " << i << ": got " << out[i] << ", want " << ref[i];
    }
    EXPECT_EQ(bad, 0);
    EXPECT_LT(lo, -1e-3f);  // the data reached the negative side
  }
}

// Writes dst from src after spinning `cycles`: a producer still running
// when a programmatic dependent launched behind it starts.
__global__ void slow_copy(const kb::bf16* src, kb::bf16* dst, int64_t n, long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

// With pdl the LayerNorm launches while the kernel before it runs: it must
// still read that kernel's output (each of its two kernel versions), not
// the poison under it.
TEST(LayerNorm, WithPdlWaitsForTheKernelBeforeIt) {
  KB_REQUIRE_GPU();
  struct Shape {
    int64_t rows, D;
  };
  for (Shape sh : {Shape{64, 1024}, Shape{1, 14336}}) {
    SCOPED_TRACE("rows=" + std::to_string(sh.rows) + " D=" + std::to_string(sh.D));
    auto xh = kb::random_bf16(sh.rows * sh.D, 99 + sh.D, -3.f, 5.f);
    kb::DeviceBuffer<kb::bf16> src(xh.size()), x(xh.size()), y(xh.size());
    src.upload(xh);
    x.poison();
    y.poison();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    slow_copy<<<64, 256, 0, s>>>(src.get(), x.get(), sh.rows * sh.D, 2000000);  // about 1 ms
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    kb::layer_norm::layer_norm(x.get(), nullptr, nullptr, y.get(), sh.rows, sh.D, 1e-5f,
                               Activation::gelu_erf, s, nullptr, /*pdl=*/true);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
    const auto out = kb::to_float(y.download());
    const auto xf = kb::to_float(xh);
    std::vector<float> ref(out.size());
    kb::layer_norm::layer_norm_ref(xf.data(), nullptr, nullptr, ref.data(), sh.rows, sh.D, 1e-5f,
                                   Activation::gelu_erf);
    const auto c = kb::layer_norm::check_output(out, ref);
    EXPECT_TRUE(c.ok) << c.text();
  }
}

// The plain row's one-pass statistics about x[0] (docs/decisions/0060) on
// the rows that strain them most: x[0] far out, the rest nearly equal (then
// (mean - x[0])^2 / variance is about D, its largest: x[0] is one of the
// D values, so it can be no further out): within what the experiment checks.
TEST(LayerNorm, ARowFarFromItsFirstElementKeepsItsDigits) {
  KB_REQUIRE_GPU();
  for (int64_t D : {512, 1024, 2048}) {
    SCOPED_TRACE("D=" + std::to_string(D));
    const int64_t rows = 9;
    auto xh = kb::random_bf16(rows * D, 77 + D, 0.99f, 1.01f);
    for (int64_t r = 0; r < rows; ++r) xh[r * D] = kb::float_to_bf16(r % 2 ? 300.f : -250.f);
    auto gh = kb::random_bf16(D, 78 + D, 0.5f, 1.5f);
    auto bh = kb::random_bf16(D, 79 + D, -0.5f, 0.5f);
    kb::DeviceBuffer<kb::bf16> x(xh.size()), g(D), b(D), y(xh.size());
    x.upload(xh);
    g.upload(gh);
    b.upload(bh);
    y.poison();
    kb::layer_norm::layer_norm(x.get(), g.get(), b.get(), y.get(), rows, D, 1e-5f, Activation::none,
                               nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto out = kb::to_float(y.download());
    const auto xf = kb::to_float(xh), gf = kb::to_float(gh), bf = kb::to_float(bh);
    std::vector<float> ref(out.size());
    kb::layer_norm::layer_norm_ref(xf.data(), gf.data(), bf.data(), ref.data(), rows, D, 1e-5f,
                                   Activation::none);
    const auto c = kb::layer_norm::check_output(out, ref);
    EXPECT_TRUE(c.ok) << c.text();
  }
}

// The block rows of the `layer_norm` experiments (docs/decisions/0066) are
// fast because 3 blocks of 512 threads fit an SM without spilling: a
// compiler that gives the packed kernel more registers, or spills it, fails.
TEST(LayerNorm, PackedRowKernelHoldsThreeBlocksAnSm) {
  KB_REQUIRE_GPU();
  EXPECT_GE(kb::layer_norm::packed_row_blocks_per_sm(), 3);
}

TEST(LayerNorm, RefusesBadShapesBeforeLaunch) {
  // No GPU needed: the checks run on the host before any launch.
  kb::bf16* p = reinterpret_cast<kb::bf16*>(uintptr_t(256));
  EXPECT_THROW(kb::layer_norm::layer_norm(p, nullptr, nullptr, p, 4, 1000 + 1, 1e-5f,
                                          Activation::none, nullptr),
               std::invalid_argument);
  EXPECT_THROW(
      kb::layer_norm::layer_norm(p, nullptr, nullptr, p, 0, 1024, 1e-5f, Activation::none, nullptr),
      std::invalid_argument);
  EXPECT_THROW(kb::layer_norm::layer_norm(p + 1, nullptr, nullptr, p, 4, 1024, 1e-5f,
                                          Activation::none, nullptr),
               std::invalid_argument);
  EXPECT_THROW(kb::layer_norm::layer_norm(p, nullptr, nullptr, p, 2, 32768 + 8, 1e-5f,
                                          Activation::none, nullptr),
               std::invalid_argument);
}

TEST(LayerNormRef, KnownValues) {
  // x = [1, 2, 3, 4]: mean 2.5, var 1.25.
  std::vector<float> x = {1, 2, 3, 4}, y(4);
  kb::layer_norm::layer_norm_ref(x.data(), nullptr, nullptr, y.data(), 1, 4, 0.f, Activation::none);
  const float s = 1.f / std::sqrt(1.25f);
  EXPECT_NEAR(y[0], -1.5f * s, 1e-6);
  EXPECT_NEAR(y[3], 1.5f * s, 1e-6);
  // GELU(0) = 0, GELU(large) ~ identity.
  std::vector<float> z = {-1, 1}, w(2);
  kb::layer_norm::layer_norm_ref(z.data(), nullptr, nullptr, w.data(), 1, 2, 0.f,
                                 Activation::gelu_erf);
  EXPECT_NEAR(w[1], 0.8413447f, 1e-5);
  // An input bias: x = 0 with bias [1, 2, 3, 4] is the first case.
  std::vector<float> zeros(4, 0.f), bias = {1, 2, 3, 4}, yb(4);
  kb::layer_norm::layer_norm_ref(zeros.data(), nullptr, nullptr, yb.data(), 1, 4, 0.f,
                                 Activation::none, bias.data());
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(yb[i], y[i], 1e-6) << i;
}

}  // namespace
