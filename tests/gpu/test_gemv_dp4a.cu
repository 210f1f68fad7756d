// The dp4a int8 GEMV ("DP<R>U<U>K<ks>W<w>", kernels/gemv/dp4a.cu) against
// the CPU reference: every compiled configuration, row counts that end inside
// a block, rows whose vectors a K split leaves ragged, the in-place residual,
// gathers with ids outside [0, E), programmatic dependents, x whose 64-value
// chunks span magnitudes from 1e-6 to 3e4 and x whose 16-value vectors mix
// them (each vector has its own power of two), x tiny or huge, NaN in x;
// the SwiGLU form, dense and gathered.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/gemv_refusal.h"
#include "kernels/common/allclose.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/gemv/gemv.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/swiglu_check.h"

namespace {

using kb::bf16;
namespace gemv = kb::gemv;

struct DpCase {
  gemv::Dp4a d{2, 2, 1, 8};
  int64_t N = 0, K = 0;
  bool residual = false;
  int E = 1;
  std::vector<int32_t> ids;  // a gather's slots; empty: one matrix
  bool pdl = false;
  float x_lo = -2.f, x_hi = 2.f;
  bool ragged_x = false;  // chunks of x at 1e-6, 1 and 3e4 in turn
  bool mixed_x = false;   // within each 16 values: 3e4, 1e-3 and 1 in turn
  bool nan_x = false;     // x[5] is NaN: every row NaN
};

// y = W[ids[s]]·x · scale (+ y in place), every output against the reference.
void check(const DpCase& r) {
  const bool gather = !r.ids.empty();
  const int n_sel = gather ? static_cast<int>(r.ids.size()) : 1;
  const int64_t N = r.N, K = r.K;
  const uint64_t seed = 31 + N * 5 + K + r.d.rows_per_warp + 7 * r.d.unroll + 3 * r.d.k_split;
  const auto w8 = kb::random_int8(size_t(r.E) * N * K, seed);
  const auto s16 = kb::random_bf16(size_t(r.E) * N, seed + 1, 0.5f / 127, 1.5f / 127);
  auto x16 = kb::random_bf16(size_t(K), seed + 2, r.x_lo, r.x_hi);
  if (r.ragged_x)
    for (int64_t k = 0; k < K; ++k) {
      const float m[3] = {1e-6f, 1.f, 3e4f};
      x16[k] = kb::float_to_bf16(kb::bf16_to_float(x16[k]) * m[(k / 64) % 3]);
    }
  if (r.mixed_x)
    for (int64_t k = 0; k < K; ++k) {
      const float m[3] = {3e4f, 1e-3f, 1.f};
      x16[k] = kb::float_to_bf16(kb::bf16_to_float(x16[k]) * m[k % 3]);
    }
  if (r.nan_x) x16[5] = kb::float_to_bf16(NAN);
  const auto r16 = kb::random_bf16(size_t(N), seed + 3, -2.f, 2.f);
  kb::DeviceBuffer<uint8_t> w(w8.size());
  w.upload(std::vector<uint8_t>(w8.begin(), w8.end()));
  kb::DeviceBuffer<bf16> sc(s16.size()), x(K), y(size_t(n_sel) * N);
  kb::DeviceBuffer<int32_t> d_ids(r.ids.size());
  sc.upload(s16);
  x.upload(x16);
  if (gather) d_ids.upload(r.ids);
  if (r.residual)
    y.upload(r16);
  else
    y.poison();
  gemv::Operands op;
  op.int8 = true;
  op.W = w.get();
  op.scale = sc.get();
  op.x = x.get();
  op.y = y.get();
  op.N = N;
  op.K = K;
  op.residual = r.residual ? y.get() : nullptr;
  if (gather) {
    op.experts = d_ids.get();
    op.n_sel = n_sel;
    op.E = r.E;
  }
  gemv::Config c{r.d};
  c.pdl = r.pdl;
  gemv::launch(op, c, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = y.download();
  const auto xf = kb::to_float(x16), sf = kb::to_float(s16), rf = kb::to_float(r16);
  const std::vector<float> wf(w8.begin(), w8.end());
  std::vector<float> ref(N);
  for (int s = 0; s < n_sel; ++s) {
    const int e = gather ? r.ids[s] : 0;
    const std::string what = gemv::kernel_name(c.kernel) + " N=" + std::to_string(N) +
                             " K=" + std::to_string(K) + " slot " + std::to_string(s);
    if (e < 0 || e >= r.E) {
      for (int64_t n = 0; n < N; ++n)
        ASSERT_TRUE(std::isnan(kb::bf16_to_float(got[s * N + n]))) << what << " row " << n;
      continue;
    }
    const float* we = wf.data() + int64_t(e) * N * K;
    const float* se = sf.data() + int64_t(e) * N;
    if (r.nan_x) {
      for (int64_t n = 0; n < N; ++n)
        ASSERT_TRUE(std::isnan(kb::bf16_to_float(got[s * N + n]))) << what << " row " << n;
      continue;
    }
    gemv::gemv_ref(we, se, xf.data(), ref.data(), N, K, r.residual ? rf.data() : nullptr);
    for (int64_t n = 0; n < N; ++n) {
      double mag = 0;
      for (int64_t k = 0; k < K; ++k) mag += std::fabs(we[n * K + k] * xf[k]);
      mag *= se[n];
      const double out = kb::bf16_to_float(got[s * N + n]);
      ASSERT_LE(std::fabs(out - ref[n]), std::fabs(ref[n]) / 128 + 1e-4 * mag + 1e-30)
          << what << " row " << n << " got " << out << " want " << ref[n];
    }
  }
}

TEST(GemvDp4a, EveryConfigurationMatchesReference) {
  KB_REQUIRE_CC(6, 1);
  for (const gemv::Dp4a& d : gemv::kDp4aCompiled)
    for (int64_t K : {16, 528, 4096, 11008, 16384})
      for (int64_t N : {1, 37, 257}) {
        DpCase r;
        r.d = d;
        r.N = N;
        r.K = K;
        check(r);
        r.residual = true;
        check(r);
      }
}

TEST(GemvDp4a, XOfEveryMagnitude) {
  KB_REQUIRE_CC(6, 1);
  DpCase r;
  r.N = 100;
  r.K = 4096;
  r.ragged_x = true;
  check(r);
  r.ragged_x = false;
  r.mixed_x = true;
  check(r);
  r.mixed_x = false;
  r.x_lo = -1e-30f;  // all of x tiny: scaled up, not flushed
  r.x_hi = 1e-30f;
  check(r);
  r.x_lo = -1e34f;  // huge: scaled down (16 products stay finite)
  r.x_hi = 1e34f;
  r.N = 4;
  r.K = 16;
  check(r);
  r.x_lo = -2.f;
  r.x_hi = 2.f;
  r.N = 100;
  r.K = 4096;
  r.nan_x = true;
  check(r);
}

TEST(GemvDp4a, GatherAndIdsOutsideRange) {
  KB_REQUIRE_CC(6, 1);
  DpCase r;
  r.N = 96;
  r.K = 4096;
  r.E = 4;
  r.ids = {3, 0};
  check(r);
  r.d = gemv::Dp4a{4, 1, 2, 8};
  r.ids = {4, 2, -1};  // two bad ids: NaN rows, nothing read
  check(r);
}

TEST(GemvDp4a, ProgrammaticDependentLaunchMatchesReference) {
  KB_REQUIRE_CC(9, 0);
  DpCase r;
  r.pdl = true;
  r.N = 300;
  r.K = 4096;
  r.residual = true;
  check(r);
  r.residual = false;
  r.E = 3;
  r.ids = {2, 1};
  check(r);
}

// H[s] = SwiGLU of expert ids[s] (dense: ids empty, the kernel from a table
// entry as the decode step takes it) with configuration d, against the reference.
void check_swiglu(const gemv::Dp4a& d, int64_t F, int64_t K, int E, std::vector<int32_t> ids,
                  bool pdl) {
  const bool gather = !ids.empty();
  const int n_sel = gather ? static_cast<int>(ids.size()) : 1;
  const float eps = 1e-5f;
  const uint64_t seed = 900 + F + K + d.rows_per_warp + d.unroll;
  const auto w8 = kb::random_int8(size_t(E) * 2 * F * K, seed);
  const float amp = 2.f / std::sqrt(float(K)) / 127;
  const auto s16 = kb::random_bf16(size_t(E) * 2 * F, seed + 1, 0.5f * amp, 1.5f * amp);
  const auto x16 = kb::random_bf16(size_t(K), seed + 2, -3.f, 3.f);
  kb::DeviceBuffer<uint8_t> w(w8.size());
  w.upload(std::vector<uint8_t>(w8.begin(), w8.end()));
  kb::DeviceBuffer<bf16> sc(s16.size()), x(K), h(size_t(n_sel) * F);
  kb::DeviceBuffer<int32_t> d_ids(ids.size());
  sc.upload(s16);
  x.upload(x16);
  h.poison();
  gemv::Config c{d};
  c.pdl = pdl;
  if (gather) {
    d_ids.upload(ids);
    gemv::gather_gemv_swiglu(true, w.get(), sc.get(), d_ids.get(), n_sel, E, x.get(), h.get(), F, K,
                             eps, nullptr, pdl, &c);
  } else {
    gemv::TableEntry e;
    e.bucket.int8 = true;
    e.bucket.use = gemv::Use::swiglu;
    e.bucket.rows_min = e.bucket.rows_max = 2 * F;
    e.bucket.row_bytes_min = e.bucket.row_bytes_max = K;
    e.kernel = c.kernel;
    gemv::set_table({e});
    const std::string took = gemv::kernel_name(gemv::decode_swiglu_config(true, F, K).kernel);
    gemv::gemv_swiglu(true, w.get(), sc.get(), x.get(), h.get(), 1, F, K, eps, nullptr, pdl);
    gemv::set_table({});
    ASSERT_EQ(took, gemv::kernel_name(c.kernel));
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = kb::to_float(h.download());
  const auto sf = kb::to_float(s16);
  kb::test::expect_swiglu_slots(got, ids, E, F, K, eps, std::vector<float>(w8.begin(), w8.end()),
                                sf.data(), kb::to_float(x16), gemv::kernel_name(c.kernel));
}

TEST(GemvDp4a, SwigluMatchesReference) {
  KB_REQUIRE_CC(6, 1);
  for (const gemv::Dp4a& d : gemv::kDp4aCompiled) {
    if (d.rows_per_warp > 2) continue;
    check_swiglu(d, 45, 4096, 1, {}, false);
    check_swiglu(d, 33, 4096, 3, {2, 0}, false);
  }
  check_swiglu(gemv::Dp4a{2, 2, 2, 8}, 5, 4096, 4, {4, 1, -1}, false);  // bad ids: NaN rows
}

TEST(GemvDp4a, SwigluAsAProgrammaticDependentMatchesReference) {
  KB_REQUIRE_CC(9, 0);
  check_swiglu(gemv::Dp4a{2, 2, 1, 8}, 300, 4096, 1, {}, true);
  check_swiglu(gemv::Dp4a{1, 4, 1, 8}, 45, 14336, 8, {7, 3}, true);
}

// The refusals come before any CUDA call: no GPU needed.
TEST(GemvDp4a, RefusesWhatItCannotServe) {
  const gemv::Dp4a d{2, 2, 1, 8};
  EXPECT_EQ(gemv::refusal(d, true, 4096, 4096, 1), "");
  EXPECT_EQ(gemv::refusal(d, true, 4096, 11008, 1), "");
  EXPECT_NE(gemv::refusal(d, false, 4096, 4096, 1), "");                      // bf16
  EXPECT_NE(gemv::refusal(d, true, 4096, 4104, 1), "");                       // 4104 % 16
  EXPECT_NE(gemv::refusal(d, true, 4096, 16400, 1), "");                      // over 16384
  EXPECT_NE(gemv::refusal(gemv::Dp4a{3, 2, 1, 8}, true, 4096, 4096, 1), "");  // not compiled
  EXPECT_NE(gemv::refusal(gemv::Dp4a{2, 2, 1, 4}, true, 4096, 4096, 1), "");
  EXPECT_EQ(gemv::swiglu_refusal(d, true, 4096), "");
  EXPECT_NE(gemv::swiglu_refusal(gemv::Dp4a{4, 2, 1, 8}, true, 4096), "");  // 1 or 2 rows
  EXPECT_EQ(gemv::kernel_name(d), "DP2U2K1W8");
  EXPECT_EQ(gemv::family_name(*gemv::parse_kernel("DP4U1K2W8")), "dp4a");
  const auto p = gemv::parse_kernel("DP4U1K2W8");
  ASSERT_TRUE(p && std::holds_alternative<gemv::Dp4a>(*p));
  EXPECT_EQ(std::get<gemv::Dp4a>(*p).k_split, 2);
  // 300 rows, 16 a block (2 a warp, 8 warps), 2 slots; K split 2: 8 a block.
  EXPECT_EQ(gemv::grid_blocks(true, 300, 4096, gemv::Config{d}, 2, true), 38);
  EXPECT_EQ(gemv::grid_blocks(true, 300, 4096, gemv::Config{gemv::Dp4a{2, 2, 2, 8}}, 1), 38);
  gemv::Operands op;
  op.int8 = false;
  op.W = op.x = op.y = reinterpret_cast<bf16*>(uintptr_t{256});
  op.N = 8;
  op.K = 4096;
  EXPECT_THROW(gemv::launch(op, gemv::Config{d}, nullptr), std::invalid_argument);
}

}  // namespace
