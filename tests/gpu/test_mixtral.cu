// Mixtral's mixture-of-experts decode: the gather kernels it adds
// (gather_gemv_swiglu, gather_gemv_combine) against their references, the
// router kernel, the tiny MoE model and one full-size Mixtral layer against
// the CPU fp32 reference, and the checks failing on a wrong routing and on
// an expert id out of range. Byte counts run without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <tuple>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/decode/decode_check.h"
#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/decoder.h"
#include "kernels/decode/moe_routing.h"
#include "kernels/gemv/gemv.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

namespace dec = kb::decode;
using kb::bf16;

// ------------------------------------------------------------ no GPU needed

TEST(MixtralConfig, ActiveBytesMatchTheAnchor) {
  dec::ModelConfig c = dec::find_config("Mixtral-8x7B-v0.1");
  EXPECT_EQ(dec::unsupported_reason(c), "");
  c.n_layers = 16;
  // gpt-fast's figure for the seed's 16 layers: 6.44 GB active of int8
  // (200.4 tok/s <-> 1291 GB/s), all eight experts 23.4 GB.
  EXPECT_NEAR(dec::active_weight_bytes(c, dec::WeightType::int8) / 1e9, 6.44, 0.01);
  EXPECT_NEAR(dec::weight_bytes(c, dec::WeightType::int8).seed_model_size() / 1e9, 23.36, 0.01);
  c.n_layers = 32;
  // The whole model: 46.57 GB of int8 linear weights, about 47 GB on the GPU.
  EXPECT_NEAR(dec::weight_bytes(c, dec::WeightType::int8).linear / 1e9, 46.57, 0.01);
  EXPECT_LT(double(dec::Decoder::device_bytes(c, dec::WeightType::int8, 256)), 47.5e9);
  // A dense model: the active bytes are the seed's model size.
  const auto& l = dec::find_config("Llama-2-7b-chat-hf");
  EXPECT_DOUBLE_EQ(dec::active_weight_bytes(l, dec::WeightType::int8),
                   dec::weight_bytes(l, dec::WeightType::int8).seed_model_size());
  EXPECT_EQ(dec::Decoder::kernels_per_step(c), 6 * 32 + 3);
}

// ------------------------------------------------------------ kernels

std::vector<float> dequant(const std::vector<int8_t>& q, const std::vector<float>& sc, int64_t K) {
  std::vector<float> w(q.size());
  for (size_t i = 0; i < q.size(); ++i) w[i] = sc[i / K] * q[i];
  return w;
}

struct MoeData {
  int E, F, D;
  std::vector<int8_t> w13, w2;  // [E, 2F, D], [E, D, F]
  std::vector<float> s13, s2;   // bf16-rounded scales
  std::vector<float> x;         // [D], bf16-rounded
  kb::DeviceBuffer<int8_t> d_w13, d_w2;
  kb::DeviceBuffer<bf16> d_s13, d_s2, d_x;
  MoeData(int e, int f, int d) : E(e), F(f), D(d) {
    uint32_t h = 12345;
    auto next = [&] {
      h = h * 1664525u + 1013904223u;
      return h >> 8;
    };
    auto fill_q = [&](std::vector<int8_t>& v, size_t n) {
      v.resize(n);
      for (auto& q : v) q = static_cast<int8_t>(int(next() % 255) - 127);
    };
    auto fill_s = [&](std::vector<float>& v, size_t n, int k) {
      v.resize(n);
      for (auto& s : v)
        s = kb::bf16_to_float(
            kb::float_to_bf16((0.5f + (next() % 1000) / 2000.f) / (127.f * std::sqrt(float(k)))));
    };
    fill_q(w13, size_t(E) * 2 * F * D);
    fill_q(w2, size_t(E) * D * F);
    fill_s(s13, size_t(E) * 2 * F, D);
    fill_s(s2, size_t(E) * D, F);
    x.resize(D);
    for (auto& v : x) v = kb::bf16_to_float(kb::float_to_bf16((next() % 2000) / 1000.f - 1.f));
    d_w13 = kb::DeviceBuffer<int8_t>(w13.size());
    d_w2 = kb::DeviceBuffer<int8_t>(w2.size());
    d_s13 = kb::DeviceBuffer<bf16>(s13.size());
    d_s2 = kb::DeviceBuffer<bf16>(s2.size());
    d_x = kb::DeviceBuffer<bf16>(x.size());
    KB_CUDA_CHECK(cudaMemcpy(d_w13.get(), w13.data(), w13.size(), cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemcpy(d_w2.get(), w2.data(), w2.size(), cudaMemcpyHostToDevice));
    auto up = [](kb::DeviceBuffer<bf16>& d, const std::vector<float>& v) {
      const std::vector<bf16> b = kb::to_bf16(v);
      KB_CUDA_CHECK(cudaMemcpy(d.get(), b.data(), b.size() * 2, cudaMemcpyHostToDevice));
    };
    up(d_s13, s13);
    up(d_s2, s2);
    up(d_x, x);
  }
};

std::vector<float> download(const kb::DeviceBuffer<bf16>& d, size_t n) {
  std::vector<bf16> h(n);
  KB_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), n * 2, cudaMemcpyDeviceToHost));
  return kb::to_float(h);
}

// Both experts' gate/up and SwiGLU in one launch, then their down rows,
// weighted sum and residual in one launch, against the references; at the
// tiny shape and at Mixtral's (14336 x 4096), with programmatic launch on.
TEST(MixtralKernels, GatherSwigluAndCombineMatchReference) {
  KB_REQUIRE_GPU();
  for (auto [E, F, D] : {std::tuple{4, 704, 256}, std::tuple{8, 14336, 4096}}) {
    MoeData m(E, F, D);
    const std::vector<int32_t> ids = {E - 1, 1};
    const std::vector<float> wts = {0.625f, 0.375f};
    kb::DeviceBuffer<int32_t> d_ids(2);
    kb::DeviceBuffer<float> d_wts(2);
    kb::DeviceBuffer<bf16> d_h(size_t(2) * F), d_y(D);
    KB_CUDA_CHECK(cudaMemcpy(d_ids.get(), ids.data(), 8, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemcpy(d_wts.get(), wts.data(), 8, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemcpy(d_y.get(), m.d_x.get(), size_t(D) * 2, cudaMemcpyDeviceToDevice));
    kb::gemv::gather_gemv_swiglu(true, m.d_w13.get(), m.d_s13.get(), d_ids.get(), 2, E, m.d_x.get(),
                                 d_h.get(), F, D, 1e-5f, nullptr, true);
    // residual aliases y (as in the decoder: x += ...)
    kb::gemv::gather_gemv_combine(true, m.d_w2.get(), m.d_s2.get(), d_ids.get(), d_wts.get(), 2, E,
                                  d_h.get(), d_y.get(), D, F, d_y.get(), nullptr, true);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> h = download(d_h, size_t(2) * F);
    const std::vector<float> y = download(d_y, D);
    std::vector<float> want_y = m.x;
    for (int s = 0; s < 2; ++s) {
      const int e = ids[s];
      const std::vector<int8_t> q13(m.w13.begin() + size_t(e) * 2 * F * D,
                                    m.w13.begin() + size_t(e + 1) * 2 * F * D);
      const std::vector<float> sc13(m.s13.begin() + size_t(e) * 2 * F,
                                    m.s13.begin() + size_t(e + 1) * 2 * F);
      const std::vector<float> w13 = dequant(q13, std::vector<float>(2 * F, 1.f), D);
      std::vector<float> want_h(F);
      kb::gemv::gemv_swiglu_ref(w13.data(), sc13.data(), m.x.data(), want_h.data(), F, D, 1e-5f);
      const kb::Compare ch =
          kb::compare(std::vector<float>(h.begin() + size_t(s) * F, h.begin() + size_t(s + 1) * F),
                      want_h, 1e-2);
      EXPECT_TRUE(ch.ok) << "E " << E << " slot " << s << " h: " << ch.text();
      // The down rows of expert e on the GPU's own h (bf16), scaled and weighted.
      const std::vector<int8_t> q2(m.w2.begin() + size_t(e) * D * F,
                                   m.w2.begin() + size_t(e + 1) * D * F);
      const std::vector<float> w2 = dequant(q2, std::vector<float>(D, 1.f), F);
      const std::vector<float> sc2(m.s2.begin() + size_t(e) * D, m.s2.begin() + size_t(e + 1) * D);
      std::vector<float> out(D);
      kb::gemv::gemv_ref(w2.data(), sc2.data(), h.data() + size_t(s) * F, out.data(), D, F);
      for (int i = 0; i < D; ++i) want_y[i] += wts[s] * out[i];
    }
    const kb::Compare cy = kb::compare(y, want_y, 1e-2);
    EXPECT_TRUE(cy.ok) << "E " << E << " y: " << cy.text();
  }
}

// An id outside [0, E) reads no weight: NaN rows, which a check catches.
TEST(MixtralKernels, BadExpertIdGivesNaN) {
  KB_REQUIRE_GPU();
  const int E = 4, F = 704, D = 256;
  MoeData m(E, F, D);
  for (int bad : {-1, E, 1 << 30}) {
    const std::vector<int32_t> ids = {1, bad};
    const std::vector<float> wts = {0.5f, 0.5f};
    kb::DeviceBuffer<int32_t> d_ids(2);
    kb::DeviceBuffer<float> d_wts(2);
    kb::DeviceBuffer<bf16> d_h(size_t(2) * F), d_y(D);
    KB_CUDA_CHECK(cudaMemcpy(d_ids.get(), ids.data(), 8, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemcpy(d_wts.get(), wts.data(), 8, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemset(d_h.get(), 0, size_t(2) * F * 2));
    kb::gemv::gather_gemv_swiglu(true, m.d_w13.get(), m.d_s13.get(), d_ids.get(), 2, E, m.d_x.get(),
                                 d_h.get(), F, D, 1e-5f, nullptr);
    kb::gemv::gather_gemv_combine(true, m.d_w2.get(), m.d_s2.get(), d_ids.get(), d_wts.get(), 2, E,
                                  d_h.get(), d_y.get(), D, F, m.d_x.get(), nullptr);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> h = download(d_h, size_t(2) * F);
    const std::vector<float> y = download(d_y, D);
    for (int i = 0; i < F; ++i) {
      ASSERT_TRUE(std::isfinite(h[i])) << "slot 0 is a valid expert, h[" << i << "]";
      ASSERT_TRUE(std::isnan(h[F + i])) << "slot 1 (id " << bad << "), h[" << i << "]";
    }
    for (int i = 0; i < D; ++i) ASSERT_TRUE(std::isnan(y[i])) << "id " << bad << ", y[" << i << "]";
  }
  // The launchers refuse what they can check on the host.
  kb::DeviceBuffer<int32_t> d_ids(3);
  kb::DeviceBuffer<float> d_wts(3);
  kb::DeviceBuffer<bf16> d_h(size_t(3) * F), d_y(D);
  EXPECT_THROW(
      kb::gemv::gather_gemv_combine(true, m.d_w2.get(), m.d_s2.get(), d_ids.get(), d_wts.get(), 3,
                                    E, d_h.get(), d_y.get(), D, F, nullptr, nullptr),
      std::invalid_argument);  // n_sel > 2
  EXPECT_THROW(kb::gemv::gather_gemv_combine(true, m.d_w2.get(), m.d_s2.get(), d_ids.get(), nullptr,
                                             2, E, d_h.get(), d_y.get(), D, F, nullptr, nullptr),
               std::invalid_argument);
}

// The router kernel: logits, the top 2 (ties -> lower id), renormalized
// weights, the history at *pos; and its faults.
TEST(MixtralKernels, RouterPicksTheTopTwo) {
  KB_REQUIRE_GPU();
  const int E = 8, D = 256;
  // bf16 router rows: row e = (e == 5 or e == 6 ? 2 : e == 2 ? 1 : 0) · ones, so
  // logits r · sum(x) · that, x = ones: experts 5 and 6 tie at the top.
  std::vector<float> w(size_t(E) * D, 0.f), x(D, 1.f);
  for (int k = 0; k < D; ++k) {
    w[size_t(5) * D + k] = w[size_t(6) * D + k] = 2.f / D;
    w[size_t(2) * D + k] = 1.f / D;
  }
  kb::DeviceBuffer<bf16> d_w(w.size()), d_x(D);
  const auto wb = kb::to_bf16(w), xb = kb::to_bf16(x);
  KB_CUDA_CHECK(cudaMemcpy(d_w.get(), wb.data(), wb.size() * 2, cudaMemcpyHostToDevice));
  KB_CUDA_CHECK(cudaMemcpy(d_x.get(), xb.data(), xb.size() * 2, cudaMemcpyHostToDevice));
  kb::DeviceBuffer<int32_t> d_ids(2), d_pos(1), d_hids(size_t(4) * E);
  kb::DeviceBuffer<float> d_wts(2), d_hlog(size_t(4) * E);
  const int32_t pos = 3;
  KB_CUDA_CHECK(cudaMemcpy(d_pos.get(), &pos, 4, cudaMemcpyHostToDevice));
  for (int fault : {0, 1, 2}) {
    dec::RouteArgs a;
    a.w = d_w.get();
    a.x = d_x.get();
    a.dim = D;
    a.n_experts = E;
    a.top = 2;
    a.ids = d_ids.get();
    a.weights = d_wts.get();
    a.pos = d_pos.get();
    a.capacity = 4;
    a.hist_logits = d_hlog.get();
    a.hist_ids = d_hids.get();
    a.hist_stride = E;
    a.fault = fault;
    dec::moe_route(a, nullptr);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    int32_t ids[2];
    float wts[2];
    std::vector<float> logits(E);
    KB_CUDA_CHECK(cudaMemcpy(ids, d_ids.get(), 8, cudaMemcpyDeviceToHost));
    KB_CUDA_CHECK(cudaMemcpy(wts, d_wts.get(), 8, cudaMemcpyDeviceToHost));
    KB_CUDA_CHECK(cudaMemcpy(logits.data(), d_hlog.get() + 3 * E, E * 4, cudaMemcpyDeviceToHost));
    // r = 1 / sqrt(1 + eps): logits 2r, 2r, r, 0 ...
    EXPECT_NEAR(logits[5], 2.f, 1e-3);
    EXPECT_NEAR(logits[2], 1.f, 1e-3);
    EXPECT_NEAR(logits[0], 0.f, 1e-6);
    if (fault == 0) {
      EXPECT_EQ(ids[0], 5);
      EXPECT_EQ(ids[1], 6);
      EXPECT_NEAR(wts[0], 0.5f, 1e-6);
      EXPECT_NEAR(wts[1], 0.5f, 1e-6);
    } else if (fault == 1) {  // the second choice replaced by the third-ranked
      EXPECT_EQ(ids[0], 5);
      EXPECT_EQ(ids[1], 2);
      EXPECT_NEAR(wts[0], 1.f / (1.f + std::exp(-1.f)), 1e-3);
    } else {
      EXPECT_EQ(ids[0], E);
    }
    // The CPU's routing of the same logits.
    const dec::Route ref = dec::route_ref(logits, 2);
    if (fault == 0) EXPECT_EQ(ref.ids, (std::vector<int>{5, 6}));
  }
}

// The router's logits against the CPU at expert counts that split the block's
// 32 warps evenly, unevenly and not at all (one warp an expert, two experts a
// warp), at a dim that leaves a partial round of loads; int8 with scales and
// bf16. The logits must also be bit-identical from call to call (a fixed
// order of the partial sums: a near tie must not flip between runs).
TEST(MixtralKernels, RouterLogitsMatchCpuAtAnyExpertCount) {
  KB_REQUIRE_GPU();
  auto bf16r = [](float v) { return kb::bf16_to_float(kb::float_to_bf16(v)); };
  for (const bool int8 : {true, false}) {
    for (const int E : {1, 3, 8, 40, 64}) {
      for (const int D : {136, 4096}) {
        SCOPED_TRACE(::testing::Message() << (int8 ? "int8" : "bf16") << " E=" << E << " D=" << D);
        uint32_t seed = 12345u + E * 7u + D;
        auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
        std::vector<float> x(D), w(size_t(E) * D), scale(E, 1.f);
        for (auto& v : x) v = bf16r(float(next() % 2001) / 1000.f - 1.f);
        std::vector<int8_t> q(w.size());
        for (size_t i = 0; i < w.size(); ++i) {
          q[i] = int8_t(int(next() % 255) - 127);
          w[i] = int8 ? float(q[i]) : bf16r(float(q[i]) / 127.f);
        }
        for (auto& s : scale) s = int8 ? bf16r(0.001f * float(1 + next() % 9)) : 1.f;
        kb::DeviceBuffer<int8_t> d_q(q.size());
        kb::DeviceBuffer<bf16> d_wb(w.size()), d_x(D), d_s(E);
        const auto xb = kb::to_bf16(x), wb = kb::to_bf16(w), sb = kb::to_bf16(scale);
        KB_CUDA_CHECK(cudaMemcpy(d_x.get(), xb.data(), D * 2, cudaMemcpyHostToDevice));
        KB_CUDA_CHECK(cudaMemcpy(d_q.get(), q.data(), q.size(), cudaMemcpyHostToDevice));
        KB_CUDA_CHECK(cudaMemcpy(d_wb.get(), wb.data(), wb.size() * 2, cudaMemcpyHostToDevice));
        KB_CUDA_CHECK(cudaMemcpy(d_s.get(), sb.data(), E * 2, cudaMemcpyHostToDevice));
        kb::DeviceBuffer<int32_t> d_ids(2), d_pos(1);
        kb::DeviceBuffer<float> d_wts(2), d_hlog{static_cast<size_t>(E)};
        const int32_t pos = 0;
        KB_CUDA_CHECK(cudaMemcpy(d_pos.get(), &pos, 4, cudaMemcpyHostToDevice));
        dec::RouteArgs a;
        a.w = int8 ? static_cast<const void*>(d_q.get()) : d_wb.get();
        a.scale = int8 ? d_s.get() : nullptr;
        a.x = d_x.get();
        a.dim = D;
        a.n_experts = E;
        a.top = E > 1 ? 2 : 1;
        a.ids = d_ids.get();
        a.weights = d_wts.get();
        a.pos = d_pos.get();
        a.capacity = 1;
        a.hist_logits = d_hlog.get();
        a.hist_stride = E;
        std::vector<float> first(E), again(E);
        for (auto* out : {&first, &again}) {
          dec::moe_route(a, nullptr);
          KB_CUDA_CHECK(cudaDeviceSynchronize());
          KB_CUDA_CHECK(cudaMemcpy(out->data(), d_hlog.get(), E * 4, cudaMemcpyDeviceToHost));
        }
        double ss = 0;
        for (float v : x) ss += double(v) * v;
        const double r = 1.0 / std::sqrt(ss / D + 1e-5);
        for (int e = 0; e < E; ++e) {
          double dot = 0, mag = 0;
          for (int k = 0; k < D; ++k) {
            dot += double(w[size_t(e) * D + k]) * x[k];
            mag += std::fabs(double(w[size_t(e) * D + k]) * x[k]);
          }
          const double want = r * scale[e] * dot;
          EXPECT_NEAR(first[e], want, 1e-4 * r * scale[e] * mag + 1e-6) << "expert " << e;
          EXPECT_EQ(first[e], again[e]) << "expert " << e << ": not the same bits twice";
        }
      }
    }
  }
}

// ------------------------------------------------------------ the model

struct MoeParam {
  dec::WeightType type;
  bool graph, prefill, pdl;
};
class MixtralTiny : public ::testing::TestWithParam<MoeParam> {};

// The tiny MoE model (4 experts, top 2) against the CPU over 24 steps: the
// routing of every layer and position (near ties may go the GPU's way),
// router logits, logits, tokens, KV rows, residual.
TEST_P(MixtralTiny, MatchesCpuReference) {
  KB_REQUIRE_GPU();
  const MoeParam p = GetParam();
  dec::ReferenceCheckOptions o;
  o.prompt = {1, 15043, 29892, 590, 1024, 338};
  o.steps = 24;
  o.max_seq = 32;
  o.attn_min_chunk = 2;
  o.graph = p.graph;
  o.prefill = p.prefill;
  o.pdl = p.pdl;
  o.seed = 5;
  const auto r = dec::check_against_reference(dec::find_config("tiny-moe"), p.type, o);
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(r.routings, 24 * 2);
  std::printf("  %s\n", r.detail.c_str());
}

INSTANTIATE_TEST_SUITE_P(Types, MixtralTiny,
                         ::testing::Values(MoeParam{dec::WeightType::int8, true, true, true},
                                           MoeParam{dec::WeightType::int8, true, false, true},
                                           MoeParam{dec::WeightType::int8, false, true, false},
                                           MoeParam{dec::WeightType::bf16, true, true, true}),
                         [](const ::testing::TestParamInfo<MoeParam>& i) {
                           return std::string(i.param.type == dec::WeightType::int8 ? "int8"
                                                                                    : "bf16") +
                                  (i.param.graph ? "_graph" : "_eager") +
                                  (i.param.prefill ? "_prefill" : "") +
                                  (i.param.pdl ? "" : "_no_pdl");
                         });

// A wrong routing (the second expert replaced by the third-ranked, a valid
// id) fails the check as a routing beyond a near tie; an id out of range
// fails it too (NaN rows, never a stray read).
TEST(MixtralModel, WrongRoutingFailsTheCheck) {
  KB_REQUIRE_GPU();
  dec::ReferenceCheckOptions o;
  o.prompt = {1, 2, 3};
  o.steps = 12;
  o.max_seq = 16;
  o.route_fault = 1;
  const auto wrong =
      dec::check_against_reference(dec::find_config("tiny-moe"), dec::WeightType::int8, o);
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.detail.find("routing differs"), std::string::npos) << wrong.detail;
  o.route_fault = 2;
  const auto bad =
      dec::check_against_reference(dec::find_config("tiny-moe"), dec::WeightType::int8, o);
  EXPECT_FALSE(bad.ok);
  std::printf("  %s\n  %s\n", wrong.detail.c_str(), bad.detail.c_str());
}

TEST(MixtralModel, GraphHasOneNodePerKernel) {
  KB_REQUIRE_GPU();
  const auto& c = dec::find_config("tiny-moe");
  dec::DecoderOptions o;
  o.max_seq = 16;
  o.prompt = {1, 2, 3, 4};
  dec::Decoder d(c, dec::WeightType::int8, o);
  EXPECT_EQ(d.graph_nodes(), size_t(dec::Decoder::kernels_per_step(c)));
  EXPECT_EQ(d.prefill_graph_nodes(), size_t(dec::Decoder::prefill_nodes(c, 4)));
}

// One full-size Mixtral layer (8 experts of 14336 x 4096, int8) against the
// CPU: prefill and 4 steps, the routing included.
TEST(MixtralModel, OneFullLayerMatchesCpuReference) {
  KB_REQUIRE_GPU();
  dec::ModelConfig c = dec::find_config("Mixtral-8x7B-v0.1");
  c.n_layers = 1;
  dec::ReferenceCheckOptions o;
  o.prompt = {1, 15043, 29892, 590, 1024, 338};
  o.steps = 10;
  o.max_seq = 16;
  o.attn_min_chunk = 2;
  o.prefill = true;
  const auto r = dec::check_against_reference(c, dec::WeightType::int8, o);
  EXPECT_TRUE(r.ok) << r.detail;
  std::printf("  %s\n", r.detail.c_str());
}

}  // namespace
