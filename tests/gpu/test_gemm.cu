// kb::gemm (the cuBLASLt wrapper) against its CPU reference: every
// epilogue, odd shapes, FP8 where the GPU has it; the wrapper's own
// refusals; a shape cuBLASLt refuses becomes an exception naming the status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/common/allclose.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/common/host_math.h"
#include "kernels/common/index_sample.h"
#include "kernels/gemm/gemm.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using kb::gemm::Epilogue;
using kb::gemm::fp8;

struct Param {
  int64_t M, N, K;
  Epilogue ep;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << "M=" << p.M << " N=" << p.N << " K=" << p.K
      << " epilogue=" << kb::gemm::epilogue_name(p.ep);
}

class GemmTest : public ::testing::TestWithParam<Param> {};

TEST_P(GemmTest, MatchesReference) {
  KB_REQUIRE_GPU();
  const auto p = GetParam();
  const uint64_t seed = 77 + p.M * 131 + p.N * 7 + p.K;
  auto a = kb::random_bf16(p.M * p.K, seed, -1.f, 1.f);
  auto w = kb::random_bf16(p.N * p.K, seed + 1, -1.f, 1.f);
  // A bias as large as the products' typical size, so a missing one shows.
  const float scale = std::sqrt(static_cast<float>(p.K)) / 3;
  auto bias = kb::random_bf16(p.N, seed + 2, -scale, scale);
  kb::DeviceBuffer<kb::bf16> da(a.size()), dw(w.size()), db(bias.size()), dd(p.M * p.N);
  da.upload(a);
  dw.upload(w);
  db.upload(bias);
  dd.poison();
  kb::gemm::Options o;
  o.epilogue = p.ep;
  kb::gemm::Gemm g(p.M, p.N, p.K, o);
  EXPECT_EQ(g.id().rfind("algo", 0), 0u) << g.id();
  g.run(da.get(), dw.get(), kb::gemm::has_bias(p.ep) ? db.get() : nullptr, dd.get(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto out = kb::to_float(dd.download());
  auto af = kb::to_float(a), wf = kb::to_float(w), bf = kb::to_float(bias);
  std::vector<float> ref(out.size());
  kb::gemm::gemm_ref(af.data(), wf.data(), bf.data(), ref.data(), p.M, p.N, p.K, p.ep);
  // bf16 output rounding: <= 2^-8 relative. The absolute term covers
  // values near zero and cuBLASLt's GELU if it is the erf form after all
  // (the two differ by < 4.8e-4 absolute).
  auto close = kb::allclose(out, ref, 1.0 / 128, 4e-3 * kb::rms(ref));
  EXPECT_TRUE(close.ok) << g.describe() << " algo " << g.id() << ": " << close.text();
  auto rel = kb::compare(out, ref, 5e-3);
  EXPECT_TRUE(rel.ok) << rel.text();
  // The plan is reused as the timed calls reuse it: a second run is right too.
  dd.poison();
  g.run(da.get(), dw.get(), kb::gemm::has_bias(p.ep) ? db.get() : nullptr, dd.get(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto again = kb::allclose(kb::to_float(dd.download()), ref, 1.0 / 128, 4e-3 * kb::rms(ref));
  EXPECT_TRUE(again.ok) << again.text();
  // Every candidate the heuristic offers (kbench tune times each) is right.
  const kb::bf16* bp = kb::gemm::has_bias(p.ep) ? db.get() : nullptr;
  ASSERT_GE(g.candidates(), 1);
  for (int i = 0; i < g.candidates(); ++i) {
    g.use_candidate(i);
    EXPECT_EQ(g.source(), kb::gemm::AlgoSource::candidate);
    dd.poison();
    g.run(da.get(), dw.get(), bp, dd.get(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto c = kb::allclose(kb::to_float(dd.download()), ref, 1.0 / 128, 4e-3 * kb::rms(ref));
    EXPECT_TRUE(c.ok) << "candidate " << i << " " << g.id() << ": " << c.text();
  }
  EXPECT_THROW(g.use_candidate(g.candidates()), std::out_of_range);

  // Pinned: the last candidate's configuration, written into the table as
  // kbench tune writes it, is what a new plan of this key runs.
  g.use_candidate(g.candidates() - 1);
  kb::gemm::PinnedAlgo pin{g.key(), g.algo(), "test table"};
  kb::gemm::set_pinned_algos({pin});
  kb::gemm::Gemm pinned(p.M, p.N, p.K, g.options());
  EXPECT_EQ(pinned.source(), kb::gemm::AlgoSource::table) << pinned.note();
  EXPECT_EQ(pinned.id(), g.id());
  EXPECT_TRUE(pinned.note().empty());
  dd.poison();
  pinned.run(da.get(), dw.get(), bp, dd.get(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto pc = kb::allclose(kb::to_float(dd.download()), ref, 1.0 / 128, 4e-3 * kb::rms(ref));
  EXPECT_TRUE(pc.ok) << "pinned " << pinned.id() << ": " << pc.text();
  // A pin this cuBLASLt refuses (no such algorithm): the heuristic's first
  // runs, and the plan says so.
  pin.config.id = 99999;
  kb::gemm::set_pinned_algos({pin});
  kb::gemm::Gemm refused(p.M, p.N, p.K, g.options());
  EXPECT_EQ(refused.source(), kb::gemm::AlgoSource::refused);
  EXPECT_NE(refused.note().find("was refused by this cuBLASLt"), std::string::npos)
      << refused.note();
  EXPECT_NE(refused.note().find("test table"), std::string::npos) << refused.note();
  dd.poison();
  refused.run(da.get(), dw.get(), bp, dd.get(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto rc = kb::allclose(kb::to_float(dd.download()), ref, 1.0 / 128, 4e-3 * kb::rms(ref));
  EXPECT_TRUE(rc.ok) << "fallback " << refused.id() << ": " << rc.text();
  // use_pins = false ignores the table (kbench tune plans so).
  kb::gemm::Options no_pins = g.options();
  no_pins.use_pins = false;
  kb::gemm::Gemm plain(p.M, p.N, p.K, no_pins);
  EXPECT_EQ(plain.source(), kb::gemm::AlgoSource::heuristic);
  kb::gemm::set_pinned_algos({});
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmTest,
    ::testing::Values(Param{3, 72, 40, Epilogue::none}, Param{3, 72, 40, Epilogue::bias},
                      Param{3, 72, 40, Epilogue::gelu}, Param{3, 72, 40, Epilogue::gelu_bias},
                      Param{5, 70, 36, Epilogue::bias},        // K, N not multiples of 8
                      Param{1, 4096, 1024, Epilogue::bias},    // a GEMV
                      Param{16, 14336, 1024, Epilogue::bias},  // the MLP's up at 16 tokens
                      Param{257, 136, 264, Epilogue::gelu_bias},
                      Param{128, 256, 8192, Epilogue::none}),  // long K: fp32 accumulation
    [](const ::testing::TestParamInfo<Param>& i) {
      return "M" + std::to_string(i.param.M) + "_N" + std::to_string(i.param.N) + "_K" +
             std::to_string(i.param.K) + "_" + kb::gemm::epilogue_name(i.param.ep);
    });

TEST(Gemm, Fp8MatchesReference) {
  KB_REQUIRE_CC(8, 9);  // FP8 tensor cores
  const int64_t M = 64, N = 144, K = 256;
  kb::DeviceBuffer<fp8> a(M * K), w(N * K);
  kb::DeviceBuffer<kb::bf16> bias(N), d(M * N);
  kb::fill_uniform_fp8_e4m3(a.get(), a.size(), 5, -1.f, 1.f, nullptr);
  kb::fill_uniform_fp8_e4m3(w.get(), w.size(), 6, -1.f, 1.f, nullptr);
  auto bh = kb::random_bf16(N, 7, -5.f, 5.f);
  bias.upload(bh);
  d.poison();
  kb::gemm::Options o;
  o.input = kb::gemm::Input::fp8_e4m3;
  o.epilogue = Epilogue::bias;
  kb::gemm::Gemm g(M, N, K, o);
  g.run(a.get(), w.get(), bias.get(), d.get(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto out = kb::to_float(d.download());
  auto ah = a.download(), wh = w.download();
  std::vector<int64_t> rows(M);
  for (int64_t m = 0; m < M; ++m) rows[m] = m;
  auto bf = kb::to_float(bh);
  auto ref = kb::gemm::ref_rows(rows, ah.data(), wh.data(), bf.data(), N, K, Epilogue::bias);
  auto close = kb::allclose(out, ref, 1.0 / 128, 4e-3 * kb::rms(ref));
  EXPECT_TRUE(close.ok) << g.id() << ": " << close.text();
  // The fill is not all zeros: the check above compares something.
  EXPECT_GT(kb::rms(ref), 1.0);
}

// FP8 GEMMs need 16-byte aligned leading dimensions (K a multiple of 16);
// K = 17 cannot be served on any GPU (and without FP8 nothing can): the
// heuristic's refusal must come back as kb::CudaError naming the status.
TEST(Gemm, ShapeCublasLtRefusesThrowsWithStatusName) {
  KB_REQUIRE_GPU();
  kb::gemm::Options o;
  o.input = kb::gemm::Input::fp8_e4m3;
  try {
    kb::gemm::Gemm g(3, 72, 17, o);
    FAIL() << "cuBLASLt accepted an FP8 GEMM with K=17: " << g.id();
  } catch (const kb::CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CUBLAS_STATUS_"), std::string::npos) << what;
    EXPECT_NE(what.find("cuBLASLt refuses fp8_e4m3 GEMM M=3 N=72 K=17"), std::string::npos) << what;
  }
}

TEST(Gemm, RefusesBadSizesBeforeAnyCudaCall) {
  // No GPU needed: checked before the handle is made.
  EXPECT_THROW(kb::gemm::Gemm(0, 8, 8), std::invalid_argument);
  EXPECT_THROW(kb::gemm::Gemm(8, -1, 8), std::invalid_argument);
  kb::gemm::Options o;
  o.min_alignment = 3;
  EXPECT_THROW(kb::gemm::Gemm(8, 8, 8, o), std::invalid_argument);
  o = {};
  o.candidates = 0;
  EXPECT_THROW(kb::gemm::Gemm(8, 8, 8, o), std::invalid_argument);
}

TEST(Gemm, RunRefusesBadPointersBeforeLaunch) {
  KB_REQUIRE_GPU();
  kb::DeviceBuffer<kb::bf16> a(64 * 64 + 8), w(64 * 64), b(64), d(64 * 64);
  kb::gemm::Options o;
  o.epilogue = Epilogue::bias;
  kb::gemm::Gemm g(64, 64, 64, o);
  EXPECT_THROW(g.run(nullptr, w.get(), b.get(), d.get(), nullptr), std::invalid_argument);
  EXPECT_THROW(g.run(a.get(), w.get(), b.get(), nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(g.run(a.get(), w.get(), nullptr, d.get(), nullptr),
               std::invalid_argument);  // no bias
  EXPECT_THROW(g.run(a.get() + 1, w.get(), b.get(), d.get(), nullptr), std::invalid_argument);
  EXPECT_THROW(g.run(reinterpret_cast<const fp8*>(a.get()), reinterpret_cast<const fp8*>(w.get()),
                     b.get(), d.get(), nullptr),
               std::invalid_argument);  // fp8 data into a bf16 plan
  kb::gemm::Gemm plain(64, 64, 64);
  EXPECT_THROW(plain.run(a.get(), w.get(), b.get(), d.get(), nullptr), std::invalid_argument);
  // A plan for 16-byte alignment takes an offset pointer.
  kb::gemm::Options o16;
  o16.min_alignment = 16;
  kb::gemm::Gemm g16(64, 64, 64, o16);
  EXPECT_NO_THROW(g16.run(a.get() + 8, w.get(), nullptr, d.get(), nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// The reference used by the large-shape checks agrees with the plain one.
TEST(GemmRef, RowsMatchTheFullReference) {
  const int64_t M = 9, N = 13, K = 37;
  auto a = kb::random_bf16(M * K, 1), w = kb::random_bf16(N * K, 2), b = kb::random_bf16(N, 3);
  auto af = kb::to_float(a), wf = kb::to_float(w), bf = kb::to_float(b);
  std::vector<float> full(M * N);
  kb::gemm::gemm_ref(af.data(), wf.data(), bf.data(), full.data(), M, N, K, Epilogue::gelu_bias);
  auto rows =
      kb::gemm::ref_rows({0, 4, 8}, a.data(), w.data(), bf.data(), N, K, Epilogue::gelu_bias);
  for (int r = 0; r < 3; ++r)
    for (int64_t n = 0; n < N; ++n) EXPECT_NEAR(rows[r * N + n], full[(r * 4) * N + n], 1e-5);
}

// The gemm experiment's values check (check_crossings on rows and columns
// sampled per 128-band): a right D passes; one wrong 128x128 tile, a D
// whose tiles are swapped, and A and W rows given in the wrong order fail.
TEST(GemmRef, CrossingsCatchAWrongTile) {
  const int64_t M = 300, N = 520, K = 40;
  auto a = kb::random_bf16(M * K, 1), w = kb::random_bf16(N * K, 2);
  auto af = kb::to_float(a), wf = kb::to_float(w);
  std::vector<float> full(M * N);
  kb::gemm::gemm_ref(af.data(), wf.data(), nullptr, full.data(), M, N, K, Epilogue::none);
  std::vector<kb::bf16> d(full.size());
  for (size_t i = 0; i < full.size(); ++i) d[i] = __float2bfloat16_rn(full[i]);
  const auto rows = kb::sample_per_band(M, 128, 2, 5), cols = kb::sample_per_band(N, 128, 2, 6);
  auto rows_of = [&](const std::vector<kb::bf16>& x, const std::vector<int64_t>& which) {
    std::vector<kb::bf16> out;
    for (int64_t r : which) out.insert(out.end(), x.begin() + r * K, x.begin() + (r + 1) * K);
    return out;
  };
  const auto ar = rows_of(a, rows), wr = rows_of(w, cols);
  std::string text;
  EXPECT_TRUE(kb::gemm::check_crossings(d, N, rows, cols, ar.data(), wr.data(), K, &text)) << text;
  EXPECT_NE(text.find(std::to_string(rows.size()) + " rows x " + std::to_string(cols.size()) +
                      " columns"),
            std::string::npos)
      << text;
  // Each 128x128 tile wrong alone (its values negated): caught, whichever.
  for (int64_t tm = 0; tm < M; tm += 128)
    for (int64_t tn = 0; tn < N; tn += 128) {
      auto bad = d;
      for (int64_t m = tm; m < std::min(M, tm + 128); ++m)
        for (int64_t n = tn; n < std::min(N, tn + 128); ++n)
          bad[m * N + n] = __float2bfloat16_rn(-full[m * N + n]);
      EXPECT_FALSE(kb::gemm::check_crossings(bad, N, rows, cols, ar.data(), wr.data(), K, &text))
          << "tile at " << tm << "," << tn;
    }
  // A and W rows that are not the sampled ones: caught.
  auto shifted = cols;
  for (auto& c : shifted) c = (c + 1) % N;
  const auto wrong = rows_of(w, shifted);
  EXPECT_FALSE(kb::gemm::check_crossings(d, N, rows, cols, ar.data(), wrong.data(), K, &text));
}

TEST(GemmRef, KnownValues) {
  // 1x1x2: [1, 2] . [3, 4] = 11, + bias 1 = 12.
  std::vector<float> a = {1, 2}, w = {3, 4}, b = {1}, d(1);
  kb::gemm::gemm_ref(a.data(), w.data(), b.data(), d.data(), 1, 1, 2, Epilogue::bias);
  EXPECT_FLOAT_EQ(d[0], 12.f);
  kb::gemm::gemm_ref(a.data(), w.data(), b.data(), d.data(), 1, 1, 2, Epilogue::none);
  EXPECT_FLOAT_EQ(d[0], 11.f);
  EXPECT_NEAR(kb::gemm::gelu_tanh(1.f), 0.841192f, 1e-5);
  EXPECT_NEAR(kb::gemm::gelu_tanh(-3.f), -0.003637f, 1e-5);
  // E4M3: 0x38 = 1.0, 0x7E = 448 (the largest finite), 0x01 = 2^-9 (smallest subnormal).
  fp8 v;
  v.__x = 0x38;
  EXPECT_EQ(kb::gemm::fp8_to_float(v), 1.f);
  v.__x = 0x7E;
  EXPECT_EQ(kb::gemm::fp8_to_float(v), 448.f);
  v.__x = 0xFE;
  EXPECT_EQ(kb::gemm::fp8_to_float(v), -448.f);
  v.__x = 0x01;
  EXPECT_EQ(kb::gemm::fp8_to_float(v), std::ldexp(1.f, -9));
}

TEST(AllClose, CatchesOneBadElementThatTheNormHides) {
  std::vector<float> ref(100000, 1.f), out = ref;
  out[4242] = 1.1f;
  EXPECT_TRUE(kb::compare(out, ref, 1e-3).ok);  // the norm does not see it
  auto c = kb::allclose(out, ref, 1.0 / 128, 0);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.bad, 1u);
  EXPECT_EQ(c.worst, 4242u);
  out[4242] = 1.005f;
  EXPECT_TRUE(kb::allclose(out, ref, 1.0 / 128, 0).ok);
  out[7] = std::nanf("");
  EXPECT_FALSE(kb::allclose(out, ref, 1.0 / 128, 0).ok);
}

}  // namespace
