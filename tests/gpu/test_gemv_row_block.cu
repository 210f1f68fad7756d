// The row-block GEMV kernels ("RB4", "RB8", kernels/gemv/row_block.cu)
// against the CPU reference at every kind of row they serve (512 to 16384
// weights, the thread counts 32 to 1024), plain, with the in-place residual, gathered
// (with ids outside [0, E)), chained as programmatic dependents; the SwiGLU
// form, dense and gathered; and the shapes it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/allclose.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/gemv/gemv.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/swiglu_check.h"

namespace {

using kb::bf16;
namespace gemv = kb::gemv;

const gemv::Config kRowBlock{gemv::RowBlock{4}};

// y = W[ids[s]]·x (+ y in place) with RB<loads>, every output against the reference.
void check(int loads, int64_t N, int64_t K, bool residual, int E = 1, std::vector<int32_t> ids = {},
           bool pdl = false) {
  const bool gather = !ids.empty();
  const int n_sel = gather ? static_cast<int>(ids.size()) : 1;
  const uint64_t seed = 11 + N * 7 + K;
  const auto w16 = kb::random_bf16(size_t(E) * N * K, seed);
  const auto x16 = kb::random_bf16(size_t(K), seed + 1);
  const auto r16 = kb::random_bf16(size_t(N), seed + 2, -2.f, 2.f);
  kb::DeviceBuffer<bf16> w(w16.size()), x(K), y(size_t(n_sel) * N);
  kb::DeviceBuffer<int32_t> d_ids(ids.size());
  w.upload(w16);
  x.upload(x16);
  if (gather) d_ids.upload(ids);
  if (residual)
    y.upload(r16);
  else
    y.poison();
  gemv::Operands op;
  op.W = w.get();
  op.x = x.get();
  op.y = y.get();
  op.N = N;
  op.K = K;
  op.residual = residual ? y.get() : nullptr;
  if (gather) {
    op.experts = d_ids.get();
    op.n_sel = n_sel;
    op.E = E;
  }
  gemv::Config c{gemv::RowBlock{loads}};
  c.pdl = pdl;
  gemv::launch(op, c, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = y.download();
  const auto wf = kb::to_float(w16), xf = kb::to_float(x16), rf = kb::to_float(r16);
  std::vector<float> ref(N);
  for (int s = 0; s < n_sel; ++s) {
    const int e = gather ? ids[s] : 0;
    const std::string what = "RB" + std::to_string(loads) + " N=" + std::to_string(N) +
                             " K=" + std::to_string(K) + " slot " + std::to_string(s) + " id " +
                             std::to_string(e);
    if (e < 0 || e >= E) {
      for (int64_t n = 0; n < N; ++n)
        ASSERT_TRUE(std::isnan(kb::bf16_to_float(got[s * N + n]))) << what << " row " << n;
      continue;
    }
    gemv::gemv_ref(wf.data() + int64_t(e) * N * K, nullptr, xf.data(), ref.data(), N, K,
                   residual ? rf.data() : nullptr);
    for (int64_t n = 0; n < N; ++n) {
      double mag = 0;
      for (int64_t k = 0; k < K; ++k) mag += std::fabs(wf[(int64_t(e) * N + n) * K + k] * xf[k]);
      const double out = kb::bf16_to_float(got[s * N + n]);
      ASSERT_LE(std::fabs(out - ref[n]), std::fabs(ref[n]) / 128 + 1e-4 * mag + 1e-6)
          << what << " row " << n << " got " << out << " want " << ref[n];
    }
  }
}

TEST(GemvRowBlock, EveryRowLengthMatchesReference) {
  KB_REQUIRE_GPU();
  for (int loads : {4, 8})
    for (int64_t K : {512, 1024, 4096, 8192, 11264, 16384}) {
      if (K % (128 * loads) != 0) continue;
      for (int64_t N : {1, 3, 257}) {
        check(loads, N, K, false);
        check(loads, N, K, true);
      }
    }
}

TEST(GemvRowBlock, GatherAndIdsOutsideRange) {
  KB_REQUIRE_GPU();
  for (int loads : {4, 8}) {
    check(loads, 33, 4096, false, 4, {3, 0});
    check(loads, 5, 8192, false, 4, {4, 2, -1});  // two bad ids: NaN rows, nothing read
  }
}

TEST(GemvRowBlock, ProgrammaticDependentLaunchMatchesReference) {
  KB_REQUIRE_CC(9, 0);
  check(4, 129, 8192, true, 1, {}, true);
  check(4, 17, 4096, false, 3, {2, 1}, true);
  check(8, 65, 16384, true, 1, {}, true);
  check(8, 17, 16384, false, 3, {2, 1}, true);
}

// H[s] = SwiGLU of expert ids[s] (dense: ids empty, the kernel from a table
// entry as the decode step takes it) with RB<loads>, against the reference.
void check_swiglu(int loads, int64_t F, int64_t K, int E, std::vector<int32_t> ids, bool pdl) {
  const bool gather = !ids.empty();
  const int n_sel = gather ? static_cast<int>(ids.size()) : 1;
  const float rk = 1.f / std::sqrt(float(K)), eps = 1e-5f;
  const auto w16 = kb::random_bf16(size_t(E) * 2 * F * K, 700 + F + K, -2.f * rk, 2.f * rk);
  const auto x16 = kb::random_bf16(size_t(K), 701 + F, -3.f, 3.f);
  kb::DeviceBuffer<bf16> w(w16.size()), x(K), h(size_t(n_sel) * F);
  kb::DeviceBuffer<int32_t> d_ids(ids.size());
  w.upload(w16);
  x.upload(x16);
  h.poison();
  gemv::Config c{gemv::RowBlock{loads}};
  c.pdl = pdl;
  if (gather) {
    d_ids.upload(ids);
    gemv::gather_gemv_swiglu(false, w.get(), nullptr, d_ids.get(), n_sel, E, x.get(), h.get(), F, K,
                             eps, nullptr, pdl, &c);
  } else {
    gemv::TableEntry e;
    e.bucket.use = gemv::Use::swiglu;
    e.bucket.rows_min = e.bucket.rows_max = 2 * F;
    e.bucket.row_bytes_min = e.bucket.row_bytes_max = 2 * K;
    e.kernel = c.kernel;
    gemv::set_table({e});
    const std::string took = gemv::kernel_name(gemv::decode_swiglu_config(false, F, K).kernel);
    gemv::gemv_swiglu(false, w.get(), nullptr, x.get(), h.get(), 1, F, K, eps, nullptr, pdl);
    gemv::set_table({});
    ASSERT_EQ(took, gemv::kernel_name(c.kernel));
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = kb::to_float(h.download());
  kb::test::expect_swiglu_slots(got, ids, E, F, K, eps, kb::to_float(w16), nullptr,
                                kb::to_float(x16), "RB" + std::to_string(loads));
}

TEST(GemvRowBlock, SwigluMatchesReference) {
  KB_REQUIRE_GPU();
  for (int loads : {4, 8})
    for (int64_t K : {1024, 4096, 16384}) {
      check_swiglu(loads, 37, K, 1, {}, false);
      check_swiglu(loads, 19, K, 3, {2, 0}, false);
    }
  check_swiglu(4, 5, 4096, 4, {4, 1, -1}, false);  // bad ids: NaN rows, nothing read
}

TEST(GemvRowBlock, SwigluAsAProgrammaticDependentMatchesReference) {
  KB_REQUIRE_CC(9, 0);
  check_swiglu(4, 300, 4096, 1, {}, true);
  check_swiglu(8, 45, 4096, 8, {7, 3}, true);
}

// The refusals come before any CUDA call: no GPU needed.
TEST(GemvRowBlock, RefusesWhatItCannotServe) {
  auto refused = [](bool int8, int64_t K, int loads = 4) {
    gemv::Operands op;
    op.int8 = int8;
    op.W = op.x = op.y = reinterpret_cast<bf16*>(uintptr_t{256});
    op.scale = int8 ? reinterpret_cast<bf16*>(uintptr_t{256}) : nullptr;
    op.N = 8;
    op.K = K;
    try {
      gemv::launch(op, gemv::Config{gemv::RowBlock{loads}}, nullptr);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).find("row-block") != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused(false, 256));       // a block of 16 threads
  EXPECT_TRUE(refused(false, 4104));      // not a multiple of 512
  EXPECT_TRUE(refused(false, 16896));     // more than 1024 threads
  EXPECT_TRUE(refused(true, 4096));       // int8
  EXPECT_TRUE(refused(false, 512, 8));    // a block of 16 threads
  EXPECT_TRUE(refused(false, 4608, 8));   // not a multiple of 1024
  EXPECT_TRUE(refused(false, 17408, 8));  // more than 16384 weights
  EXPECT_TRUE(refused(false, 4096, 6));   // not a compiled load count
  const auto* p = reinterpret_cast<const bf16*>(uintptr_t{256});
  const gemv::Config rb4{gemv::RowBlock{4}};
  EXPECT_THROW(
      gemv::gather_gemv_swiglu(false, p, nullptr, reinterpret_cast<const int32_t*>(p), 2, 4, p,
                               const_cast<bf16*>(p), 8, 4104, 1e-5f, nullptr, false, &rb4),
      std::invalid_argument);  // rows not a multiple of 512
  EXPECT_EQ(gemv::grid_blocks(false, 300, 4096, kRowBlock, 2, true), 600);  // a block a row
  EXPECT_EQ(gemv::kernel_name(gemv::RowBlock{4}), "RB4");
  EXPECT_EQ(gemv::kernel_name(gemv::RowBlock{8}), "RB8");
  EXPECT_EQ(gemv::family_name(*gemv::parse_kernel("RB8")), "row_block");
  EXPECT_EQ(gemv::family_name(*gemv::parse_kernel("RB4")), "row_block");
  EXPECT_FALSE(gemv::parse_kernel("RB0").has_value());
}

}  // namespace
