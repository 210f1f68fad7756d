// Mixtral's mixture-of-experts decode: the gather kernels it adds
// (gather_gemv_swiglu, gather_gemv_combine) against their references, the
// combine reading its ids before its wait (experts_ready) in the decoder's
// chain of dependent launches, the router kernel, the tiny MoE model and
// one full-size Mixtral layer against the CPU fp32 reference, and the
// checks failing on a wrong routing, on a wrong read of the ids and on an
// expert id out of range. Byte counts run without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/common/pdl.cuh"
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
  // 6 kernels a layer; with the router beside the o projection (the
  // default) 5 of them on the chain (moe_route_finish beside it), else 6.
  EXPECT_EQ(dec::Decoder::kernels_per_step(c), 6 * 32 + 3);
  EXPECT_EQ(dec::Decoder::chain_kernels_per_step(c), 5 * 32 + 3);
  EXPECT_EQ(dec::Decoder::chain_kernels_per_step(c, false), 6 * 32 + 3);
  // The prefill: per layer 5 kernels for the chunk and a router and an
  // attention per token, all on the chain.
  EXPECT_EQ(dec::Decoder::prefill_nodes(c, 6), 1 + 6 + 5 * 32 + 2 * 6 * 32 + 3);
}

// A gemv carrying router blocks refuses what it cannot run, before any
// CUDA call: the router's x as the gemv's output, a configuration without
// them, q other than K, more than 64 experts, more experts than a block
// has threads, a missing pointer.
TEST(MixtralConfig, RouterBlocksRefuseBadArguments) {
  auto fake = [](uintptr_t p) { return reinterpret_cast<void*>(p); };
  kb::gemv::RouteBlocks rb;
  rb.w = fake(0x10000);
  rb.scale = static_cast<const bf16*>(fake(0x20000));
  rb.x = static_cast<const bf16*>(fake(0x30000));
  rb.fold = static_cast<const float*>(fake(0x40000));
  rb.dim = 4096;
  rb.q = 4096;
  rb.E = 8;
  rb.top = 2;
  rb.ids = static_cast<int32_t*>(fake(0x50000));
  rb.logits = static_cast<float*>(fake(0x60000));
  rb.partial = static_cast<float*>(fake(0x70000));
  rb.counter = static_cast<unsigned int*>(fake(0x80000));
  rb.pos = static_cast<const int32_t*>(fake(0x90000));
  kb::gemv::Operands op;
  op.int8 = true;
  op.W = fake(0xa0000);
  op.scale = static_cast<const bf16*>(fake(0xb0000));
  op.x = static_cast<const bf16*>(fake(0xc0000));
  op.y = static_cast<bf16*>(fake(0xd0000));
  op.N = 4096;
  op.K = 4096;
  op.route = &rb;
  const kb::gemv::Config ok(*kb::gemv::parse_kernel("R2U1W4P1K2"));
  auto refused = [&](const kb::gemv::Config& cfg, const char* what) {
    try {
      kb::gemv::launch(op, cfg, nullptr);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "not refused: " << what;
  };
  op.y = const_cast<bf16*>(rb.x);
  refused(ok, "must not be the router's x");
  op.y = static_cast<bf16*>(fake(0xd0000));
  refused(kb::gemv::Config(*kb::gemv::parse_kernel("R4U1W4P1K2")), "1 or 2 rows per warp");
  EXPECT_FALSE(
      kb::gemv::carries_route_blocks(kb::gemv::Config(*kb::gemv::parse_kernel("R2U4W4P1K2"))));
  EXPECT_TRUE(kb::gemv::carries_route_blocks(ok));
  rb.q = 2048;
  refused(ok, "q = K");
  rb.q = 4096;
  rb.E = 65;
  refused(ok, "1..64 experts");
  rb.E = 64;  // the last block adds expert e's parts in thread e: 64 experts need 2 warps
  refused(kb::gemv::Config(*kb::gemv::parse_kernel("R2U1W1P1K1")), "a thread per expert");
  rb.E = 8;
  rb.fold = nullptr;
  refused(ok, "null pointer");
}

// ------------------------------------------------------------ kernels

// The router's arguments for one token: W [E, D] (int8 with `scale`, or
// bf16), top 2 (1 with one expert), outputs and the history at *pos
// (stride E; hist_ids may be null).
dec::RouteArgs route_args(const void* w, const bf16* scale, const bf16* x, int D, int E,
                          int32_t* ids, float* weights, const int32_t* pos, int capacity,
                          float* hist_logits, int32_t* hist_ids, int fault = 0) {
  dec::RouteArgs a;
  a.w = w;
  a.scale = scale;
  a.x = x;
  a.dim = D;
  a.n_experts = E;
  a.top = E > 1 ? 2 : 1;
  a.ids = ids;
  a.weights = weights;
  a.pos = pos;
  a.capacity = capacity;
  a.hist_logits = hist_logits;
  a.hist_ids = hist_ids;
  a.hist_stride = E;
  a.fault = fault;
  return a;
}

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

// The bf16 outputs as their bits (bit-identical comparisons, NaN included).
std::vector<uint16_t> download_bits(const kb::DeviceBuffer<bf16>& d, size_t n) {
  std::vector<uint16_t> h(n);
  KB_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), n * 2, cudaMemcpyDeviceToHost));
  return h;
}

// "" when a and b hold the same bits, else how many elements differ and the first.
std::string bit_differences(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  if (a.size() != b.size()) return "sizes differ";
  size_t n = 0, first = 0;
  for (size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) {
      ++n;
      first = i;
    }
  if (n == 0) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "%zu of %zu differ, the first at %zu (0x%04x vs 0x%04x)", n,
                a.size(), first, unsigned(a[first]), unsigned(b[first]));
  return buf;
}

// Expert e's gate/up rows and SwiGLU of m.x on the CPU: F values.
std::vector<float> reference_h(const MoeData& m, int e) {
  const int64_t F = m.F, D = m.D;
  const std::vector<int8_t> q13(m.w13.begin() + e * 2 * F * D, m.w13.begin() + (e + 1) * 2 * F * D);
  const std::vector<float> sc13(m.s13.begin() + e * 2 * F, m.s13.begin() + (e + 1) * 2 * F);
  const std::vector<float> w13 = dequant(q13, std::vector<float>(2 * F, 1.f), D);
  std::vector<float> h(F);
  kb::gemv::gemv_swiglu_ref(w13.data(), sc13.data(), m.x.data(), h.data(), F, D, 1e-5f);
  return h;
}

// The combine on the CPU, on the GPU's own h ([2, F], bf16): m.x + sum over
// the two slots of wts[s] · (expert ids[s]'s scaled down rows · h[s]).
std::vector<float> reference_combine(const MoeData& m, const std::vector<int32_t>& ids,
                                     const std::vector<float>& wts, const std::vector<float>& h) {
  const int64_t F = m.F, D = m.D;
  std::vector<float> y = m.x;
  for (int s = 0; s < 2; ++s) {
    const int64_t e = ids[s];
    const std::vector<int8_t> q2(m.w2.begin() + e * D * F, m.w2.begin() + (e + 1) * D * F);
    const std::vector<float> w2 = dequant(q2, std::vector<float>(D, 1.f), F);
    const std::vector<float> sc2(m.s2.begin() + e * D, m.s2.begin() + (e + 1) * D);
    std::vector<float> out(D);
    kb::gemv::gemv_ref(w2.data(), sc2.data(), h.data() + s * F, out.data(), D, F);
    for (int i = 0; i < D; ++i) y[i] += wts[s] * out[i];
  }
  return y;
}

// Two slots' expert ids and weights in device memory.
struct DeviceRouting {
  kb::DeviceBuffer<int32_t> ids{2};
  kb::DeviceBuffer<float> wts{2};
  DeviceRouting(const std::vector<int32_t>& i, const std::vector<float>& w) {
    KB_CUDA_CHECK(cudaMemcpy(ids.get(), i.data(), 8, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemcpy(wts.get(), w.data(), 8, cudaMemcpyHostToDevice));
  }
};

// Both experts' gate/up and SwiGLU in one launch, then their down rows,
// weighted sum and residual in one launch, against the references; at the
// tiny shape and at Mixtral's (14336 x 4096), with programmatic launch on.
TEST(MixtralKernels, GatherSwigluAndCombineMatchReference) {
  KB_REQUIRE_GPU();
  for (auto [E, F, D] : {std::tuple{4, 704, 256}, std::tuple{8, 14336, 4096}}) {
    MoeData m(E, F, D);
    const std::vector<int32_t> ids = {E - 1, 1};
    const std::vector<float> wts = {0.625f, 0.375f};
    const DeviceRouting r(ids, wts);
    kb::DeviceBuffer<bf16> d_h(size_t(2) * F), d_y(D);
    KB_CUDA_CHECK(cudaMemcpy(d_y.get(), m.d_x.get(), size_t(D) * 2, cudaMemcpyDeviceToDevice));
    kb::gemv::gather_gemv_swiglu(true, m.d_w13.get(), m.d_s13.get(), r.ids.get(), 2, E, m.d_x.get(),
                                 d_h.get(), F, D, 1e-5f, nullptr, true);
    // residual aliases y (as in the decoder: x += ...)
    kb::gemv::gather_gemv_combine(true, m.d_w2.get(), m.d_s2.get(), r.ids.get(), r.wts.get(), 2, E,
                                  d_h.get(), d_y.get(), D, F, d_y.get(), nullptr, true);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> h = download(d_h, size_t(2) * F);
    const std::vector<float> y = download(d_y, D);
    for (int s = 0; s < 2; ++s) {
      const kb::Compare ch =
          kb::compare(std::vector<float>(h.begin() + size_t(s) * F, h.begin() + size_t(s + 1) * F),
                      reference_h(m, ids[s]), 1e-2);
      EXPECT_TRUE(ch.ok) << "E " << E << " slot " << s << " h: " << ch.text();
    }
    // The down rows on the GPU's own h (bf16), scaled and weighted.
    const kb::Compare cy = kb::compare(y, reference_combine(m, ids, wts, h), 1e-2);
    EXPECT_TRUE(cy.ok) << "E " << E << " y: " << cy.text();
  }
}

// The gathers compiled for a number of blocks an SM (General::min_blocks:
// the same code under a register cap) give the same bits as without it, at
// Mixtral's shape; the launcher refuses it where it is not built.
TEST(MixtralKernels, CappedGathersMatchTheirUncappedTwins) {
  KB_REQUIRE_GPU();
  const int E = 8, F = 14336, D = 4096;
  MoeData m(E, F, D);
  const std::vector<int32_t> ids = {E - 1, 2};
  const std::vector<float> wts = {0.625f, 0.375f};
  const DeviceRouting r(ids, wts);
  kb::DeviceBuffer<bf16> d_h(size_t(2) * F), d_y(D);
  auto cfg = [](const char* name) { return kb::gemv::Config(*kb::gemv::parse_kernel(name)); };
  auto swiglu = [&](const char* name) {
    const kb::gemv::Config c = cfg(name);
    kb::gemv::gather_gemv_swiglu(true, m.d_w13.get(), m.d_s13.get(), r.ids.get(), 2, E, m.d_x.get(),
                                 d_h.get(), F, D, 1e-5f, nullptr, true, &c);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    return download(d_h, size_t(2) * F);
  };
  const std::vector<float> h = swiglu("R2U2W4P1K1");
  const kb::Compare ch =
      kb::compare(std::vector<float>(h.begin(), h.begin() + F), reference_h(m, ids[0]), 1e-2);
  EXPECT_TRUE(ch.ok) << ch.text();
  // Capped, and in batches of one load (int8, docs/decisions/0059): the same sums.
  for (const char* other :
       {"R2U2W4P1K1B7", "R2U2W4P1K1B8", "R2U1W4P1K1", "R2U1W4P1K1B7", "R2U1W4P1K1B8"})
    EXPECT_EQ(swiglu(other), h) << other;
  auto combine = [&](const char* name) {
    const kb::gemv::Config c = cfg(name);
    kb::gemv::gather_gemv_combine(true, m.d_w2.get(), m.d_s2.get(), r.ids.get(), r.wts.get(), 2, E,
                                  d_h.get(), d_y.get(), D, F, m.d_x.get(), nullptr, true, &c);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    return download(d_y, D);
  };
  const kb::Compare cy =
      kb::compare(combine("R2U1W4P0K2"), reference_combine(m, ids, wts, h), 1e-2);
  EXPECT_TRUE(cy.ok) << cy.text();
  for (const char* plain : {"R2U1W4P0K2", "R2U2W4P0K2", "R2U1W4P1K2", "R2U2W4P0K4"}) {
    const std::string capped = std::string(plain) + "B8";
    EXPECT_EQ(combine(capped.c_str()), combine(plain)) << capped;
  }
  EXPECT_THROW(combine("R2U1W8P0K2B8"), std::invalid_argument);  // 8 warps: more than 128 threads
  EXPECT_THROW(combine("R2U1W4P0K2B7"), std::invalid_argument);  // the combine: 8 only
  EXPECT_THROW(combine("R1U2W4P0K2B8"), std::invalid_argument);  // 2 rows a warp only
  EXPECT_THROW(swiglu("R2U2W4P1K1B6"), std::invalid_argument);
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

// ------------------------------------------------- the combine's early ids

// The router's place in the decoder's chain, for the tests: lets the next
// grid launch at once (as moe_route does), waits for the previous grid,
// spins `spin` clock cycles, then writes round `round`'s two ids and
// weights from the tables. A grid that read the ids before this one
// completed would read the previous round's.
__global__ void write_routing(const int32_t* table_ids, const float* table_w, int round,
                              long long spin, int32_t* ids, float* w) {
  kb::let_next_grid_launch();
  kb::wait_for_previous_grid();
  for (const long long t0 = clock64(); clock64() - t0 < spin;) {
  }
  if (threadIdx.x < 2) {
    ids[threadIdx.x] = table_ids[2 * round + threadIdx.x];
    w[threadIdx.x] = table_w[2 * round + threadIdx.x];
  }
}

// About 1 ms at an H100's clock: far longer than a dependent grid takes to
// start, so a read of the ids before the writer completes cannot miss it.
constexpr long long kWriterSpin = 2'000'000;

// Rounds of the decoder's MoE chain on one stream, every launch a
// programmatic dependent of the one before: the router (write_routing),
// the gate/up gather (ids read after its wait) into H[r], the combine into
// Y[r] (residual m.x), on the chain's own stream `s`. Round 2 routes to an
// id out of range.
struct RoutingChain {
  static constexpr int kRounds = 5;
  const MoeData& m;
  cudaStream_t s = nullptr;
  std::vector<int32_t> ids;  // [kRounds][2]
  std::vector<float> wts;    // [kRounds][2]
  kb::DeviceBuffer<int32_t> d_table_ids{2 * kRounds}, d_ids{2};
  kb::DeviceBuffer<float> d_table_w{2 * kRounds}, d_wts{2};
  std::vector<kb::DeviceBuffer<bf16>> H, Y;
  explicit RoutingChain(const MoeData& md) : m(md) {
    // A blocking stream: ordered after the uploads (cudaMemcpy) of MoeData and below.
    KB_CUDA_CHECK(cudaStreamCreate(&s));
    const int E = m.E;
    ids = {E - 1, 1, 0, 2, 1, E, 2, E - 1, 1, 0};
    wts = {0.625f, 0.375f, 0.25f, 0.75f, 0.5f, 0.5f, 0.875f, 0.125f, 0.5f, 0.5f};
    KB_CUDA_CHECK(
        cudaMemcpy(d_table_ids.get(), ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemcpy(d_table_w.get(), wts.data(), wts.size() * 4, cudaMemcpyHostToDevice));
    for (int r = 0; r < kRounds; ++r) {
      H.emplace_back(size_t(2) * m.F);
      Y.emplace_back(size_t(m.D));
    }
  }
  ~RoutingChain() { cudaStreamDestroy(s); }
  RoutingChain(const RoutingChain&) = delete;
  RoutingChain& operator=(const RoutingChain&) = delete;
  std::vector<int32_t> round_ids(int r) const { return {ids[2 * r], ids[2 * r + 1]}; }
  std::vector<float> round_wts(int r) const { return {wts[2 * r], wts[2 * r + 1]}; }
  bool round_valid(int r) const {
    for (int32_t e : round_ids(r))
      if (e < 0 || e >= m.E) return false;
    return true;
  }
  void write(int r) {
    kb::launch_maybe_pdl(true, write_routing, dim3(1), dim3(32), s, d_table_ids.get(),
                         d_table_w.get(), r, kWriterSpin, d_ids.get(), d_wts.get());
  }
  void combine(const kb::DeviceBuffer<bf16>& h, kb::DeviceBuffer<bf16>& y,
               const kb::gemv::Config& cfg, bool experts_ready) {
    kb::gemv::gather_gemv_combine(true, m.d_w2.get(), m.d_s2.get(), d_ids.get(), d_wts.get(), 2,
                                  m.E, h.get(), y.get(), m.D, m.F, m.d_x.get(), s, true, &cfg,
                                  experts_ready);
  }
  // Every round; returns Y[r]'s bits per round (poisoned with NaN first).
  std::vector<std::vector<uint16_t>> run(const kb::gemv::Config& cfg, bool experts_ready) {
    for (auto& y : Y) KB_CUDA_CHECK(cudaMemsetAsync(y.get(), 0xFF, size_t(m.D) * 2, s));
    for (int r = 0; r < kRounds; ++r) {
      write(r);
      kb::gemv::gather_gemv_swiglu(true, m.d_w13.get(), m.d_s13.get(), d_ids.get(), 2, m.E,
                                   m.d_x.get(), H[r].get(), m.F, m.D, 1e-5f, s, true);
      combine(H[r], Y[r], cfg, experts_ready);
    }
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<std::vector<uint16_t>> out;
    for (const auto& y : Y) out.push_back(download_bits(y, m.D));
    return out;
  }
};

// Every configuration of the int8 combine kernel: rows per warp 1|2,
// unroll 1|2, pipelined or not, K over 1|2 warps (the compiler's
// registers), and the default (8 blocks an SM, General::min_blocks).
std::vector<kb::gemv::Config> combine_configs(int64_t N, int64_t K) {
  std::vector<kb::gemv::Config> v;
  const kb::gemv::General base = *kb::gemv::combine_config(true, N, K).get<kb::gemv::General>();
  for (int rows : {1, 2})
    for (int unroll : {1, 2})
      for (bool pipeline : {false, true})
        for (int ks : {1, 2}) {
          kb::gemv::General g = base;
          g.rows_per_warp = rows;
          g.unroll = unroll;
          g.pipeline = pipeline;
          g.k_split = ks;
          g.min_blocks = 0;
          if (g.warps % ks == 0) v.push_back(kb::gemv::Config(g));
        }
  v.push_back(kb::gemv::combine_config(true, N, K));
  return v;
}

// The combine reading its ids and weights before its wait (experts_ready),
// as the decoder launches it (router -> gate/up gather -> combine, each a
// programmatic dependent), gives the same bits as reading them after: in
// every configuration at the tiny shape and in the default one at
// Mixtral's, over rounds whose ids change (so a read of the previous
// round's ids, e.g. a stale line, shows) and one with an id out of range
// (NaN everywhere, and the next round right again).
// The prefill's combine (moe_tokens_combine): x[t] + sum_k w[t,k] ·
// D[ids[t,k], t] against the CPU within one bf16 rounding, for each token;
// a token with an id outside [0, E) gets a NaN row, the others do not;
// what it refuses on the host.
TEST(MixtralKernels, TokensCombineMatchesReferenceAndNaNsABadId) {
  KB_REQUIRE_GPU();
  const int E = 4, T = 5, top = 2, dim = 264;
  const auto x16 = kb::random_bf16(size_t(T) * dim, 71, -2.f, 2.f);
  const auto d16 = kb::random_bf16(size_t(E) * T * dim, 72, -3.f, 3.f);
  const std::vector<int32_t> ids = {0, 3, 1, 2, 2, 0, 3, 1, 1, E};  // token 4: a bad second id
  const std::vector<float> w = {0.7f, 0.3f, 0.55f, 0.45f, 0.5f, 0.5f, 0.9f, 0.1f, 0.6f, 0.4f};
  kb::DeviceBuffer<bf16> x(x16.size()), d(d16.size());
  kb::DeviceBuffer<int32_t> d_ids(ids.size());
  kb::DeviceBuffer<float> d_w(w.size());
  x.upload(x16);
  d.upload(d16);
  d_ids.upload(ids);
  d_w.upload(w);
  dec::moe_tokens_combine(x.get(), d.get(), d_ids.get(), d_w.get(), T, dim, E, top, nullptr, false);
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = kb::to_float(x.download());
  const auto fx = kb::to_float(x16), fd = kb::to_float(d16);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < dim; ++i) {
      const float g = got[size_t(t) * dim + i];
      if (t == 4) {
        ASSERT_TRUE(std::isnan(g)) << "token 4 (an id of E), element " << i;
        continue;
      }
      double want = fx[size_t(t) * dim + i];
      for (int k = 0; k < top; ++k)
        want += double(w[t * top + k]) * fd[(size_t(ids[t * top + k]) * T + t) * dim + i];
      ASSERT_NEAR(g, want, std::fabs(want) / 128 + 1e-6) << "token " << t << ", element " << i;
    }
  EXPECT_THROW(dec::moe_tokens_combine(x.get(), d.get(), d_ids.get(), d_w.get(), T, 260, E, top,
                                       nullptr, false),
               std::invalid_argument);  // dim not a multiple of 8
  EXPECT_THROW(dec::moe_tokens_combine(x.get(), d.get(), d_ids.get(), d_w.get(), T, dim, E, E + 1,
                                       nullptr, false),
               std::invalid_argument);  // top > E
  EXPECT_THROW(dec::moe_tokens_combine(x.get(), nullptr, d_ids.get(), d_w.get(), T, dim, E, top,
                                       nullptr, false),
               std::invalid_argument);
}

TEST(MixtralKernels, CombineReadingIdsEarlyIsBitIdentical) {
  KB_REQUIRE_GPU();
  for (auto [E, F, D] : {std::tuple{4, 704, 256}, std::tuple{8, 14336, 4096}}) {
    MoeData m(E, F, D);
    RoutingChain chain(m);
    std::vector<kb::gemv::Config> configs = combine_configs(D, F);
    if (E == 8) configs = {kb::gemv::combine_config(true, D, F)};
    for (const kb::gemv::Config& cfg : configs) {
      SCOPED_TRACE(::testing::Message() << "E " << E << " F " << F << " D " << D << ", "
                                        << kb::gemv::kernel_name(cfg.kernel));
      const auto waits = chain.run(cfg, false);
      std::vector<std::vector<float>> h(RoutingChain::kRounds);
      for (int r = 0; r < RoutingChain::kRounds; ++r) h[r] = download(chain.H[r], size_t(2) * F);
      const auto early = chain.run(cfg, true);
      std::vector<float> previous;
      for (int r = 0; r < RoutingChain::kRounds; ++r) {
        EXPECT_EQ(bit_differences(early[r], waits[r]), "") << "round " << r;
        const std::vector<float> y =
            kb::to_float(std::vector<bf16>(reinterpret_cast<const bf16*>(early[r].data()),
                                           reinterpret_cast<const bf16*>(early[r].data()) + D));
        if (!chain.round_valid(r)) {
          for (int i = 0; i < D; ++i)
            ASSERT_TRUE(std::isnan(y[i])) << "round " << r << " (id out of range), y[" << i << "]";
          previous.clear();
          continue;
        }
        const std::vector<float> want =
            reference_combine(m, chain.round_ids(r), chain.round_wts(r), h[r]);
        const kb::Compare c = kb::compare(y, want, 1e-2);
        EXPECT_TRUE(c.ok) << "round " << r << ": " << c.text();
        // The test must be able to fail: the previous round's ids would
        // give an output this check refuses.
        if (!previous.empty())
          ASSERT_FALSE(kb::compare(previous, want, 1e-2).ok)
              << "rounds " << r - 1 << " and " << r << " are too alike to show a stale read";
        previous = want;
      }
    }
  }
}

// The window the test above relies on exists: a combine told experts_ready
// but launched right after the grid that writes its ids (a misuse: no grid
// between them waits for the writer) reads the previous round's ids, and
// gives the previous round's output. So the decoder's order, where the
// gate/up gather waits for the router before the combine can launch, is
// what makes the early read right, and the chain test would see it wrong.
TEST(MixtralKernels, EarlyReadRightAfterTheWriterSeesTheOldIds) {
  KB_REQUIRE_CC(9, 0);  // programmatic dependent launch: without it nothing overlaps
  const int E = 4, F = 704, D = 256;
  MoeData m(E, F, D);
  RoutingChain chain(m);
  const kb::gemv::Config cfg = kb::gemv::combine_config(true, D, F);
  chain.run(cfg, false);  // rounds 0..4: the ids and weights in place are round 4's
  const int last = RoutingChain::kRounds - 1;
  const std::vector<uint16_t> last_y = download_bits(chain.Y[last], D);
  kb::DeviceBuffer<bf16> misuse(D), right(D);
  chain.write(0);  // round 0's routing, after a 1 ms spin
  chain.combine(chain.H[last], misuse, cfg, true);
  chain.write(0);
  chain.combine(chain.H[last], right, cfg, false);
  KB_CUDA_CHECK(cudaStreamSynchronize(chain.s));
  const std::vector<uint16_t> got = download_bits(misuse, D);
  EXPECT_NE(bit_differences(got, download_bits(right, D)), "")
      << "the misused early read saw the new ids";
  EXPECT_EQ(bit_differences(got, last_y), "")
      << "the misused early read did not see exactly the old ids";
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
    dec::moe_route(route_args(d_w.get(), nullptr, d_x.get(), D, E, d_ids.get(), d_wts.get(),
                              d_pos.get(), 4, d_hlog.get(), d_hids.get(), fault),
                   nullptr);
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
        const dec::RouteArgs a = route_args(
            int8 ? static_cast<const void*>(d_q.get()) : d_wb.get(), int8 ? d_s.get() : nullptr,
            d_x.get(), D, E, d_ids.get(), d_wts.get(), d_pos.get(), 1, d_hlog.get(), nullptr);
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

// The router beside the o projection: an o projection carrying router
// blocks (gemv::RouteBlocks, through moe_route_fold's F) and moe_route_finish
// on its output, against the router kernel (moe_route, checked against the
// CPU above) on the plain o projection's output: y bit for bit, the same
// experts (or a near tie), logits and weights within the rounding of y to
// bf16, the faults as the router's, the ticket left at zero (a second
// launch gives the same bits). Mixtral's shape (32 router blocks) and a
// small one (2), int8 and bf16, in each configuration that carries them.
TEST(MixtralKernels, RouterBesideTheOProjectionMatchesTheRouter) {
  KB_REQUIRE_GPU();
  auto bf16r = [](float v) { return kb::bf16_to_float(kb::float_to_bf16(v)); };
  struct Shape {
    int E, D, Q;
  };
  for (const bool int8 : {true, false}) {
    for (const Shape sh : {Shape{8, 4096, 4096}, Shape{3, 136, 80}}) {
      const int E = sh.E, D = sh.D, Q = sh.Q;
      SCOPED_TRACE(::testing::Message()
                   << (int8 ? "int8" : "bf16") << " E=" << E << " D=" << D << " Q=" << Q);
      uint32_t seed = 777u + E + D;
      auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
      auto uniform = [&] { return float(next() % 2001) / 1000.f - 1.f; };
      // Weights as stored (int8 values, or bf16) and their scales.
      auto weights = [&](int64_t rows, int64_t cols, std::vector<int8_t>& q, std::vector<float>& w,
                         std::vector<float>& sc, float amp) {
        q.resize(size_t(rows * cols));
        w.resize(q.size());
        sc.assign(size_t(rows), 1.f);
        for (size_t i = 0; i < q.size(); ++i) {
          q[i] = int8_t(int(next() % 255) - 127);
          w[i] = int8 ? float(q[i]) : bf16r(float(q[i]) / 127.f * amp);
        }
        if (int8)
          for (auto& v : sc) v = bf16r(amp / 127.f * float(1 + next() % 9) / 5.f);
      };
      std::vector<int8_t> qr, qo;
      std::vector<float> wr, wo, sr, so;
      weights(E, D, qr, wr, sr, 1.f / std::sqrt(float(D)));
      weights(D, Q, qo, wo, so, 1.f / std::sqrt(float(Q)));
      std::vector<float> x(D), att(Q);
      for (auto& v : x) v = bf16r(uniform());
      for (auto& v : att) v = bf16r(uniform());
      auto upload_w = [&](const std::vector<int8_t>& q, const std::vector<float>& w) {
        kb::DeviceBuffer<uint8_t> d(int8 ? q.size() : w.size() * 2);
        if (int8) {
          KB_CUDA_CHECK(cudaMemcpy(d.get(), q.data(), q.size(), cudaMemcpyHostToDevice));
        } else {
          const auto b = kb::to_bf16(w);
          KB_CUDA_CHECK(cudaMemcpy(d.get(), b.data(), b.size() * 2, cudaMemcpyHostToDevice));
        }
        return d;
      };
      auto upload_bf16 = [](const std::vector<float>& v) {
        kb::DeviceBuffer<bf16> d(v.size());
        const auto b = kb::to_bf16(v);
        KB_CUDA_CHECK(cudaMemcpy(d.get(), b.data(), b.size() * 2, cudaMemcpyHostToDevice));
        return d;
      };
      auto get_f = [](const float* d, size_t n) {
        std::vector<float> v(n);
        KB_CUDA_CHECK(cudaMemcpy(v.data(), d, n * 4, cudaMemcpyDeviceToHost));
        return v;
      };
      auto get_i = [](const int32_t* d, size_t n) {
        std::vector<int32_t> v(n);
        KB_CUDA_CHECK(cudaMemcpy(v.data(), d, n * 4, cudaMemcpyDeviceToHost));
        return v;
      };
      auto get_bf16 = [](const bf16* d, size_t n) {
        std::vector<bf16> v(n);
        KB_CUDA_CHECK(cudaMemcpy(v.data(), d, n * 2, cudaMemcpyDeviceToHost));
        return kb::to_float(v);
      };
      auto d_wr = upload_w(qr, wr), d_wo = upload_w(qo, wo);
      auto d_sr = upload_bf16(sr), d_so = upload_bf16(so);
      auto d_x = upload_bf16(x), d_att = upload_bf16(att);
      const int nb = kb::gemv::route_blocks(D, Q);
      kb::DeviceBuffer<bf16> d_y1{size_t(D)}, d_y2{size_t(D)};
      kb::DeviceBuffer<float> d_fold(size_t(E) * Q), d_l(size_t(E) + 2), d_w1(2), d_w2(2);
      kb::DeviceBuffer<float> d_h1{size_t(E)}, d_h2{size_t(E)}, d_part(size_t(nb) * E);
      kb::DeviceBuffer<int32_t> d_ids1(2), d_ids2(2), d_hid1{size_t(E)}, d_hid2{size_t(E)},
          d_pos(1);
      kb::DeviceBuffer<unsigned int> d_counter(1);
      KB_CUDA_CHECK(cudaMemset(d_counter.get(), 0, 4));
      const int32_t pos = 0;
      KB_CUDA_CHECK(cudaMemcpy(d_pos.get(), &pos, 4, cudaMemcpyHostToDevice));
      dec::moe_route_fold(int8, d_wr.get(), d_wo.get(), int8 ? d_so.get() : nullptr, E, D, Q,
                          d_fold.get(), nullptr);
      kb::gemv::Operands op;
      op.int8 = int8;
      op.W = d_wo.get();
      op.scale = int8 ? d_so.get() : nullptr;
      op.x = d_att.get();
      op.N = D;
      op.K = Q;
      op.residual = d_x.get();
      for (const char* kernel : {"R2U1W4P1K2", "R1U2W8P0K1", "R2U2W4P1K1"}) {
        const auto parsed = kb::gemv::parse_kernel(kernel);
        ASSERT_TRUE(parsed.has_value()) << kernel;
        kb::gemv::Config cfg;
        cfg.kernel = *parsed;
        ASSERT_TRUE(kb::gemv::carries_route_blocks(cfg)) << kernel;
        for (int fault : {0, 1, 2}) {
          SCOPED_TRACE(::testing::Message() << kernel << " fault " << fault);
          // The plain o projection and the router on its output.
          op.y = d_y1.get();
          op.route = nullptr;
          kb::gemv::launch(op, cfg, nullptr);
          dec::moe_route(
              route_args(d_wr.get(), int8 ? d_sr.get() : nullptr, d_y1.get(), D, E, d_ids1.get(),
                         d_w1.get(), d_pos.get(), 1, d_h1.get(), d_hid1.get(), fault),
              nullptr);
          // The o projection with router blocks, twice, and route_finish.
          kb::gemv::RouteBlocks rb;
          rb.w = d_wr.get();
          rb.scale = int8 ? d_sr.get() : nullptr;
          rb.x = d_x.get();
          rb.fold = d_fold.get();
          rb.dim = D;
          rb.q = Q;
          rb.E = E;
          rb.top = 2;
          rb.ids = d_ids2.get();
          rb.logits = d_l.get();
          rb.partial = d_part.get();
          rb.counter = d_counter.get();
          rb.pos = d_pos.get();
          rb.capacity = 1;
          rb.hist_ids = d_hid2.get();
          rb.hist_stride = E;
          rb.fault = fault;
          op.y = d_y2.get();
          op.route = &rb;
          std::vector<float> first;
          for (int run = 0; run < 2; ++run) {
            kb::gemv::launch(op, cfg, nullptr);
            KB_CUDA_CHECK(cudaDeviceSynchronize());
            const auto l = get_f(d_l.get(), E + 2);
            if (run == 0) first = l;
            EXPECT_EQ(l, first) << "run " << run << ": not the same bits";
          }
          unsigned int counter = 1;
          KB_CUDA_CHECK(cudaMemcpy(&counter, d_counter.get(), 4, cudaMemcpyDeviceToHost));
          EXPECT_EQ(counter, 0u) << "the ticket is left at zero";
          dec::RouteFinishArgs fa;
          fa.y = d_y2.get();
          fa.dim = D;
          fa.n_experts = E;
          fa.top = 2;
          fa.logits = d_l.get();
          fa.weights = d_w2.get();
          fa.pos = d_pos.get();
          fa.capacity = 1;
          fa.hist_logits = d_h2.get();
          fa.hist_stride = E;
          dec::moe_route_finish(fa, nullptr);
          KB_CUDA_CHECK(cudaDeviceSynchronize());
          EXPECT_EQ(get_bf16(d_y2.get(), D), get_bf16(d_y1.get(), D))
              << "the router blocks changed the gemv";
          const auto l1 = get_f(d_h1.get(), E), l2 = get_f(d_h2.get(), E);
          const auto w1 = get_f(d_w1.get(), 2), w2 = get_f(d_w2.get(), 2);
          const auto i1 = get_i(d_ids1.get(), 2), i2 = get_i(d_ids2.get(), 2);
          const auto h1 = get_i(d_hid1.get(), 2), h2 = get_i(d_hid2.get(), 2);
          double rms = 0;
          for (float v : l1) rms += double(v) * v;
          rms = std::sqrt(rms / E);
          ASSERT_GT(rms, 0.1);
          // y's rounding to bf16 moves a logit by about 1e-3 of their rms.
          for (int e = 0; e < E; ++e) EXPECT_NEAR(l2[e], l1[e], 1e-2 * rms) << "expert " << e;
          // The same choice unless the two logits at a boundary are a near tie.
          std::vector<float> sorted = l1;
          std::sort(sorted.rbegin(), sorted.rend());
          bool tie = std::fabs(sorted[0] - sorted[1]) < 1e-2 * rms;
          if (E > 2) tie |= std::fabs(sorted[1] - sorted[2]) < 1e-2 * rms;
          if (E > 3) tie |= std::fabs(sorted[2] - sorted[3]) < 1e-2 * rms;
          if (!tie) {
            EXPECT_EQ(i2, i1);
            EXPECT_EQ(h2, h1);
            for (int j = 0; j < 2; ++j) EXPECT_NEAR(w2[j], w1[j], 5e-3) << "weight " << j;
          }
          if (fault == 2) EXPECT_EQ(i2[0], E);
        }
      }
    }
  }
}

// ------------------------------------------------------------ the model

struct MoeParam {
  dec::WeightType type;
  bool graph, prefill;
  bool parallel = true;  // DecoderOptions::moe_route_parallel (default on)
  bool whole = false;    // DecoderOptions::attn_whole
};
class MixtralTiny : public ::testing::TestWithParam<MoeParam> {};

// The tiny MoE model (4 experts, top 2) against the CPU over 24 steps: the
// routing of every layer and position (near ties may go the GPU's way),
// router logits, logits, tokens, KV rows, residual; the router beside the
// o projection and on the chain.
TEST_P(MixtralTiny, MatchesCpuReference) {
  KB_REQUIRE_GPU();
  const MoeParam p = GetParam();
  dec::ReferenceCheckOptions o;
  o.decoder.prompt = {1, 15043, 29892, 590, 1024, 338};
  o.steps = 24;
  o.decoder.max_seq = 32;
  o.decoder.attn_min_chunk = 2;
  o.decoder.capture = p.graph;
  o.prefill = p.prefill;
  o.decoder.moe_route_parallel = p.parallel;
  o.decoder.attn_whole = p.whole;
  o.decoder.seed = 5;
  const auto r = dec::check_against_reference(dec::find_config("tiny-moe"), p.type, o);
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(r.routings, 24 * 2);
  std::printf("  %s\n", r.detail.c_str());
}

INSTANTIATE_TEST_SUITE_P(Types, MixtralTiny,
                         ::testing::Values(MoeParam{dec::WeightType::int8, true, true},
                                           MoeParam{dec::WeightType::int8, true, false},
                                           MoeParam{dec::WeightType::int8, false, true},
                                           MoeParam{dec::WeightType::bf16, true, true},
                                           MoeParam{dec::WeightType::int8, true, true, false},
                                           MoeParam{dec::WeightType::int8, false, true, false},
                                           MoeParam{dec::WeightType::bf16, true, true, false},
                                           MoeParam{dec::WeightType::int8, true, true, true, true}),
                         [](const ::testing::TestParamInfo<MoeParam>& i) {
                           return std::string(i.param.type == dec::WeightType::int8 ? "int8"
                                                                                    : "bf16") +
                                  (i.param.graph ? "_graph" : "_eager") +
                                  (i.param.prefill ? "_prefill" : "") +
                                  (i.param.parallel ? "" : "_router_in_chain") +
                                  (i.param.whole ? "_attn_whole" : "");
                         });

// A wrong routing (the second expert replaced by the third-ranked, a valid
// id) fails the check as a routing beyond a near tie; an id out of range
// fails it too (NaN rows, never a stray read); so does a right routing that
// the combine reads wrong (the other layer's ids and weights, as a stale
// read would be).
TEST(MixtralModel, WrongRoutingFailsTheCheck) {
  KB_REQUIRE_GPU();
  for (const bool parallel : {true, false}) {
    SCOPED_TRACE(parallel ? "router beside o" : "router in the chain");
    dec::ReferenceCheckOptions o;
    o.decoder.prompt = {1, 2, 3};
    o.steps = 12;
    o.decoder.max_seq = 16;
    o.decoder.moe_route_parallel = parallel;
    o.decoder.route_fault = 1;
    const auto wrong =
        dec::check_against_reference(dec::find_config("tiny-moe"), dec::WeightType::int8, o);
    EXPECT_FALSE(wrong.ok);
    EXPECT_NE(wrong.detail.find("routing differs"), std::string::npos) << wrong.detail;
    o.decoder.route_fault = 2;
    const auto bad =
        dec::check_against_reference(dec::find_config("tiny-moe"), dec::WeightType::int8, o);
    EXPECT_FALSE(bad.ok);
    std::printf("  %s\n  %s\n", wrong.detail.c_str(), bad.detail.c_str());
    o.decoder.route_fault = 3;
    const auto misread =
        dec::check_against_reference(dec::find_config("tiny-moe"), dec::WeightType::int8, o);
    EXPECT_FALSE(misread.ok);
    std::printf("  %s\n", misread.detail.c_str());
  }
}

TEST(MixtralModel, GraphHasOneNodePerKernel) {
  KB_REQUIRE_GPU();
  const auto& c = dec::find_config("tiny-moe");
  for (const bool parallel : {true, false}) {
    dec::DecoderOptions o;
    o.max_seq = 16;
    o.prompt = {1, 2, 3, 4};
    o.moe_route_parallel = parallel;
    dec::Decoder d(c, dec::WeightType::int8, o);
    EXPECT_EQ(d.route_parallel(), parallel);
    EXPECT_EQ(d.graph_nodes(), size_t(dec::Decoder::kernels_per_step(c)));
    EXPECT_EQ(d.prefill_graph_nodes(), size_t(dec::Decoder::prefill_nodes(c, 4)));
  }
}

// One full-size Mixtral layer (8 experts of 14336 x 4096, int8) against the
// CPU: prefill and 4 steps, the routing included.
TEST(MixtralModel, OneFullLayerMatchesCpuReference) {
  KB_REQUIRE_GPU();
  dec::ModelConfig c = dec::find_config("Mixtral-8x7B-v0.1");
  c.n_layers = 1;
  dec::ReferenceCheckOptions o;
  o.decoder.prompt = {1, 15043, 29892, 590, 1024, 338};
  o.steps = 10;
  o.decoder.max_seq = 16;
  o.decoder.attn_min_chunk = 2;
  o.prefill = true;
  const auto r = dec::check_against_reference(c, dec::WeightType::int8, o);
  EXPECT_TRUE(r.ok) << r.detail;
  std::printf("  %s\n", r.detail.c_str());
}

}  // namespace
