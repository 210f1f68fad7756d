// gemv / gather_gemv against the CPU reference on random data, every kernel
// configuration, shapes that are not multiples of any tile, every expert
// id; and the inputs the kernels refuse (those tests need no GPU: the
// refusal comes before any CUDA call).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "core/tuning.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/common/host_math.h"
#include "kernels/gemv/gemv.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using kb::bf16;
namespace gemv = kb::gemv;

// A configuration by its name (core/gemv_config.h), its family's name and its own.
gemv::Config named(const char* n) {
  const auto k = gemv::parse_kernel(n);
  if (!k) throw std::invalid_argument(std::string("no kernel named ") + n);
  return gemv::Config(*k);
}
std::string family(const gemv::Config& c) { return gemv::family_name(c.kernel); }
std::string name(const gemv::Config& c) { return gemv::kernel_name(c.kernel); }
// The general kernel: rows per warp, unroll, warps, pipelined, K split.
gemv::Config general(int rows_per_warp, int unroll, int warps, bool pipeline, int k_split) {
  return gemv::Config(gemv::General{rows_per_warp, unroll, warps, pipeline, k_split});
}

// gemv::launch with the operands spelled out.
void launch_with(bool int8, const void* W, const bf16* scale, const int32_t* ids, int n_sel, int E,
                 const bf16* x, bf16* y, int64_t N, int64_t K, const bf16* residual,
                 const gemv::Config& c, cudaStream_t s, int tokens = 1) {
  gemv::Operands op;
  op.int8 = int8;
  op.W = W;
  op.scale = scale;
  op.experts = ids;
  op.n_sel = n_sel;
  op.E = E;
  op.x = x;
  op.y = y;
  op.N = N;
  op.K = K;
  op.residual = residual;
  op.tokens = tokens;
  gemv::launch(op, c, s);
}

struct Problem {
  int64_t N, K;
  bool int8;
};

// y (bf16 from the GPU) against the fp64 reference: each element within
// bf16 rounding of the result plus fp32 accumulation error of its terms.
void expect_close(const std::vector<bf16>& got, const std::vector<float>& ref,
                  const std::vector<float>& mag, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const double out = kb::bf16_to_float(got[i]);
    const double bound = std::fabs(ref[i]) / 128 + 1e-4 * mag[i] + 1e-6;
    ASSERT_LE(std::fabs(out - ref[i]), bound)
        << what << ": element " << i << " got " << out << " want " << ref[i];
  }
}

struct Host {
  std::vector<float> w, scale, x, res, mag;
};

// Runs one gemv (optionally gather over E experts) with config `cfg`
// (nullptr: the public entry points) and checks every output.
void run_and_check(const Problem& p, const gemv::Config* cfg, bool residual, int E = 1,
                   std::vector<int32_t> ids = {}) {
  const bool gather = !ids.empty();
  const int n_sel = gather ? static_cast<int>(ids.size()) : 1;
  const size_t wn = static_cast<size_t>(E) * p.N * p.K;
  const uint64_t seed = 77 + p.N * 131 + p.K;
  Host h;
  std::vector<int8_t> w8;
  std::vector<bf16> w16, sc16, x16 = kb::random_bf16(p.K, seed + 1), r16;
  kb::DeviceBuffer<uint8_t> w(wn * (p.int8 ? 1 : 2));
  if (p.int8) {
    w8 = kb::random_int8(wn, seed);
    h.w.assign(w8.begin(), w8.end());
    KB_CUDA_CHECK(cudaMemcpy(w.get(), w8.data(), wn, cudaMemcpyHostToDevice));
    sc16 = kb::random_bf16(static_cast<size_t>(E) * p.N, seed + 2, 0.001f, 0.01f);
    h.scale = kb::to_float(sc16);
  } else {
    w16 = kb::random_bf16(wn, seed);
    h.w = kb::to_float(w16);
    KB_CUDA_CHECK(cudaMemcpy(w.get(), w16.data(), wn * 2, cudaMemcpyHostToDevice));
  }
  kb::DeviceBuffer<bf16> scale(sc16.size()), x(p.K), y(static_cast<size_t>(n_sel) * p.N);
  kb::DeviceBuffer<int32_t> d_ids(ids.size());
  if (!sc16.empty()) scale.upload(sc16);
  x.upload(x16);
  if (gather) d_ids.upload(ids);
  h.x = kb::to_float(x16);
  if (residual) {
    r16 = kb::random_bf16(p.N, seed + 3, -2.f, 2.f);
    y.upload(r16);  // in place: y = W·x + y
    h.res = kb::to_float(r16);
  } else {
    y.poison();
  }
  const bf16* sp = p.int8 ? scale.get() : nullptr;
  const bf16* rp = residual ? y.get() : nullptr;
  if (cfg) {
    launch_with(p.int8, w.get(), sp, gather ? d_ids.get() : nullptr, n_sel, E, x.get(), y.get(),
                p.N, p.K, rp, *cfg, nullptr);
  } else if (gather) {
    if (p.int8)
      gemv::gather_gemv_int8(reinterpret_cast<const int8_t*>(w.get()), sp, d_ids.get(), n_sel, E,
                             x.get(), y.get(), p.N, p.K, nullptr);
    else
      gemv::gather_gemv_bf16(reinterpret_cast<const bf16*>(w.get()), d_ids.get(), n_sel, E, x.get(),
                             y.get(), p.N, p.K, nullptr);
  } else if (p.int8) {
    gemv::gemv_int8(reinterpret_cast<const int8_t*>(w.get()), sp, x.get(), y.get(), p.N, p.K,
                    nullptr, rp);
  } else {
    gemv::gemv_bf16(reinterpret_cast<const bf16*>(w.get()), x.get(), y.get(), p.N, p.K, nullptr,
                    rp);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = y.download();

  std::vector<float> ref(static_cast<size_t>(n_sel) * p.N), mag(ref.size());
  for (int s = 0; s < n_sel; ++s) {
    const int64_t e = gather ? ids[s] : 0;
    const float* we = h.w.data() + e * p.N * p.K;
    const float* se = p.int8 ? h.scale.data() + e * p.N : nullptr;
    gemv::gemv_ref(we, se, h.x.data(), ref.data() + s * p.N, p.N, p.K,
                   residual ? h.res.data() : nullptr);
    for (int64_t n = 0; n < p.N; ++n) {
      double m = 0;
      for (int64_t k = 0; k < p.K; ++k) m += std::fabs(we[n * p.K + k] * h.x[k]);
      mag[s * p.N + n] = static_cast<float>(m * (se ? se[n] : 1.f));
    }
  }
  expect_close(got, ref, mag,
               std::string(p.int8 ? "int8" : "bf16") + " N=" + std::to_string(p.N) +
                   " K=" + std::to_string(p.K));
}

class GemvShapes : public ::testing::TestWithParam<Problem> {};

TEST_P(GemvShapes, PublicEntryMatchesReference) {
  KB_REQUIRE_GPU();
  run_and_check(GetParam(), nullptr, false);
}

TEST_P(GemvShapes, InPlaceResidualMatchesReference) {
  KB_REQUIRE_GPU();
  run_and_check(GetParam(), nullptr, true);
}

TEST_P(GemvShapes, EveryConfigMatchesReference) {
  KB_REQUIRE_GPU();
  for (int r : {1, 2, 4})
    for (int u : {1, 2})
      for (int wpb : {1, 4, 8})
        for (bool pipe : {false, true})
          for (int ks : {1, 2, 4, 8}) {
            if (wpb % ks != 0) continue;
            SCOPED_TRACE("R=" + std::to_string(r) + " U=" + std::to_string(u) +
                         " W=" + std::to_string(wpb) + " P=" + std::to_string(pipe) +
                         " KS=" + std::to_string(ks));
            gemv::Config c = general(r, u, wpb, pipe, ks);
            run_and_check(GetParam(), &c, ks == 2);  // k-split with the in-place residual too
          }
}

// N not a multiple of rows per warp or warps per block; K shorter than one
// warp-wide load, not a multiple of 32 vectors, and the decode shapes' K.
INSTANTIATE_TEST_SUITE_P(Shapes, GemvShapes,
                         ::testing::Values(Problem{1, 8, false}, Problem{3, 24, false},
                                           Problem{33, 264, false}, Problem{129, 4104, false},
                                           Problem{67, 11008, false}, Problem{1000, 1024, false},
                                           Problem{1, 16, true}, Problem{3, 48, true},
                                           Problem{33, 272, true}, Problem{129, 4112, true},
                                           Problem{67, 11008, true}, Problem{1000, 1024, true}),
                         [](const ::testing::TestParamInfo<Problem>& i) {
                           return std::string(i.param.int8 ? "int8" : "bf16") + "_N" +
                                  std::to_string(i.param.N) + "_K" + std::to_string(i.param.K);
                         });

// Random weights [rows, K] on the GPU and as floats on the host; int8 gets
// per-row scales in [scale_lo, scale_hi], bf16 values in [-amp, amp].
struct Weights {
  kb::DeviceBuffer<uint8_t> dev;
  std::vector<float> host, scale_host;
  std::vector<bf16> scale;
};
Weights make_weights(int64_t rows, int64_t K, bool int8, uint64_t seed, float amp, float scale_lo,
                     float scale_hi) {
  const size_t n = size_t(rows) * K;
  Weights w{kb::DeviceBuffer<uint8_t>(n * (int8 ? 1 : 2)), {}, {}, {}};
  if (int8) {
    const auto w8 = kb::random_int8(n, seed);
    w.host.assign(w8.begin(), w8.end());
    KB_CUDA_CHECK(cudaMemcpy(w.dev.get(), w8.data(), n, cudaMemcpyHostToDevice));
    w.scale = kb::random_bf16(size_t(rows), seed + 2, scale_lo, scale_hi);
    w.scale_host = kb::to_float(w.scale);
  } else {
    const auto w16 = kb::random_bf16(n, seed, -amp, amp);
    w.host = kb::to_float(w16);
    KB_CUDA_CHECK(cudaMemcpy(w.dev.get(), w16.data(), n * 2, cudaMemcpyHostToDevice));
  }
  return w;
}

// Several tokens at once: every token's row against the reference, with
// the in-place residual, and bit for bit the single-token gemv of the same x
// where both split K alike (the same arithmetic order); shapes across the
// k-split choices.
TEST(GemvTokens, MatchesReferenceAndTheSingleTokenGemv) {
  KB_REQUIRE_GPU();
  for (const Problem& p :
       {Problem{33, 264, false}, Problem{129, 4104, false}, Problem{67, 11008, false},
        Problem{1000, 1024, false}, Problem{33, 272, true}, Problem{129, 4112, true},
        Problem{67, 12288, true}})
    for (int T : {2, 6, 8}) {
      SCOPED_TRACE(std::string(p.int8 ? "int8" : "bf16") + " N=" + std::to_string(p.N) +
                   " K=" + std::to_string(p.K) + " tokens=" + std::to_string(T));
      const uint64_t seed = 5 + p.N + p.K + T;
      const Weights w = make_weights(p.N, p.K, p.int8, seed, 1.f, 0.001f, 0.01f);
      const std::vector<float>& hw = w.host;
      const std::vector<float>& hs = w.scale_host;
      const auto x16 = kb::random_bf16(size_t(T) * p.K, seed + 1);
      const auto r16 = kb::random_bf16(size_t(T) * p.N, seed + 3, -2.f, 2.f);
      kb::DeviceBuffer<bf16> scale(w.scale.size()), x(x16.size()), y(r16.size()), y1(p.N);
      if (p.int8) scale.upload(w.scale);
      x.upload(x16);
      y.upload(r16);  // in place: Y = W·X + Y
      const bf16* sp = p.int8 ? scale.get() : nullptr;
      gemv::gemv_tokens(p.int8, w.dev.get(), sp, x.get(), y.get(), T, p.N, p.K, nullptr, y.get());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got = y.download();
      const auto hx = kb::to_float(x16), hr = kb::to_float(r16);
      for (int t = 0; t < T; ++t) {
        std::vector<float> ref(p.N), mag(p.N);
        gemv::gemv_ref(hw.data(), p.int8 ? hs.data() : nullptr, hx.data() + size_t(t) * p.K,
                       ref.data(), p.N, p.K, hr.data() + size_t(t) * p.N);
        for (int64_t n = 0; n < p.N; ++n) {
          double m = 0;
          for (int64_t k = 0; k < p.K; ++k) m += std::fabs(hw[n * p.K + k] * hx[t * p.K + k]);
          mag[n] = static_cast<float>(m * (p.int8 ? hs[n] : 1.f));
        }
        const std::vector<bf16> row(got.begin() + size_t(t) * p.N,
                                    got.begin() + size_t(t + 1) * p.N);
        expect_close(row, ref, mag, "token " + std::to_string(t));
        // The single-token gemv of token t, same residual: the same bits.
        const gemv::Config many_c = gemv::tokens_config(p.int8, p.N, p.K, T),
                           one_c = gemv::default_config(p.int8, p.N, p.K);
        const gemv::General *many = many_c.get<gemv::General>(), *one = one_c.get<gemv::General>();
        if (!one || many->k_split != one->k_split || many->unroll != one->unroll) continue;
        y1.upload(
            std::vector<bf16>(r16.begin() + size_t(t) * p.N, r16.begin() + size_t(t + 1) * p.N));
        if (p.int8)
          gemv::gemv_int8(reinterpret_cast<const int8_t*>(w.dev.get()), sp,
                          x.get() + size_t(t) * p.K, y1.get(), p.N, p.K, nullptr, y1.get());
        else
          gemv::gemv_bf16(reinterpret_cast<const bf16*>(w.dev.get()), x.get() + size_t(t) * p.K,
                          y1.get(), p.N, p.K, nullptr, y1.get());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const auto single = y1.download();
        ASSERT_EQ(0, std::memcmp(single.data(), row.data(), row.size() * sizeof(bf16)))
            << "token " << t;
      }
    }
}

// The fused SwiGLU against its CPU reference (rel. L2 and no element off by
// more than bf16 rounding of the largest output), for 1 and 6 tokens, at
// shapes that take each K split (bf16 2F <= 2048: 2; 2F >= 12288: 4; int8
// K >= 12288: 4); several tokens give each token's single-token bits where
// they split K alike.
TEST(GemvSwiglu, MatchesReferenceForOneAndSeveralTokens) {
  KB_REQUIRE_GPU();
  struct Shape {
    int64_t F, K;
    bool int8;
  };
  for (const Shape& p : {Shape{37, 264, false}, Shape{1100, 4104, false}, Shape{7000, 4096, false},
                         Shape{33, 272, true}, Shape{1100, 4112, true}, Shape{19, 12288, true}})
    for (int T : {1, 6}) {
      SCOPED_TRACE(std::string(p.int8 ? "int8" : "bf16") + " F=" + std::to_string(p.F) +
                   " K=" + std::to_string(p.K) + " tokens=" + std::to_string(T));
      const uint64_t seed = 900 + p.F + p.K;
      // Rows of norm ~1, so that g and u are O(1) and silu is not saturated.
      const float rk = 1.f / std::sqrt(float(p.K));
      const Weights w =
          make_weights(2 * p.F, p.K, p.int8, seed, 1.7f * rk, 0.5f / 127 * rk, rk / 127);
      const auto x16 = kb::random_bf16(size_t(T) * p.K, seed + 1, -3.f, 3.f);
      kb::DeviceBuffer<bf16> scale(w.scale.size()), x(x16.size()), h(size_t(T) * p.F), h1(p.F);
      if (p.int8) scale.upload(w.scale);
      x.upload(x16);
      h.poison();
      const bf16* sp = p.int8 ? scale.get() : nullptr;
      const float eps = 1e-5f;
      gemv::gemv_swiglu(p.int8, w.dev.get(), sp, x.get(), h.get(), T, p.F, p.K, eps, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got = kb::to_float(h.download());
      const auto hx = kb::to_float(x16);
      for (int t = 0; t < T; ++t) {
        std::vector<float> ref(p.F);
        gemv::gemv_swiglu_ref(w.host.data(), p.int8 ? w.scale_host.data() : nullptr,
                              hx.data() + size_t(t) * p.K, ref.data(), p.F, p.K, eps);
        const std::vector<float> row(got.begin() + size_t(t) * p.F,
                                     got.begin() + size_t(t + 1) * p.F);
        const auto cmp = kb::compare(row, ref, 1e-2);
        EXPECT_TRUE(cmp.ok) << "token " << t << ": " << cmp.text();
        float big = 0;
        for (float v : ref) big = std::max(big, std::fabs(v));
        EXPECT_LE(cmp.max_abs, big / 64) << "token " << t;
        const gemv::General
            many = *gemv::tokens_config(p.int8, 2 * p.F, p.K, T, true).get<gemv::General>(),
            one = *gemv::tokens_config(p.int8, 2 * p.F, p.K, 1, true).get<gemv::General>();
        if (T > 1 && many.k_split == one.k_split && many.unroll == one.unroll) {
          // token t alone, the K split alike: the same bits
          h1.poison();
          gemv::gemv_swiglu(p.int8, w.dev.get(), sp, x.get() + size_t(t) * p.K, h1.get(), 1, p.F,
                            p.K, eps, nullptr);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          EXPECT_EQ(kb::to_float(h1.download()), row) << "token " << t;
        }
      }
    }
}

// The one-token int8 SwiGLU in batches of one load (docs/decisions/0059),
// uncapped and capped, from a table entry as the decode step takes it: the
// same bits as batches of two with the same warps and K split. A bf16
// entry of unroll 1 is refused (the rule's choice runs).
TEST(GemvSwiglu, Int8BatchesOfOneLoadGiveTheSameBits) {
  KB_REQUIRE_GPU();
  struct Shape {
    int64_t F, K;
  };
  for (const Shape& p : {Shape{33, 272}, Shape{1100, 4112}, Shape{19, 12288}, Shape{2752, 4096}}) {
    SCOPED_TRACE("F=" + std::to_string(p.F) + " K=" + std::to_string(p.K));
    const float rk = 1.f / std::sqrt(float(p.K));
    const Weights w =
        make_weights(2 * p.F, p.K, true, 1300 + p.F, 1.7f * rk, 0.5f / 127 * rk, rk / 127);
    const auto x16 = kb::random_bf16(size_t(p.K), 1301 + p.F, -3.f, 3.f);
    kb::DeviceBuffer<bf16> scale(w.scale.size()), x(x16.size()), h(p.F);
    scale.upload(w.scale);
    x.upload(x16);
    auto entry = [&](const gemv::General& g, bool int8) {
      gemv::TableEntry e;
      e.bucket.int8 = int8;
      e.bucket.use = gemv::Use::swiglu;
      e.bucket.rows_min = e.bucket.rows_max = 2 * p.F;
      e.bucket.row_bytes_min = e.bucket.row_bytes_max = p.K * (int8 ? 1 : 2);
      e.kernel = g;
      return e;
    };
    auto run = [&](const gemv::General& g) {  // the kernel the step took, h
      gemv::set_table({entry(g, true)});
      const std::string took = name(gemv::decode_swiglu_config(true, p.F, p.K));
      h.poison();
      gemv::gemv_swiglu(true, w.dev.get(), scale.get(), x.get(), h.get(), 1, p.F, p.K, 1e-5f,
                        nullptr);
      const cudaError_t err = cudaDeviceSynchronize();
      gemv::set_table({});
      EXPECT_EQ(err, cudaSuccess);
      return std::make_pair(took, kb::to_float(h.download()));
    };
    const gemv::General two =
        *gemv::tokens_config(true, 2 * p.F, p.K, 1, true).get<gemv::General>();
    ASSERT_EQ(two.unroll, 2);
    const auto base = run(two);
    ASSERT_EQ(base.first, gemv::kernel_name(two));
    std::vector<float> ref(p.F);
    gemv::gemv_swiglu_ref(w.host.data(), w.scale_host.data(), kb::to_float(x16).data(), ref.data(),
                          p.F, p.K, 1e-5f);
    EXPECT_TRUE(kb::compare(base.second, ref, 1e-2).ok);
    for (int mb : {0, 7, 8}) {
      if (mb && two.warps > 4) continue;
      gemv::General one = two;
      one.unroll = 1;
      one.min_blocks = mb;
      const auto got = run(one);
      EXPECT_EQ(got.first, gemv::kernel_name(one));
      EXPECT_EQ(got.second, base.second) << gemv::kernel_name(one);
      gemv::set_table({entry(one, false)});
      EXPECT_NE(name(gemv::decode_swiglu_config(false, p.F, p.K)), gemv::kernel_name(one));
      gemv::set_table({});
    }
  }
}

// A gather over tokens (a MoE prefill): every (expert, token) pair that a
// token's ids chose against the single-expert references; every other row
// left as it was (poison), an expert nobody chose included; a token with
// an id outside [0, E) gets no row under that id (the other id still
// counts), and the launch reads nothing out of bounds. bf16 and int8, K
// split 1 and 4 (int8 K >= 12288: the SwiGLU's and the second gemv's), 1,
// 5 and 8 tokens. int8 with K a multiple of 64 runs on the tensor cores
// (K split 2 from 8192; rows past the last full tile: 200 gate/up pairs,
// whose down projection no int8 kernel takes, and 1040 rows), the rest on
// the general kernel.
TEST(GatherTokens, EachChosenExpertForItsTokensOnly) {
  KB_REQUIRE_GPU();
  struct Shape {
    int64_t F, K;  // SwiGLU: 2·F rows of K; the second gemv: K rows of F (a down projection)
    bool int8;
  };
  const int E = 4, top = 2;
  auto bits = [](bf16 v) {
    uint16_t u;
    std::memcpy(&u, &v, 2);
    return u;
  };
  for (const Shape& p : {Shape{40, 264, false}, Shape{528, 1040, true}, Shape{32, 12288, true},
                         Shape{12288, 64, true}, Shape{704, 256, true}, Shape{200, 320, true},
                         Shape{192, 1040, true}})
    for (int T : {1, 5, 8}) {
      SCOPED_TRACE(std::string(p.int8 ? "int8" : "bf16") + " F=" + std::to_string(p.F) +
                   " K=" + std::to_string(p.K) + " tokens=" + std::to_string(T));
      // Token t chooses (t % 3, 1 + (t % 2) * 2): expert 3 by odd tokens,
      // experts 0-2 by some; with 8 tokens token 6 brings an id of E and
      // token 7 one of -1 in its second slot.
      std::vector<int32_t> ids;
      for (int t = 0; t < T; ++t) {
        ids.push_back(t % 3);
        ids.push_back(t == 6 ? E : t == 7 ? -1 : 1 + (t % 2) * 2);
        if (ids.back() == ids[ids.size() - 2]) ids.back() = 3;  // distinct
      }
      auto chose = [&](int e, int t) {
        return ids[size_t(t) * top] == e || ids[size_t(t) * top + 1] == e;
      };
      const uint64_t seed = 1300 + p.F + p.K + T;
      const float rk = 1.f / std::sqrt(float(p.K)), rf = 1.f / std::sqrt(float(p.F));
      const Weights gu =
          make_weights(E * 2 * p.F, p.K, p.int8, seed, 1.7f * rk, 0.5f / 127 * rk, rk / 127);
      const Weights dn =
          make_weights(E * p.K, p.F, p.int8, seed + 5, 1.7f * rf, 0.5f / 127 * rf, rf / 127);
      const auto x16 = kb::random_bf16(size_t(T) * p.K, seed + 1, -3.f, 3.f);
      const auto hx16 = kb::random_bf16(size_t(E) * T * p.F, seed + 2, -2.f, 2.f);
      kb::DeviceBuffer<bf16> gs(gu.scale.size()), ds(dn.scale.size()), x(x16.size()),
          hx(hx16.size()), h(size_t(E) * T * p.F), y(size_t(E) * T * p.K);
      kb::DeviceBuffer<int32_t> d_ids(ids.size());
      if (p.int8) {
        gs.upload(gu.scale);
        ds.upload(dn.scale);
      }
      x.upload(x16);
      hx.upload(hx16);
      d_ids.upload(ids);
      h.poison();
      y.poison();
      const float eps = 1e-5f;
      gemv::gather_tokens_swiglu(p.int8, gu.dev.get(), p.int8 ? gs.get() : nullptr, d_ids.get(),
                                 top, E, x.get(), h.get(), T, p.F, p.K, eps, nullptr);
      // The second gemv's K is F: only where F is a whole number of vectors.
      const bool down = p.F % (p.int8 ? gemv::k_multiple_int8() : gemv::k_multiple_bf16()) == 0;
      if (down)
        gemv::gather_tokens_gemv(p.int8, dn.dev.get(), p.int8 ? ds.get() : nullptr, d_ids.get(),
                                 top, E, hx.get(), y.get(), T, p.K, p.F, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got_h = h.download();
      const auto got_y = y.download();
      const auto fx = kb::to_float(x16), fhx = kb::to_float(hx16);
      int chosen = 0;
      for (int e = 0; e < E; ++e)
        for (int t = 0; t < T; ++t) {
          const size_t oh = (size_t(e) * T + t) * p.F, oy = (size_t(e) * T + t) * p.K;
          if (!chose(e, t)) {  // left as it was: every byte 0xFF
            for (size_t i = oh; i < oh + p.F; ++i)
              ASSERT_EQ(bits(got_h[i]), 0xFFFF) << "h of expert " << e << " token " << t;
            for (size_t i = oy; i < oy + p.K; ++i)
              ASSERT_EQ(bits(got_y[i]), 0xFFFF) << "y of expert " << e << " token " << t;
            continue;
          }
          if (!down) {
            ++chosen;
            std::vector<float> ref_h(p.F);
            gemv::gemv_swiglu_ref(gu.host.data() + size_t(e) * 2 * p.F * p.K,
                                  p.int8 ? gu.scale_host.data() + size_t(e) * 2 * p.F : nullptr,
                                  fx.data() + size_t(t) * p.K, ref_h.data(), p.F, p.K, eps);
            const auto ch = kb::compare(
                kb::to_float(std::vector<bf16>(got_h.begin() + oh, got_h.begin() + oh + p.F)),
                ref_h, 1e-2);
            EXPECT_TRUE(ch.ok) << "h of expert " << e << " token " << t << ": " << ch.text();
            continue;
          }
          ++chosen;
          std::vector<float> ref_h(p.F), ref_y(p.K);
          gemv::gemv_swiglu_ref(gu.host.data() + size_t(e) * 2 * p.F * p.K,
                                p.int8 ? gu.scale_host.data() + size_t(e) * 2 * p.F : nullptr,
                                fx.data() + size_t(t) * p.K, ref_h.data(), p.F, p.K, eps);
          gemv::gemv_ref(dn.host.data() + size_t(e) * p.K * p.F,
                         p.int8 ? dn.scale_host.data() + size_t(e) * p.K : nullptr, fhx.data() + oh,
                         ref_y.data(), p.K, p.F);
          const auto gh =
              kb::to_float(std::vector<bf16>(got_h.begin() + oh, got_h.begin() + oh + p.F));
          const auto gy =
              kb::to_float(std::vector<bf16>(got_y.begin() + oy, got_y.begin() + oy + p.K));
          const auto ch = kb::compare(gh, ref_h, 1e-2), cy = kb::compare(gy, ref_y, 1e-2);
          EXPECT_TRUE(ch.ok) << "h of expert " << e << " token " << t << ": " << ch.text();
          EXPECT_TRUE(cy.ok) << "y of expert " << e << " token " << t << ": " << cy.text();
        }
      EXPECT_GE(chosen, T);  // every token's valid first id at least
    }
}

TEST(GatherGemv, EveryExpertIdBf16AndInt8) {
  KB_REQUIRE_GPU();
  for (bool int8 : {false, true}) {
    std::vector<int32_t> ids = {5, 0, 7, 3, 1, 6, 2, 4};  // all 8, out of order
    run_and_check(Problem{37, int8 ? 208 : 200, int8}, nullptr, false, 8, ids);
    run_and_check(Problem{64, 256, int8}, nullptr, false, 8, {3, 5});  // the seed's choice
    run_and_check(Problem{64, 256, int8}, nullptr, false, 8, {6, 6});  // the same expert twice
    gemv::Config ks =
        general(1, 2, 4, true, 4);  // k-split gather, N not a multiple of the block's rows
    run_and_check(Problem{37, int8 ? 2048 : 1024, int8}, &ks, false, 8, {2, 7, 0});
  }
}

// The one-load kernel (Config::one_load) at each row length it serves (32,
// 64 and 128 vectors: k_split 1, 2, 4) in blocks of 8 and 4 warps (8 to 1
// rows per block) with N not a multiple of the block's rows, plain, with
// the in-place residual, and gathered over every expert.
TEST(GemvOneLoad, EveryRowLengthMatchesReference) {
  KB_REQUIRE_GPU();
  for (bool int8 : {false, true})
    for (int vecs : {32, 64, 128})
      for (int64_t N : {int64_t{1}, int64_t{3}, int64_t{1001}}) {
        const int64_t K = vecs * (int8 ? 16 : 8);
        SCOPED_TRACE(std::string(int8 ? "int8" : "bf16") + " N=" + std::to_string(N) +
                     " K=" + std::to_string(K));
        gemv::Config c = named("one8");  // what the public entries run up to 4 MB
        run_and_check(Problem{N, K, int8}, &c, false);
        run_and_check(Problem{N, K, int8}, &c, true);
        run_and_check(Problem{N, K, int8}, &c, false, 8, {5, 0, 7, 3, 1, 6, 2, 4});
        c = named("one4");  // the other block size
        run_and_check(Problem{N, K, int8}, &c, true);
        run_and_check(Problem{N, K, int8}, &c, false, 8, {2, 6});
      }
}

// A bf16 gather of N×K over E experts with these ids (cfg: nullptr for the
// public entry); `out`: its outputs as floats.
void gather_with_ids(int64_t N, int64_t K, int E, const std::vector<int32_t>& ids,
                     const gemv::Config* cfg, std::vector<float>& out) {
  const int n_sel = static_cast<int>(ids.size());
  kb::DeviceBuffer<bf16> w(E * N * K), x(K), y(n_sel * N);
  w.upload(kb::random_bf16(E * N * K, 1));
  x.upload(kb::random_bf16(K, 2));
  y.poison();
  kb::DeviceBuffer<int32_t> d_ids(ids.size());
  d_ids.upload(ids);
  if (cfg)
    launch_with(false, w.get(), nullptr, d_ids.get(), n_sel, E, x.get(), y.get(), N, K, nullptr,
                *cfg, nullptr);
  else
    gemv::gather_gemv_bf16(w.get(), d_ids.get(), n_sel, E, x.get(), y.get(), N, K, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out = kb::to_float(y.download());
}

// The bulk-copy kernel (Config::bulk_stages) at each row length it serves
// (1, 2 and 4 vectors per thread, blocks of 8 and 16 warps), rings of 3, 4
// and 6 buffers (fewer, as many and more rows than buffers per block), 1 and 2
// blocks per SM, N of 1, 3 (fewer rows than SMs) and 1001, plain, with the
// in-place residual, and gathered over every expert, each with the three
// ways blocks take rows (Config::bulk_rows); and many rows per block.
gemv::Config bulk_config(int stages, int warps, int blocks_per_sm, int rows = 2, int rpb = 0) {
  return gemv::Bulk{stages, warps, blocks_per_sm, rows, rpb, false};
}
void expect_nan_rows_for_bad_ids_int8(const gemv::Config& c, int64_t K);  // below

TEST(GemvBulk, EveryRowLengthMatchesReference) {
  KB_REQUIRE_CC(9, 0);
  for (bool int8 : {false, true})
    for (int warps : {8, 16})
      for (int j : {1, 2, 4}) {
        const int64_t K = int64_t(j) * 32 * warps * (int8 ? 16 : 8);
        const int stages = 3;
        for (int64_t N : {int64_t{1}, int64_t{3}, int64_t{1001}}) {
          SCOPED_TRACE(std::string(int8 ? "int8" : "bf16") + " N=" + std::to_string(N) +
                       " K=" + std::to_string(K) + " warps=" + std::to_string(warps));
          for (int order : {0, 1, 2})
            for (int rs : {1, 2}) {  // 2 rows per buffer with N odd: a short last buffer
              if (rs * K * (int8 ? 1 : 2) * stages > (160 << 10)) continue;
              SCOPED_TRACE("rows " + std::to_string(order) + ", " + std::to_string(rs) +
                           " per buffer");
              const gemv::Config c = bulk_config(stages, warps, N == 1001 ? 2 : 1, order, rs);
              run_and_check(Problem{N, K, int8}, &c, false);
              run_and_check(Problem{N, K, int8}, &c, true);
            }
        }
        SCOPED_TRACE(std::string(int8 ? "int8" : "bf16") + " gather K=" + std::to_string(K));
        for (int order : {0, 1, 2}) {
          const gemv::Config c = bulk_config(3, warps, 1, order);  // N odd: one row per buffer
          run_and_check(Problem{37, K, int8}, &c, false, 8, {5, 0, 7, 3, 1, 6, 2, 4});
          run_and_check(Problem{300, K, int8}, &c, false, 8, {6, 6});
          if (K * (int8 ? 1 : 2) <= (16 << 10))  // two rows per buffer
            run_and_check(Problem{38, K, int8}, &c, false, 8, {5, 0, 7, 3, 1, 6, 2, 4});
        }
      }
}

// The bulk kernel with tensor-core consumers (Config::bulk_mma: int8, 2
// rows per buffer): each row length (1, 2, 4 vectors per thread, 8 and 16
// warps), rings of 3, N of 1, 1001 (a short last buffer) and 3000
// over 1 and 2 blocks per SM, plain, in place, the three row orders, and
// gathered over every expert; an id outside [0, E) writes NaN rows.
TEST(GemvBulk, TensorCoreConsumersMatchReference) {
  KB_REQUIRE_CC(9, 0);
  for (int warps : {8, 16})
    for (int j : {1, 2, 4}) {
      const int64_t K = int64_t(j) * 32 * warps * 16;
      if (K > (16 << 10)) continue;  // two rows per buffer: 32 KB
      for (int stages : {3}) {
        if (2 * K * stages > (160 << 10)) continue;
        for (int64_t N : {int64_t{1}, int64_t{1001}, int64_t{3000}}) {
          SCOPED_TRACE("N=" + std::to_string(N) + " K=" + std::to_string(K) +
                       " warps=" + std::to_string(warps) + " stages=" + std::to_string(stages));
          for (int order : {0, 1, 2}) {
            SCOPED_TRACE("rows " + std::to_string(order));
            gemv::Config c = bulk_config(stages, warps, N == 1 ? 1 : 2, order, 2);
            c.get<gemv::Bulk>()->mma = true;
            run_and_check(Problem{N, K, true}, &c, false);
            run_and_check(Problem{N, K, true}, &c, true);
          }
        }
        gemv::Config c = bulk_config(stages, warps, 1, 2, 2);
        c.get<gemv::Bulk>()->mma = true;
        SCOPED_TRACE("gather K=" + std::to_string(K));
        run_and_check(Problem{38, K, true}, &c, false, 8, {5, 0, 7, 3, 1, 6, 2, 4});
        run_and_check(Problem{300, K, true}, &c, false, 8, {6, 6});
      }
    }
  gemv::Config c = bulk_config(3, 8, 1, 2, 2);
  c.get<gemv::Bulk>()->mma = true;
  expect_nan_rows_for_bad_ids_int8(c, 4096);
}

// Many rows per block (over 500), and the dynamic counter used by many
// launches in a row (each must leave it at zero for the next).
TEST(GemvBulk, ManyRowsAndRepeatedLaunches) {
  KB_REQUIRE_CC(9, 0);
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  for (int order : {0, 1, 2}) {
    const gemv::Config c = bulk_config(3, 8, 1, order);
    run_and_check(Problem{int64_t(sms) * 512 + 1001, 2048, false}, &c, true);
  }
  for (int rep = 0; rep < 3; ++rep) {  // 1100 launches: every counter slot used at least once
    const int64_t N = 2000, K = 4096;
    kb::DeviceBuffer<int8_t> w(N * K);
    kb::DeviceBuffer<bf16> scale(N), x(K), y(N);
    kb::fill_int8(w.get(), N * K, 3, nullptr);
    kb::fill_bf16(scale.get(), N, 4, nullptr);
    kb::fill_bf16(x.get(), K, 5, nullptr);
    const gemv::Config c = bulk_config(3, 8, 2);
    launch_with(true, w.get(), scale.get(), nullptr, 1, 0, x.get(), y.get(), N, K, nullptr, c,
                nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto want = y.download();
    for (int k = 0; k < 1100 / 3; ++k) {
      y.poison();
      launch_with(true, w.get(), scale.get(), nullptr, 1, 0, x.get(), y.get(), N, K, nullptr, c,
                  nullptr);
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = y.download();
    ASSERT_EQ(0, std::memcmp(got.data(), want.data(), N * sizeof(bf16))) << "rep " << rep;
  }
}

TEST(GemvBulk, IdOutsideRangeWritesNan) {
  KB_REQUIRE_CC(9, 0);
  const int64_t N = 300, K = 2048;  // bf16, 8 warps: one vector per thread
  const int E = 4;
  const gemv::Config c = bulk_config(3, 8, 1);
  std::vector<float> out;
  ASSERT_NO_FATAL_FAILURE(gather_with_ids(N, K, E, {E, 2, -1}, &c, out));
  for (int64_t n = 0; n < 3 * N; ++n) EXPECT_EQ(std::isfinite(out[n]), n >= N && n < 2 * N) << n;
}

TEST(GemvOneLoad, IdOutsideRangeWritesNan) {
  KB_REQUIRE_GPU();
  const int64_t N = 6, K = 512;  // 64 vectors: two rows per block
  const int E = 4;
  gemv::Config c = gemv::default_config(false, N, K);
  ASSERT_EQ(family(c), "one_load");
  std::vector<float> out;
  ASSERT_NO_FATAL_FAILURE(gather_with_ids(N, K, E, {E, 2, -1}, &c, out));
  for (int64_t n = 0; n < 3 * N; ++n) EXPECT_EQ(std::isfinite(out[n]), n >= N && n < 2 * N) << n;
}

TEST(GatherGemv, IdOutsideRangeWritesNanAndReadsNothingElse) {
  KB_REQUIRE_GPU();
  const int64_t N = 40, K = 64;
  const int E = 4;
  std::vector<float> out;
  ASSERT_NO_FATAL_FAILURE(
      gather_with_ids(N, K, E, {1, E, -1}, nullptr, out));  // one good id, two bad ones
  for (int64_t n = 0; n < N; ++n) EXPECT_TRUE(std::isfinite(out[n])) << n;
  for (int64_t n = N; n < 3 * N; ++n) EXPECT_TRUE(std::isnan(out[n])) << n;
}

// A chain of `links` dependent D×D GEMVs (each x is the previous y), with x
// (and, in place, the residuals) rewritten by kernels just before the
// chain: captured into a graph of programmatic dependents (3 replays) and
// launched eagerly as such, it must equal the plain stream-ordered chain
// bit for bit. cfg == nullptr: the public entries, with one residual r for
// every link; else launch() with cfg and each y its own residual (in place).
void expect_dependent_chain_matches(bool int8, int64_t D, int links, uint64_t wseed,
                                    const gemv::Config* cfg, std::vector<uint64_t> xseeds) {
  std::vector<kb::DeviceBuffer<uint8_t>> w;
  kb::DeviceBuffer<bf16> scale(D), x0(D), r(D);
  std::vector<kb::DeviceBuffer<bf16>> y;
  for (int i = 0; i < links; ++i) {
    w.emplace_back(D * D * (int8 ? 1 : 2));
    y.emplace_back(D);
    if (int8)
      kb::fill_int8(reinterpret_cast<int8_t*>(w[i].get()), D * D, wseed + i, nullptr);
    else
      kb::fill_bf16(reinterpret_cast<bf16*>(w[i].get()), D * D, wseed + i, nullptr);
  }
  scale.upload(kb::random_bf16(D, 5, 0.001f, 0.003f));
  r.upload(kb::random_bf16(D, 6));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  auto chain = [&](bool pdl, uint64_t xseed) {
    kb::fill_bf16(x0.get(), D, xseed, s);  // written just before the first GEMV reads it
    if (cfg)
      for (int i = 0; i < links; ++i) kb::fill_bf16(y[i].get(), D, 30 + i, s);  // the residuals
    const bf16* x = x0.get();
    for (int i = 0; i < links; ++i) {
      if (cfg) {
        gemv::Config c = *cfg;
        c.pdl = pdl;
        launch_with(int8, w[i].get(), int8 ? scale.get() : nullptr, nullptr, 1, 0, x, y[i].get(), D,
                    D, y[i].get(), c, s);
      } else if (int8) {
        gemv::gemv_int8(reinterpret_cast<const int8_t*>(w[i].get()), scale.get(), x, y[i].get(), D,
                        D, s, r.get(), pdl);
      } else {
        gemv::gemv_bf16(reinterpret_cast<const bf16*>(w[i].get()), x, y[i].get(), D, D, s, r.get(),
                        pdl);
      }
      x = y[i].get();
    }
  };
  auto result = [&]() {
    std::vector<std::vector<bf16>> out;
    for (auto& b : y) out.push_back(b.download());
    return out;
  };
  for (uint64_t xseed : xseeds) {
    chain(false, xseed);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    const auto want = result();
    for (auto& b : y) b.poison();
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    chain(true, xseed);
    ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    for (int rep = 0; rep < 3; ++rep) ASSERT_EQ(cudaGraphLaunch(ge, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    const auto got = result();
    for (int i = 0; i < links; ++i)
      ASSERT_EQ(0, std::memcmp(got[i].data(), want[i].data(), D * sizeof(bf16)))
          << "graph, link " << i << ", x seed " << xseed;
    for (auto& b : y) b.poison();  // eager programmatic launches too
    chain(true, xseed);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    const auto eager = result();
    for (int i = 0; i < links; ++i)
      ASSERT_EQ(0, std::memcmp(eager[i].data(), want[i].data(), D * sizeof(bf16)))
          << "eager, link " << i << ", x seed " << xseed;
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
  }
  cudaStreamDestroy(s);
}

// The public entries' kernels. D = 4096: the bulk kernel (bf16) and the
// whole-tile kernel (int8); D = 1024: the one-load kernel.
TEST(GemvPdl, DependentChainInAGraphEqualsStreamOrder) {
  KB_REQUIRE_CC(9, 0);  // below it launches are not programmatic (pdl is ignored)
  for (int64_t D : {int64_t{4096}, int64_t{1024}})
    for (bool int8 : {false, true}) {
      SCOPED_TRACE(std::string(int8 ? "int8" : "bf16") + " D=" + std::to_string(D));
      ASSERT_EQ(family(gemv::default_config(int8, D, D)) == "one_load", D == 1024);
      expect_dependent_chain_matches(int8, D, 6, 100, nullptr, {1, 2, 3});
    }
}

// The int8 tensor-core kernels (the mma kernel with 2 and 3 batches in
// flight, the tile kernel in blocks of 8 warps), in place.
TEST(GemvPdl, TensorCoreKernelsChainEqualsStreamOrder) {
  KB_REQUIRE_CC(9, 0);  // below it launches are not programmatic (pdl is ignored)
  for (const char* n : {"M4W4K4", "M4W4K4D3"}) {
    SCOPED_TRACE(n);
    gemv::Config m = named(n);
    expect_dependent_chain_matches(true, 4096, 5, 300, &m, {7, 8});
  }
  for (const char* n : {"GM2W8K2", "GM2W8K2D3"}) {
    SCOPED_TRACE(n);
    gemv::Config m = named(n);
    expect_dependent_chain_matches(true, 4096, 5, 350, &m, {7, 8});
  }
  gemv::Config t = named("T8");
  SCOPED_TRACE("tile");
  expect_dependent_chain_matches(true, 4096, 5, 400, &t, {7, 8});
}

// The bulk kernel as a programmatic dependent (in place residuals): the
// three ways blocks take rows, int8 and bf16.
TEST(GemvBulk, DependentChainEqualsStreamOrder) {
  KB_REQUIRE_CC(9, 0);
  for (bool int8 : {false, true})
    for (int order : {0, 1, 2}) {
      SCOPED_TRACE(std::string(int8 ? "int8" : "bf16") + " rows " + std::to_string(order));
      const gemv::Config c = bulk_config(3, int8 ? 8 : 16, 1, order);
      expect_dependent_chain_matches(int8, 4096, 5, 200, &c, {7});
    }
  gemv::Config c = bulk_config(3, 8, 2, 2, 2);
  c.get<gemv::Bulk>()->mma = true;
  SCOPED_TRACE("tensor-core consumers");
  expect_dependent_chain_matches(true, 4096, 5, 250, &c, {7, 8});
}

// The public entries pick the bulk kernel where it measured faster only.
TEST(GemvBulk, PickedWhereItMeasuredFaster) {
  EXPECT_NE(family(gemv::default_config(false, 16384, 16384)), "bulk");
  EXPECT_NE(family(gemv::default_config(true, 1024, 16384, 8)), "bulk");  // int8: not yet
  EXPECT_EQ(family(gemv::default_config(true, 16384, 16384)), "bulk");    // tensor-core consumers
  EXPECT_EQ(name(gemv::default_config(true, 16384, 16384)).substr(0, 2), "BM");
  EXPECT_NE(family(gemv::default_config(true, 16384, 16384, 2)), "bulk");  // not gathers
  EXPECT_NE(family(gemv::default_config(true, 4096, 16384)), "bulk");      // nor 4096 rows
  EXPECT_EQ(family(gemv::default_config(true, 14336, 16384)), "bulk");
  EXPECT_NE(name(gemv::default_config(false, 4096, 4096)).substr(0, 2), "BM");
  EXPECT_EQ(family(gemv::default_config(false, 4096, 4096)), "bulk");
  EXPECT_NE(family(gemv::default_config(false, 4096, 4096, 2)), "bulk");  // gather_gemv D=4096
  EXPECT_NE(family(gemv::default_config(false, 12288, 4096)), "bulk");
  EXPECT_NE(family(gemv::default_config(false, 32000, 4096)), "bulk");
  EXPECT_NE(family(gemv::default_config(true, 4096, 4096)), "bulk");
  EXPECT_NE(family(gemv::default_config(false, 4096, 11008)), "bulk");
  EXPECT_NE(family(gemv::tokens_config(false, 4096, 4096, 4)), "bulk");        // several tokens
  EXPECT_NE(family(gemv::tokens_config(false, 4096, 4096, 1, true)), "bulk");  // SwiGLU
}

// ... and the int8 tensor-core kernels where they measured faster only:
// rows of 1024-4096 int8; one matrix: the whole-tile kernel up to 32 MB,
// the mma kernel's diagonal variant beyond; gathers of rows of 2-4 KB: the
// diagonal variant.
TEST(GemvMma, PickedWhereItMeasuredFaster) {
  EXPECT_EQ(family(gemv::default_config(true, 12288, 4096)), "mma");
  EXPECT_EQ(family(gemv::default_config(true, 22016, 4096)), "mma");
  EXPECT_EQ(family(gemv::default_config(true, 32000, 4096)), "mma");
  EXPECT_EQ(family(gemv::default_config(true, 14336, 1024)), "tile");  // 14 MB: the tile kernel
  EXPECT_EQ(family(gemv::default_config(true, 4096, 4096)), "tile");
  EXPECT_NE(family(gemv::default_config(true, 4096, 4096)), "mma");
  EXPECT_NE(family(gemv::default_config(true, 4096, 4096, 2)),
            "tile");  // gathers: not the tile kernel
  EXPECT_NE(family(gemv::default_config(true, 12288, 4096)), "tile");  // 48 MB
  EXPECT_NE(family(gemv::default_config(true, 1024, 1024)), "tile");   // the one-load kernel
  EXPECT_EQ(family(gemv::default_config(true, 1024, 1024)), "one_load");
  EXPECT_NE(family(gemv::default_config(false, 4096, 4096)), "tile");  // bf16
  EXPECT_NE(family(gemv::tokens_config(true, 4096, 4096, 1)), "tile");
  EXPECT_NE(family(gemv::default_config(true, 16384, 16384)), "mma");
  EXPECT_NE(family(gemv::default_config(true, 4096, 11008)), "mma");
  EXPECT_EQ(name(gemv::default_config(true, 12288, 4096)).substr(0, 2), "GM");
  EXPECT_EQ(name(gemv::default_config(true, 4096, 4096, 2)).substr(0, 2),
            "GM");                                                      // gathers at D = 4096
  EXPECT_NE(family(gemv::default_config(true, 1024, 1024, 2)), "mma");  // the one-load kernel
  EXPECT_NE(family(gemv::default_config(true, 8192, 8192, 2)), "mma");  // rows of 8 KB
  EXPECT_NE(family(gemv::default_config(false, 12288, 4096)), "mma");   // bf16
  EXPECT_NE(family(gemv::tokens_config(true, 12288, 4096, 1)), "mma");
  EXPECT_NE(family(gemv::tokens_config(true, 12288, 4096, 4)), "mma");
}

// An int8 gather of 40 rows of K over 4 experts with ids {4, 2, -1} and
// config c: the middle slot's rows finite, the two bad ids' rows NaN.
void expect_nan_rows_for_bad_ids_int8(const gemv::Config& c, int64_t K) {
  SCOPED_TRACE("K=" + std::to_string(K));
  const int64_t N = 40, E = 4;
  kb::DeviceBuffer<int8_t> w(E * N * K);
  kb::DeviceBuffer<bf16> scale(E * N), x(K), y(3 * N);
  kb::DeviceBuffer<int32_t> ids(3);
  kb::fill_int8(w.get(), E * N * K, 3, nullptr);
  kb::fill_bf16(scale.get(), E * N, 4, nullptr);
  kb::fill_bf16(x.get(), K, 5, nullptr);
  ids.upload(std::vector<int32_t>{int32_t(E), 2, -1});
  y.poison();
  launch_with(true, w.get(), scale.get(), ids.get(), 3, E, x.get(), y.get(), N, K, nullptr, c,
              nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = kb::to_float(y.download());
  for (int64_t n = 0; n < 3 * N; ++n) EXPECT_EQ(std::isfinite(out[n]), n >= N && n < 2 * N) << n;
}

// The tensor-core int8 kernel (Config::mma, and its diagonal variant):
// every unroll, block size and K split on shapes that are no multiple of
// its 16-row tile or 64-byte unit (512 bytes: diagonal; K of 1 to 1024
// vectors), plain, with the in-place residual, and gathered over every
// expert; an id outside [0, E) writes NaN rows.
TEST(GemvMma, EveryConfigMatchesReference) {
  KB_REQUIRE_CC(8, 0);
  const std::pair<int, int> blocks[] = {{1, 1}, {4, 1}, {4, 2}, {4, 4}, {8, 2}, {8, 8}};
  for (const Problem& p : {Problem{1, 16, true}, Problem{3, 48, true}, Problem{33, 272, true},
                           Problem{129, 4112, true}, Problem{67, 11008, true},
                           Problem{1000, 1024, true}, Problem{21, 16384, true}})
    for (bool diag : {false, true})
      for (int u : {1, 2, 4, 8})
        for (const auto& [warps, ks] : blocks) {
          if ((diag && u == 8) || (!diag && u == 1)) continue;  // not built
          SCOPED_TRACE("N=" + std::to_string(p.N) + " K=" + std::to_string(p.K) +
                       " U=" + std::to_string(u) + " W=" + std::to_string(warps) +
                       " KS=" + std::to_string(ks) + (diag ? " diag" : ""));
          gemv::Config c = gemv::Mma{u, warps, ks, 2, diag};
          run_and_check(p, &c, false);
          run_and_check(p, &c, true);
          if (p.N <= 129) run_and_check(p, &c, false, 8, {5, 0, 7, 3, 1, 6, 2, 4});
        }
  for (bool diag : {false, true}) {
    gemv::Config c = gemv::Mma{2, 8, 2, 2, diag};
    for (int64_t K : {int64_t{16}, int64_t{4096}}) expect_nan_rows_for_bad_ids_int8(c, K);
  }
}

// The whole-tile int8 kernel (Config::tile): blocks of 4 and 8 warps, rows
// no multiple of its 16-row tile, K of 1 to 512 vectors (to its 8192-byte
// limit, units not whole), plain, in place, gathered over every expert; an
// id outside [0, E) writes NaN rows.
TEST(GemvTile, EveryShapeMatchesReference) {
  KB_REQUIRE_CC(9, 0);
  for (const Problem& p : {Problem{1, 16, true}, Problem{3, 48, true}, Problem{33, 272, true},
                           Problem{129, 4112, true}, Problem{1000, 1024, true},
                           Problem{4099, 4096, true}, Problem{21, 8192, true}})
    for (int warps : {4, 8}) {
      SCOPED_TRACE("N=" + std::to_string(p.N) + " K=" + std::to_string(p.K) +
                   " W=" + std::to_string(warps));
      gemv::Config c = gemv::Tile{warps};
      run_and_check(p, &c, false);
      run_and_check(p, &c, true);
      if (p.N <= 129) run_and_check(p, &c, false, 8, {5, 0, 7, 3, 1, 6, 2, 4});
    }
  gemv::Config c = named("T8");
  expect_nan_rows_for_bad_ids_int8(c, 4096);
}

// x enters the tensor cores as f16 (mma and tile kernels), scaled by a
// power of two chosen from its largest magnitude: x·2^s gives y·2^s bit for
// bit, for s far outside f16's range either way (values near 2^±100, where
// an unscaled f16 would be inf or 0), and the result matches the reference
// there too.
// One config at K (N = 77): x·2^s against x, and x against the reference.
void expect_scale_free(const gemv::Config& c, int64_t K) {
  const int64_t N = 77;
  kb::DeviceBuffer<int8_t> w(N * K);
  kb::DeviceBuffer<bf16> scale(N), x(K), y(N);
  const auto w8 = kb::random_int8(N * K, 11);
  KB_CUDA_CHECK(cudaMemcpy(w.get(), w8.data(), N * K, cudaMemcpyHostToDevice));
  const auto sc = kb::random_bf16(N, 12, 0.001f, 0.01f);
  scale.upload(sc);
  const auto x16 = kb::random_bf16(K, 13);
  auto run = [&](int s) {
    std::vector<bf16> xs(K);
    for (int64_t k = 0; k < K; ++k)
      xs[k] = kb::float_to_bf16(std::ldexp(kb::bf16_to_float(x16[k]), s));
    x.upload(xs);
    y.poison();
    launch_with(true, w.get(), scale.get(), nullptr, 1, 0, x.get(), y.get(), N, K, nullptr, c,
                nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return kb::to_float(y.download());
  };
  const auto base = run(0);
  std::vector<float> wf(w8.begin(), w8.end()), xf = kb::to_float(x16), sf = kb::to_float(sc),
                                               ref(N);
  gemv::gemv_ref(wf.data(), sf.data(), xf.data(), ref.data(), N, K);
  for (int64_t n = 0; n < N; ++n) ASSERT_NEAR(base[n], ref[n], std::fabs(ref[n]) / 64 + 1e-3) << n;
  for (int s : {-100, -60, 30, 100}) {
    const auto got = run(s);
    for (int64_t n = 0; n < N; ++n) {
      ASSERT_TRUE(std::isfinite(got[n])) << "s=" << s << " n=" << n;
      ASSERT_EQ(got[n], std::ldexp(base[n], s)) << "s=" << s << " n=" << n;
    }
  }
}

TEST(GemvMma, ScaleOfXDoesNotMatter) {
  KB_REQUIRE_CC(8, 0);
  for (bool diag : {false, true}) {  // K of partial units
    SCOPED_TRACE(diag ? "mma diagonal" : "mma kernel");
    gemv::Config c = gemv::Mma{4, 8, 2, 2, diag};
    expect_scale_free(c, 4096 + 48);
  }
}

TEST(GemvTile, ScaleOfXDoesNotMatter) {
  KB_REQUIRE_CC(9, 0);
  gemv::Config c = named("T8");
  expect_scale_free(c, 4096 + 48);  // K of partial units
}

TEST(GemvBulk, ScaleOfXDoesNotMatter) {
  KB_REQUIRE_CC(9, 0);
  gemv::Config c = bulk_config(3, 8, 1, 2, 2);  // tensor-core consumers
  c.get<gemv::Bulk>()->mma = true;
  expect_scale_free(c, 4096);  // K: whole vectors per thread
}

// The blocks each kernel launches (what a timeline sizes its lines by; no
// GPU needed but for the bulk kernel's): one per 16-row tile, per 2
// rows (diagonal) or per row group, times the experts selected.
TEST(GemvGrid, BlocksOfEachKernel) {
  gemv::Config tile = named("T4");
  EXPECT_EQ(gemv::grid_blocks(true, 4096, 4096, tile), 256);
  EXPECT_EQ(gemv::grid_blocks(true, 4099, 4096, tile), 257);
  gemv::Config diag = named("GM4W4K1");
  EXPECT_EQ(gemv::grid_blocks(true, 12288, 4096, diag), 1536);  // 6144 row pairs, 4 per block
  EXPECT_EQ(gemv::grid_blocks(true, 12289, 4096, diag), 1537);
  EXPECT_EQ(gemv::grid_blocks(true, 4096, 4096, diag, 2, true), 2 * 512);
  gemv::Config mma = named("M4W8K2");
  EXPECT_EQ(gemv::grid_blocks(true, 4096, 4096, mma), 64);  // 256 tiles, 4 per block
  gemv::Config one = gemv::default_config(true, 1024, 1024);
  ASSERT_EQ(family(one), "one_load");
  EXPECT_EQ(gemv::grid_blocks(true, 1024, 1024, one), 256);  // 64 vectors: 2 warps per row, 4 rows
  const gemv::Config gen = named("R2U1W4P1K2");
  EXPECT_EQ(gemv::grid_blocks(true, 4096, 4096, gen), 1024);  // 2048 row pairs, 2 per block
  EXPECT_EQ(gemv::grid_blocks(false, 4095, 4096, gen), 1024);
}

// ---- refused before launch: no GPU needed ----

const auto* kW = reinterpret_cast<const bf16*>(uintptr_t{0x10000});
const auto* kW8 = reinterpret_cast<const int8_t*>(uintptr_t{0x10000});
const auto* kX = reinterpret_cast<const bf16*>(uintptr_t{0x20000});
auto* kY = reinterpret_cast<bf16*>(uintptr_t{0x30000});
const auto* kS = reinterpret_cast<const bf16*>(uintptr_t{0x40000});
const auto* kIds = reinterpret_cast<const int32_t*>(uintptr_t{0x50000});

template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GemvRefuses, KNotAMultipleOfTheVectorWidth) {
  EXPECT_NE(refusal([] { gemv::gemv_bf16(kW, kX, kY, 16, 12, nullptr); }).find("multiple of 8"),
            std::string::npos);
  EXPECT_NE(
      refusal([] { gemv::gemv_int8(kW8, kS, kX, kY, 16, 24, nullptr); }).find("multiple of 16"),
      std::string::npos);
  EXPECT_NE(refusal([] {
              gemv::gather_gemv_int8(kW8, kS, kIds, 2, 8, kX, kY, 16, 8, nullptr);
            }).find("multiple of 16"),
            std::string::npos);
}

TEST(GemvRefuses, EmptyShapesNullAndMisalignedPointers) {
  EXPECT_FALSE(refusal([] { gemv::gemv_bf16(kW, kX, kY, 0, 16, nullptr); }).empty());
  EXPECT_FALSE(refusal([] { gemv::gemv_bf16(kW, kX, kY, 16, -8, nullptr); }).empty());
  EXPECT_FALSE(refusal([] { gemv::gemv_bf16(nullptr, kX, kY, 16, 16, nullptr); }).empty());
  EXPECT_FALSE(refusal([] { gemv::gemv_int8(kW8, nullptr, kX, kY, 16, 16, nullptr); }).empty());
  EXPECT_NE(refusal([] { gemv::gemv_bf16(kW + 1, kX, kY, 16, 16, nullptr); }).find("aligned"),
            std::string::npos);
}

TEST(GemvRefuses, BadExpertCountsAndIds) {
  EXPECT_FALSE(
      refusal([] { gemv::gather_gemv_bf16(kW, kIds, 0, 8, kX, kY, 16, 16, nullptr); }).empty());
  EXPECT_FALSE(
      refusal([] { gemv::gather_gemv_bf16(kW, kIds, 2, 0, kX, kY, 16, 16, nullptr); }).empty());
  EXPECT_FALSE(
      refusal([] { gemv::gather_gemv_bf16(kW, nullptr, 2, 8, kX, kY, 16, 16, nullptr); }).empty());
  EXPECT_NE(refusal([] {
              gemv::check_experts({3, 8}, 8);
            }).find("expert id 8 at position 1"),
            std::string::npos);
  EXPECT_FALSE(refusal([] { gemv::check_experts({-1}, 8); }).empty());
  EXPECT_FALSE(refusal([] { gemv::check_experts({}, 8); }).empty());
  EXPECT_TRUE(refusal([] { gemv::check_experts({0, 7}, 8); }).empty());
}

TEST(GemvRefuses, BadConfig) {
  gemv::Config c = gemv::General{3, 2, 4, false, 1};
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 16, nullptr, c,
                             nullptr);
               }).empty());
  c = gemv::General{1, 8, 4, false, 1};  // one token at unroll 8: not compiled
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 16, nullptr, c,
                             nullptr);
               }).empty());
  c = gemv::General{1, 5, 4, false, 1};  // unroll 5
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 16, nullptr, c,
                             nullptr);
               }).empty());
  c = gemv::General{1, 2, 9, false, 1};
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 16, nullptr, c,
                             nullptr);
               }).empty());
  c = gemv::General{1, 2, 4, false, 3};  // k_split not a power of two
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 16, nullptr, c,
                             nullptr);
               }).empty());
  c = gemv::General{1, 2, 2, false, 4};  // k_split does not divide the warps
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 16, nullptr, c,
                             nullptr);
               }).empty());
}

TEST(GemvRefuses, OneLoadOutsideItsShapes) {
  gemv::Config c = gemv::default_config(false, 16, 1024);
  ASSERT_EQ(family(c), "one_load");
  // 16 vectors per row (K = 128), 256 (K = 2048): not 32, 64 or 128.
  for (int64_t K : {128, 2048})
    EXPECT_NE(refusal([&] {
                launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, K, nullptr, c, nullptr);
              }).find("one_load"),
              std::string::npos)
        << K;
  EXPECT_NE(refusal([&] {
              launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 1024, nullptr, c, nullptr,
                          2);
            }).find("one_load"),
            std::string::npos);
  EXPECT_NE(family(gemv::default_config(false, 16, 2048)), "one_load");
  EXPECT_NE(family(gemv::default_config(false, 14336, 1024)),
            "one_load");  // 28 MB: the general kernel
  EXPECT_EQ(family(gemv::default_config(false, 1024, 1024)), "one_load");  // 2 MB
  EXPECT_EQ(family(gemv::default_config(true, 1024, 1024, 2)),
            "one_load");  // an int8 gather of 2 MB
  EXPECT_EQ(family(gemv::default_config(false, 1024, 1024, 2)),
            "one_load");  // a bf16 gather of 4 MB
  EXPECT_NE(family(gemv::default_config(false, 2048, 1024, 2)), "one_load");  // 8 MB
  EXPECT_NE(family(gemv::tokens_config(false, 16, 1024, 1, true)), "one_load");
  EXPECT_NE(family(gemv::tokens_config(false, 16, 1024, 4)), "one_load");
}

TEST(GemvRefuses, BulkOutsideItsShapes) {
  const auto refused = [](int64_t K, gemv::Config c, int tokens = 1) {
    return refusal([&] {
             launch_with(true, kW8, kS, nullptr, 1, 0, kX, kY, 16, K, nullptr, c, nullptr, tokens);
           }).find("bulk") != std::string::npos;
  };
  EXPECT_TRUE(refused(4096 + 16, bulk_config(3, 8, 1)));     // 257 vectors: not whole per thread
  EXPECT_TRUE(refused(3 * 4096, bulk_config(3, 8, 1)));      // 3 vectors per thread
  EXPECT_TRUE(refused(8192, bulk_config(3, 4, 1)));          // 4 warps
  EXPECT_TRUE(refused(8192, bulk_config(2, 8, 1)));          // 2 stages
  EXPECT_TRUE(refused(8192, bulk_config(4, 8, 1)));          // 4 stages: not compiled
  EXPECT_TRUE(refused(8192, bulk_config(3, 8, 0)));          // 0 blocks per SM
  EXPECT_TRUE(refused(32768, bulk_config(3, 16, 1, 2, 2)));  // 3 × 2 × 32 KB of ring
  EXPECT_TRUE(refused(8192, bulk_config(3, 8, 1), 2));       // two tokens
  EXPECT_TRUE(refused(8192, bulk_config(3, 8, 1, 3)));       // rows taken in no known order
  EXPECT_TRUE(refused(8192, bulk_config(3, 8, 1, 2, 3)));    // 3 rows per buffer
  gemv::Config m = bulk_config(3, 8, 1, 2, 1);
  m.get<gemv::Bulk>()->mma = true;
  EXPECT_TRUE(refused(4096, m));  // tensor-core consumers: 2 rows per buffer only
  m.get<gemv::Bulk>()->rows_per_buffer = 2;
  EXPECT_NE(refusal([&] {  // and int8 weights only
              launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 2048, nullptr, m, nullptr);
            })
                .find("bulk_mma"),
            std::string::npos);
  EXPECT_NE(refusal([] {  // 2 rows per buffer would straddle two experts (N odd)
              launch_with(true, kW8, kS, kIds, 2, 8, kX, kY, 15, 4096, nullptr,
                          bulk_config(3, 8, 1, 2, 2), nullptr);
            })
                .find("bulk"),
            std::string::npos);
}

// Whether a 16-row gemv (int8 or bf16, K, tokens) with config c is refused
// with a message naming `word`.
bool refused_naming(const gemv::Config& c, const std::string& word, bool int8, int64_t K,
                    int tokens = 1) {
  return refusal([&] {
           launch_with(int8, int8 ? static_cast<const void*>(kW8) : kW, int8 ? kS : nullptr,
                       nullptr, 1, 0, kX, kY, 16, K, nullptr, c, nullptr, tokens);
         }).find(word) != std::string::npos;
}

TEST(GemvRefuses, MmaOutsideItsShapes) {
  gemv::Config c = named("M2W8K2");
  const auto refused = [&](bool int8, int64_t K, int tokens = 1) {
    return refused_naming(c, "mma", int8, K, tokens);
  };
  EXPECT_TRUE(refused(false, 4096));       // bf16 weights
  EXPECT_TRUE(refused(true, 4096, 2));     // two tokens
  EXPECT_TRUE(refused(true, 49152 + 16));  // x beyond 96 KB of shared memory
  c = gemv::Mma{8, 8, 2, 2, true};
  EXPECT_TRUE(refused(true, 4096));  // diagonal: unroll 1, 2 or 4
  c = gemv::Mma{4, 8, 2, 3, true};
  EXPECT_TRUE(refused(true, 4096));  // diagonal: 3 batches at unroll 2 only
  c = gemv::Mma{3, 8, 2, 2, false};
  EXPECT_FALSE(refusal([&] {
                 launch_with(true, kW8, kS, nullptr, 1, 0, kX, kY, 16, 4096, nullptr, c, nullptr);
               }).empty());
  c = gemv::Mma{2, 8, 16, 2, false};
  EXPECT_FALSE(refusal([&] {
                 launch_with(true, kW8, kS, nullptr, 1, 0, kX, kY, 16, 4096, nullptr, c, nullptr);
               }).empty());
}

TEST(GemvRefuses, TileOutsideItsShapes) {
  gemv::Config c = named("T8");
  const auto refused = [&](bool int8, int64_t K, int tokens = 1) {
    return refused_naming(c, "tile", int8, K, tokens);
  };
  EXPECT_TRUE(refused(false, 4096));      // bf16 weights
  EXPECT_TRUE(refused(true, 4096, 2));    // two tokens
  EXPECT_TRUE(refused(true, 8192 + 16));  // rows over 8 KB
  c = gemv::Tile{2};
  EXPECT_TRUE(refused(true, 4096));
}

// A gather over tokens refuses, before any CUDA call: null ids, top
// outside [1, E], no experts, too many tokens, a K off the vector width.
TEST(GemvRefuses, GatherTokensBadArguments) {
  auto swiglu = [](const int32_t* ids, int top, int E, int tokens, int64_t K) {
    return refusal([&] {
      gemv::gather_tokens_swiglu(true, kW8, kS, ids, top, E, kX, kY, tokens, 16, K, 1e-5f, nullptr);
    });
  };
  auto down = [](const int32_t* ids, int top, int E, int tokens) {
    return refusal([&] {
      gemv::gather_tokens_gemv(false, kW, nullptr, ids, top, E, kX, kY, tokens, 16, 16, nullptr);
    });
  };
  EXPECT_NE(swiglu(nullptr, 2, 8, 4, 64).find("null ids"), std::string::npos);
  EXPECT_NE(down(nullptr, 2, 8, 4).find("null ids"), std::string::npos);
  EXPECT_NE(swiglu(kIds, 0, 8, 4, 64).find("top"), std::string::npos);
  EXPECT_NE(down(kIds, 9, 8, 4).find("top"), std::string::npos);
  EXPECT_NE(down(kIds, 2, 0, 4).find("top"), std::string::npos);
  EXPECT_NE(swiglu(kIds, 2, 8, gemv::kMaxTokens + 1, 64).find("tokens must be in"),
            std::string::npos);
  EXPECT_NE(down(kIds, 2, 8, 0).find("tokens must be in"), std::string::npos);
  EXPECT_NE(swiglu(kIds, 2, 8, 4, 40).find("multiple of 16"), std::string::npos);
}

// A SwiGLU's F below 1 or past what 2·F can hold is refused before 2·F is
// formed (a wrapped product could pass every later check).
TEST(GemvRefuses, SwigluFOutOfRange) {
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2 + 1;
  for (int64_t F : {int64_t(0), int64_t(-3), huge}) {
    SCOPED_TRACE("F=" + std::to_string(F));
    EXPECT_NE(refusal([&] {
                gemv::gemv_swiglu(true, kW8, kS, kX, kY, 1, F, 64, 1e-5f, nullptr);
              }).find("out of range"),
              std::string::npos);
    EXPECT_NE(refusal([&] {
                gemv::gather_gemv_swiglu(true, kW8, kS, kIds, 2, 8, kX, kY, F, 64, 1e-5f, nullptr);
              }).find("out of range"),
              std::string::npos);
    EXPECT_NE(refusal([&] {
                gemv::gather_tokens_swiglu(true, kW8, kS, kIds, 2, 8, kX, kY, 4, F, 64, 1e-5f,
                                           nullptr);
              }).find("out of range"),
              std::string::npos);
  }
}

TEST(GemvRefuses, BadTokenCounts) {
  for (int t : {0, -1, gemv::kMaxTokens + 1})
    EXPECT_NE(refusal([&] {
                gemv::gemv_tokens(false, kW, nullptr, kX, kY, t, 16, 16, nullptr);
              }).find("tokens must be in"),
              std::string::npos)
        << t;
  // Several tokens: only R1/R2 U2 pipelined kernels, never a gather.
  gemv::Config c = gemv::General{4, 2, 4, true, 1};
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, nullptr, 1, 0, kX, kY, 16, 16, nullptr, c, nullptr,
                             2);
               }).empty());
  c = gemv::General{1, 2, 4, true, 1};
  EXPECT_FALSE(refusal([&] {
                 launch_with(false, kW, nullptr, kIds, 2, 8, kX, kY, 16, 16, nullptr, c, nullptr,
                             2);
               }).empty());
}

}  // namespace

namespace {

// Every table's choices, and the generic rule's: the public entries under
// the installed table (as a suite run installs it), and each bucket's
// kernel at shapes of its bucket, against the reference.
class GemvTables : public ::testing::TestWithParam<std::string> {
 protected:
  std::vector<gemv::TableEntry> table() const {
    if (GetParam() == "generic") return {};
    const std::string path = std::string(KBENCH_SOURCE_DIR) + "/targets/tuning/" + GetParam();
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    const auto f = kb::parse_tuning_file(ss.str(), path);
    std::string warning;
    auto t = kb::load_gemv_table(path, f.gpu, &warning);
    EXPECT_EQ(warning, "");
    return t;
  }
  void TearDown() override { gemv::set_table({}); }
};

TEST_P(GemvTables, PublicEntriesAndEveryBucketMatchReference) {
  KB_REQUIRE_GPU();
  const auto t = table();
  gemv::set_table(t);
  for (bool int8 : {false, true}) {
    for (const auto& [N, K] : {std::pair<int64_t, int64_t>{1024, 1024},
                               {4096, 4096},
                               {1000, 4096},
                               {14336, 1024},
                               {12288, 4096},
                               {1024, 14336}}) {
      SCOPED_TRACE(name(gemv::default_config(int8, N, K)));
      run_and_check(Problem{N, K, int8}, nullptr, false);
      run_and_check(Problem{N, K, int8}, nullptr, true);
    }
    SCOPED_TRACE("gathers");
    run_and_check(Problem{4096, 4096, int8}, nullptr, false, 8, {3, 5});
    run_and_check(Problem{1024, 1024, int8}, nullptr, false, 8, {3, 5});
  }
  // Each bucket at its smallest shape and at 1.5 times its rows (within bounds).
  for (const auto& e : t) {
    const int64_t K = e.bucket.row_bytes_min / (e.bucket.int8 ? 1 : 2);
    for (int64_t N : {e.bucket.rows_min, std::min(e.bucket.rows_max, e.bucket.rows_min * 3 / 2)}) {
      if (N < 16) N = std::min<int64_t>(e.bucket.rows_max, 16);
      const int n_sel = e.bucket.gather ? 2 : 1;
      if (e.bucket.max_bytes && n_sel * N * e.bucket.row_bytes_min > e.bucket.max_bytes) continue;
      const gemv::Choice c = gemv::choose_in(t, e.bucket.int8, N, K, n_sel);
      SCOPED_TRACE(e.origin + " at N=" + std::to_string(N) + ": " + name(c.config) + " (" +
                   c.source + ")");
      if (e.bucket.gather)
        run_and_check(Problem{N, K, e.bucket.int8}, &c.config, false, 8, {6, 1});
      else
        run_and_check(Problem{N, K, e.bucket.int8}, &c.config, false);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, GemvTables, ::testing::Values("generic", "h100-sxm5-80gb.json"),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
