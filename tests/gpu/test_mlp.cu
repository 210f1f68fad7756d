// kb::mlp against its CPU reference (both paths, tiny and real hidden
// widths), the reference itself against hand-computed values, the shapes a
// path refuses, and the engine's rows for an MLP case and for a GEMM that
// cuBLASLt refuses (a `failed` row naming the status).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/allclose.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/gemm/gemm.h"
#include "kernels/layer_norm/layer_norm.h"
#include "kernels/mlp/mlp.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using kb::bf16;
using kb::mlp::Path;

// Random parameters at the scales the experiment uses (every stage O(1)).
kb::mlp::HostParams random_params(int64_t D, int64_t F, uint64_t seed) {
  kb::mlp::HostParams p;
  const float s1 = std::sqrt(3.f / D), s2 = std::sqrt(3.f / F);
  p.w1 = kb::random_bf16(F * D, seed, -s1, s1);
  p.b1 = kb::random_bf16(F, seed + 1, -0.5f, 0.5f);
  p.ln1_g = kb::random_bf16(F, seed + 2, 0.5f, 1.5f);
  p.ln1_b = kb::random_bf16(F, seed + 3, -0.5f, 0.5f);
  p.w2 = kb::random_bf16(D * F, seed + 4, -s2, s2);
  p.b2 = kb::random_bf16(D, seed + 5, -0.5f, 0.5f);
  p.ln2_g = kb::random_bf16(D, seed + 6, 0.5f, 1.5f);
  p.ln2_b = kb::random_bf16(D, seed + 7, -0.5f, 0.5f);
  return p;
}

// The parameters on the device, and the pointers the MLP takes.
struct DeviceParams {
  explicit DeviceParams(const kb::mlp::HostParams& h)
      : w1(h.w1.size()),
        b1(h.b1.size()),
        ln1_g(h.ln1_g.size()),
        ln1_b(h.ln1_b.size()),
        w2(h.w2.size()),
        b2(h.b2.size()),
        ln2_g(h.ln2_g.size()),
        ln2_b(h.ln2_b.size()) {
    w1.upload(h.w1);
    b1.upload(h.b1);
    ln1_g.upload(h.ln1_g);
    ln1_b.upload(h.ln1_b);
    w2.upload(h.w2);
    b2.upload(h.b2);
    ln2_g.upload(h.ln2_g);
    ln2_b.upload(h.ln2_b);
  }
  kb::mlp::Params params() const {
    return {w1.get(), b1.get(), ln1_g.get(), ln1_b.get(),
            w2.get(), b2.get(), ln2_g.get(), ln2_b.get()};
  }
  kb::DeviceBuffer<bf16> w1, b1, ln1_g, ln1_b, w2, b2, ln2_g, ln2_b;
};

std::vector<float> run_mlp(const DeviceParams& dp, const std::vector<bf16>& x, int64_t T, int64_t D,
                           int64_t F, Path path) {
  kb::DeviceBuffer<bf16> dx(x.size()), dy(x.size());
  dx.upload(x);
  dy.poison();
  kb::mlp::Mlp mlp(T, D, F, path);
  mlp.poison_intermediates();
  mlp.run(dp.params(), dx.get(), dy.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return kb::to_float(dy.download());
}

struct Param {
  int64_t T, D, F;
  Path path;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << "tokens=" << p.T << " D=" << p.D << " F=" << p.F << " path=" << kb::mlp::path_name(p.path);
}

class MlpTest : public ::testing::TestWithParam<Param> {};

TEST_P(MlpTest, MatchesReference) {
  KB_REQUIRE_GPU();
  const auto p = GetParam();
  const uint64_t seed = 1000 + p.T * 17 + p.D + p.F;
  const auto hp = random_params(p.D, p.F, seed);
  const auto x = kb::random_bf16(p.T * p.D, seed + 100, -1.f, 1.f);
  DeviceParams dp(hp);
  const auto out = run_mlp(dp, x, p.T, p.D, p.F, p.path);
  std::vector<int64_t> tokens(p.T);
  for (int64_t t = 0; t < p.T; ++t) tokens[t] = t;
  const auto ref = kb::mlp::mlp_ref(hp, x.data(), tokens, p.D, p.F, p.path);
  // As the experiment's check: bf16 rounding of y, and a 1-ulp flip of an
  // intermediate rounding carried through a LayerNorm.
  auto close = kb::allclose(out, ref, 1.0 / 64, 1e-2 * kb::rms(ref));
  EXPECT_TRUE(close.ok) << close.text();
  auto rel = kb::compare(out, ref, 1e-2);
  EXPECT_TRUE(rel.ok) << rel.text();
  EXPECT_GT(kb::rms(ref),
            0.3);  // LayerNorm output with gamma in [0.5, 1.5]: not a degenerate check
}

INSTANTIATE_TEST_SUITE_P(Configs, MlpTest,
                         ::testing::Values(Param{5, 64, 256, Path::cublaslt},
                                           Param{1, 64, 256, Path::cublaslt},
                                           Param{1, 64, 256, Path::gemv},
                                           Param{3, 1024, kb::mlp::kHidden, Path::cublaslt},
                                           Param{1, 1024, kb::mlp::kHidden, Path::gemv},
                                           Param{1, 4096, kb::mlp::kHidden, Path::gemv},
                                           Param{33, 256, 1024, Path::cublaslt}),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return "T" + std::to_string(i.param.T) + "_D" +
                                  std::to_string(i.param.D) + "_F" + std::to_string(i.param.F) +
                                  "_" + kb::mlp::path_name(i.param.path);
                         });

// Both paths compute the same function: on the same inputs at one token
// their outputs agree to within bf16 roundings.
TEST(Mlp, GemvAndCublasLtPathsAgree) {
  KB_REQUIRE_GPU();
  const int64_t D = 1024, F = kb::mlp::kHidden;
  const auto hp = random_params(D, F, 42);
  const auto x = kb::random_bf16(D, 43, -1.f, 1.f);
  DeviceParams dp(hp);
  const auto a = run_mlp(dp, x, 1, D, F, Path::gemv);
  const auto b = run_mlp(dp, x, 1, D, F, Path::cublaslt);
  auto close = kb::allclose(a, b, 1.0 / 32, 2e-2 * kb::rms(b));
  EXPECT_TRUE(close.ok) << close.text();
}

TEST(Mlp, RefusesShapesItsPathCannotServe) {
  // Checked before any allocation or CUDA call.
  EXPECT_THROW(kb::mlp::Mlp(2, 64, 256, Path::gemv), std::invalid_argument);
  EXPECT_THROW(kb::mlp::Mlp(1, 60, 256, Path::cublaslt), std::invalid_argument);
  EXPECT_THROW(kb::mlp::Mlp(1, 64, 250, Path::gemv), std::invalid_argument);
  EXPECT_THROW(kb::mlp::Mlp(0, 64, 256, Path::cublaslt), std::invalid_argument);
}

TEST(Mlp, DetailNamesBothAlgorithms) {
  KB_REQUIRE_GPU();
  kb::mlp::Mlp c(16, 64, 256, Path::cublaslt);
  const auto d = c.detail();
  EXPECT_EQ(d.rfind("up=algo", 0), 0u) << d;
  EXPECT_NE(d.find(";down=algo"), std::string::npos) << d;
  EXPECT_EQ(kb::mlp::Mlp(1, 64, 256, Path::gemv).detail(), "");
}

// The reference's wiring, against values computed here by hand: W1 = 0 makes
// h = b1; W2 = [I 0] makes u = g[:D] + b2.
TEST(MlpRef, WiringOnHandMadeParameters) {
  const int64_t D = 8, F = 16;
  kb::mlp::HostParams p;
  const auto bf = [](const std::vector<float>& v) { return kb::to_bf16(v); };
  p.w1 = bf(std::vector<float>(F * D, 0.f));
  std::vector<float> b1(F), b2(D), w2(D * F, 0.f);
  for (int64_t f = 0; f < F; ++f) b1[f] = static_cast<float>(f) - 7.5f;  // mean 0
  for (int64_t d = 0; d < D; ++d) {
    b2[d] = 0.25f * static_cast<float>(d % 3);
    w2[d * F + d] = 1.f;
  }
  p.b1 = bf(b1);
  p.w2 = bf(w2);
  p.b2 = bf(b2);
  p.ln1_g = bf(std::vector<float>(F, 1.f));
  p.ln1_b = bf(std::vector<float>(F, 0.f));
  p.ln2_g = bf(std::vector<float>(D, 2.f));
  p.ln2_b = bf(std::vector<float>(D, 1.f));
  const auto x = kb::random_bf16(D, 9);
  const auto y = kb::mlp::mlp_ref(p, x.data(), {0}, D, F);
  // By hand: LayerNorm of b1 (mean 0 and variance (F^2 - 1) / 12 = 21.25,
  // both exact), exact GELU, bf16; then u = g + b2, bf16.
  const double rstd = 1.0 / std::sqrt((F * F - 1) / 12.0 + double(kb::mlp::kEps));
  std::vector<double> u(D);
  for (int64_t d = 0; d < D; ++d) {
    const double v = b1[d] * rstd;
    const float gelu = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    const float g = kb::bf16_to_float(kb::float_to_bf16(gelu));
    u[d] = kb::bf16_to_float(kb::float_to_bf16(g + b2[d]));
  }
  double mean = 0, var = 0;
  for (double v : u) mean += v / D;
  for (double v : u) var += (v - mean) * (v - mean) / D;
  for (int64_t d = 0; d < D; ++d)
    EXPECT_NEAR(y[d], 2.0 * (u[d] - mean) / std::sqrt(var + kb::mlp::kEps) + 1.0, 1e-4) << d;
}

// ---- through the engine ----------------------------------------------------

class SmallMlpCase : public kb::Case {
 public:
  SmallMlpCase()
      : hp_(random_params(64, 256, 5)),
        dp_(hp_),
        x_(3 * 64),
        y_(3 * 64),
        mlp_(3, 64, 256, Path::cublaslt) {}
  void run(cudaStream_t s) override { mlp_.run(dp_.params(), x_.get(), y_.get(), s); }
  std::string variant() const override { return mlp_.detail(); }
  kb::Check check(cudaStream_t s, uint64_t seed) override {
    auto x = kb::random_bf16(x_.size(), seed);
    x_.upload(x);
    y_.poison();
    KB_CUDA_CHECK(cudaDeviceSynchronize());  // the engine's stream does not wait for cudaMemset
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    auto ref = kb::mlp::mlp_ref(hp_, x.data(), {0, 1, 2}, 64, 256, Path::cublaslt);
    auto c = kb::allclose(kb::to_float(y_.download()), ref, 1.0 / 64, 1e-2 * kb::rms(ref));
    return c.ok ? kb::Check::pass(c.text()) : kb::Check::fail(c.text());
  }

 private:
  kb::mlp::HostParams hp_;
  DeviceParams dp_;
  kb::DeviceBuffer<bf16> x_, y_;
  kb::mlp::Mlp mlp_;
};

// A case whose constructor asks cuBLASLt for a GEMM it cannot serve.
class RefusedGemmCase : public kb::Case {
 public:
  RefusedGemmCase() : g_(3, 72, 17, fp8_options()) {}
  void run(cudaStream_t) override {}
  kb::Check check(cudaStream_t, uint64_t) override { return kb::Check::pass(""); }

 private:
  static kb::gemm::Options fp8_options() {
    kb::gemm::Options o;
    o.input = kb::gemm::Input::fp8_e4m3;
    return o;
  }
  kb::gemm::Gemm g_;
};

struct MlpEngineTest : ::testing::Test {
  void SetUp() override {
    KB_REQUIRE_GPU();
    dev = kb::query_device(0);
    kb::EngineOptions o;
    o.quick = true;
    kb::RunInfo info;
    info.run_id = "test";
    engine = std::make_unique<kb::Engine>(dev, nullptr, o, info);
    engine->probe();
    // The probe measures bandwidths and launch floors; flop peaks come from
    // target files, and without one the roofline (and `bound=`) is undefined.
    kb::Ceilings c = engine->ceilings();
    c.bf16_tflops = 800;
    engine->set_ceilings(c);
  }
  kb::DeviceInfo dev;
  std::unique_ptr<kb::Engine> engine;
};

TEST_F(MlpEngineTest, RowVariantCarriesPathAlgorithmsAndBound) {
  auto e = kb::Experiment("small_mlp")
               .axis("tokens", {3})
               .variants({"cublaslt"})
               .metrics({kb::Metric::tflops})
               .work([](const kb::Point&) {
                 kb::Work w;
                 w.flops = 4.0 * 3 * 64 * 256;
                 w.bytes = 2.0 * 64 * 256 * 2;
                 w.launches = kb::mlp::kLaunches;
                 return w;
               })
               .make([](const kb::Point&) { return std::make_unique<SmallMlpCase>(); });
  auto rows = engine->run(e);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status == kb::status::ok || rows[0].status == kb::status::below_target, true)
      << rows[0].status << ": " << rows[0].message;
  const auto& v = rows[0].variant;
  EXPECT_EQ(v.rfind("cublaslt;up=algo", 0), 0u) << v;
  EXPECT_NE(v.find(";down=algo"), std::string::npos) << v;
  EXPECT_NE(v.find(";bound="), std::string::npos) << v;
}

TEST_F(MlpEngineTest, ShapeCublasLtRefusesIsAFailedRowNamingTheStatus) {
  auto e = kb::Experiment("refused_gemm")
               .axis("K", {17})
               .metrics({kb::Metric::tflops, kb::Metric::flops_utilization})
               .work([](const kb::Point&) {
                 kb::Work w;
                 w.flops = 2.0 * 3 * 72 * 17;
                 return w;
               })
               .make([](const kb::Point&) { return std::make_unique<RefusedGemmCase>(); });
  auto rows = engine->run(e);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.status, kb::status::failed);
    EXPECT_FALSE(r.actual.has_value());
    EXPECT_NE(r.message.find("CUBLAS_STATUS_"), std::string::npos) << r.message;
  }
  // The engine goes on: the next experiment runs.
  auto e2 = kb::Experiment("after_refusal")
                .axis("tokens", {3})
                .metrics({kb::Metric::tflops})
                .work([](const kb::Point&) {
                  kb::Work w;
                  w.flops = 4.0 * 3 * 64 * 256;
                  return w;
                })
                .make([](const kb::Point&) { return std::make_unique<SmallMlpCase>(); });
  auto next = engine->run(e2);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_TRUE(next[0].actual.has_value()) << next[0].message;
}

}  // namespace
