// The decode step: each of its kernels alone against a CPU reference, then
// the whole tiny model (bf16 and int8) against the CPU fp32 reference, graph
// replay against eager launches, and the guards (cache overflow, a model that
// does not fit). Byte counts and layout run without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/decode/decode_check.h"
#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/decode_ref.h"
#include "kernels/decode/decoder.h"
#include "kernels/decode/model_config.h"
#include "kernels/decode/weight_init.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

namespace dec = kb::decode;
using kb::bf16;

std::vector<float> round_bf16(std::vector<float> v) {
  for (auto& x : v) x = kb::bf16_to_float(kb::float_to_bf16(x));
  return v;
}

float rms_scale(const std::vector<float>& x, float eps) {
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  return static_cast<float>(1.0 / std::sqrt(ss / x.size() + eps));
}

// ------------------------------------------------------------ no GPU needed

TEST(DecodeConfig, SeedModelSizeMatchesGptFast) {
  // The anchors' weight bytes of gpt-fast's Llama-2-7B: 13.21 GB bf16, 6.61 GB int8.
  const auto& c = dec::find_config("Llama-2-7b-chat-hf");
  const auto b16 = dec::weight_bytes(c, dec::WeightType::bf16);
  const auto i8 = dec::weight_bytes(c, dec::WeightType::int8);
  EXPECT_NEAR(b16.seed_model_size() / 1e9, 13.21, 0.01);
  EXPECT_NEAR(i8.seed_model_size() / 1e9, 6.61, 0.01);
  EXPECT_DOUBLE_EQ(b16.embedding, 32000.0 * 4096 * 2);
  EXPECT_EQ(b16.scales, 0.0);
  // 6.607e9 parameters outside the embedding.
  EXPECT_NEAR(b16.linear / 2 + b16.norms / 2, 6.607e9, 0.001e9);
  // KV cache: 32 layers x K and V x 32 heads x 128 x 2 bytes per position.
  EXPECT_DOUBLE_EQ(dec::kv_bytes_read(c, 10), 10.0 * 32 * 2 * 4096 * 2);
}

TEST(DecodeConfig, TableAndLimits) {
  EXPECT_THROW(dec::find_config("no-such-model"), std::invalid_argument);
  EXPECT_EQ(dec::unsupported_reason(dec::find_config("Llama-2-7b-chat-hf")), "");
  EXPECT_EQ(dec::unsupported_reason(dec::find_config("Meta-Llama-3-8B")), "");
  EXPECT_EQ(dec::unsupported_reason(dec::find_config("tiny")), "");
  EXPECT_EQ(dec::unsupported_reason(dec::find_config("Mixtral-8x7B-v0.1")), "");
  EXPECT_EQ(dec::unsupported_reason(dec::find_config("tiny-moe")), "");
  dec::ModelConfig c = dec::find_config("tiny");
  c.head_dim = 96;
  EXPECT_NE(dec::unsupported_reason(c), "");
  c = dec::find_config("tiny");
  c.n_heads = 6;  // group 3
  EXPECT_NE(dec::unsupported_reason(c), "");
}

TEST(DecodeConfig, DeviceBytesCoverWeightsAndCache) {
  const auto& c = dec::find_config("Llama-2-7b-chat-hf");
  for (auto t : {dec::WeightType::bf16, dec::WeightType::int8}) {
    const auto wb = dec::weight_bytes(c, t);
    const double cache = 2.0 * 32 * 4096 * 256 * 2;
    const double need = double(dec::Decoder::device_bytes(c, t, 256));
    EXPECT_GE(need, wb.linear + wb.scales + wb.embedding + cache);
    EXPECT_LT(need, wb.linear + wb.scales + wb.embedding + cache + 64e6);  // buffers are small
  }
}

TEST(DecodeConfig, HashInitIsUniformAndBounded) {
  const uint32_t key = dec::tensor_key(7, dec::layer_tensor(3, dec::kGateUp));
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const float u = dec::hash_uniform(key, i);
    ASSERT_GE(u, -1.f);
    ASSERT_LT(u, 1.f);
    sum += u;
    sq += double(u) * u;
    const int8_t q = dec::hash_int8(key, i);
    ASSERT_GE(q, -127);
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0 / 3, 0.01);
  // Different tensors and seeds give different values.
  EXPECT_NE(dec::hash_uniform(key, 5), dec::hash_uniform(dec::tensor_key(7, 0), 5));
  EXPECT_NE(dec::tensor_key(7, 1), dec::tensor_key(8, 1));
}

TEST(DecodeReference, AttentionOfOnePositionIsItsValue) {
  // With one cached position the softmax is 1: the output is V.
  const int hd = 4;
  std::vector<float> q = {1, 2, 3, 4, -1, 0, 2, 1}, k = {0.5, 1, 1, 2}, v = {3, -2, 7, 1};
  std::vector<float> out(8);
  dec::attention_ref(q.data(), k.data(), v.data(), 2, 1, hd, 1, 1, out.data());
  for (int h = 0; h < 2; ++h)
    for (int e = 0; e < hd; ++e) EXPECT_FLOAT_EQ(out[h * hd + e], v[e]);
}

TEST(DecodeReference, RopeAtZeroIsIdentityAndKeepsNorm) {
  std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8}, w = v;
  dec::rope_ref(w.data(), 8, 0, 10000.f);
  EXPECT_EQ(v, w);
  dec::rope_ref(w.data(), 8, 37, 10000.f);
  double a = 0, b = 0;
  for (int i = 0; i < 8; ++i) {
    a += v[i] * v[i];
    b += w[i] * w[i];
  }
  EXPECT_NEAR(a, b, 1e-4);
  EXPECT_NE(v, w);
}

// The reference on the hash weights, on the CPU alone: finite logits of a
// sane size that change from step to step (the random model is not degenerate).
TEST(DecodeReference, TinyModelDecodesSanely) {
  for (auto t : {dec::WeightType::bf16, dec::WeightType::int8}) {
    const auto w = dec::make_host_weights(dec::find_config("tiny"), t, 3);
    dec::RefDecoder ref(w, 32);
    std::vector<float> prev;
    int token = 1;
    for (int step = 0; step < 20; ++step) {
      const auto lg = ref.step(token);
      double sum = 0, sq = 0;
      for (float v : lg) {
        ASSERT_TRUE(std::isfinite(v));
        sum += v;
        sq += double(v) * v;
      }
      const double sd = std::sqrt(sq / lg.size() - (sum / lg.size()) * (sum / lg.size()));
      EXPECT_GT(sd, 0.2) << "step " << step;
      EXPECT_LT(sd, 20.0) << "step " << step;
      if (!prev.empty()) EXPECT_NE(lg, prev);
      prev = lg;
      token = dec::argmax_ref(lg);
    }
  }
}

// ------------------------------------------------------------ kernels alone

TEST(DecodeKernels, InitMatchesHostHash) {
  KB_REQUIRE_GPU();
  const int64_t n = 1000 * 8 + 5;  // a tail past the last vector
  kb::DeviceBuffer<bf16> w(n), s(333);
  kb::DeviceBuffer<int8_t> q(n);
  dec::init_bf16(w.get(), n, 99, 42, 0.25f, nullptr);
  dec::init_int8(q.get(), n, 99, 43, nullptr);
  dec::init_row_scales(s.get(), 333, 99, 43, 0.25f, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto wh = w.download();
  const auto qh = q.download();
  const auto sh = s.download();
  const uint32_t kw = dec::tensor_key(99, 42), kq = dec::tensor_key(99, 43),
                 ks = dec::tensor_key(99, 43 + dec::kScaleTensorOffset);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(kb::bf16_to_float(wh[i]),
              kb::bf16_to_float(kb::float_to_bf16(0.25f * dec::hash_uniform(kw, i))))
        << "bf16 weight " << i;
    ASSERT_EQ(qh[i], dec::hash_int8(kq, i)) << "int8 weight " << i;
  }
  for (int i = 0; i < 333; ++i)
    ASSERT_EQ(kb::bf16_to_float(sh[i]),
              kb::bf16_to_float(kb::float_to_bf16(dec::row_scale_value(ks, i, 0.25f))))
        << "scale " << i;
}

TEST(DecodeKernels, EmbedReadsTheTokenAtPos) {
  KB_REQUIRE_GPU();
  const int vocab = 50, dim = 64, cap = 8;
  auto eh = kb::random_bf16(vocab * dim, 5);
  kb::DeviceBuffer<bf16> emb(eh.size()), x(dim);
  kb::DeviceBuffer<int32_t> tokens(cap), pos(1);
  emb.upload(eh);
  tokens.upload({3, 17, 49, 0, 60, -1, 2, 2});
  for (int p : {1, 2, 4, 5, 8}) {
    pos.upload({p});
    x.poison();
    dec::embed(emb.get(), tokens.get(), pos.get(), cap, vocab, dim, x.get(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto out = kb::to_float(x.download());
    const int tok = p == 1 ? 17 : p == 2 ? 49 : -1;  // 60 and -1 are out of range; pos 8 too
    for (int i = 0; i < dim; ++i) {
      if (tok >= 0)
        ASSERT_EQ(out[i], kb::bf16_to_float(eh[size_t(tok) * dim + i])) << "pos " << p;
      else
        ASSERT_TRUE(std::isnan(out[i])) << "pos " << p << ": a bad token must give NaN";
    }
  }
}

struct AttnParam {
  int head_dim, group, n_kv_heads, len, n_splits, min_chunk;
  bool whole = false;  // AttentionArgs::whole (and x_ready: r before the wait)
};
void PrintTo(const AttnParam& p, std::ostream* os) {
  *os << "hd" << p.head_dim << " G" << p.group << " KVH" << p.n_kv_heads << " len" << p.len
      << " splits" << p.n_splits << " min_chunk" << p.min_chunk << (p.whole ? " whole" : "");
}

class DecodeAttention : public ::testing::TestWithParam<AttnParam> {};

// The fused kernel: r from x, RoPE of q and k at pos, K/V append at pos, and
// attention over 0..pos, against the same steps on the CPU (with the
// appended row rounded to bf16 as the cache stores it).
TEST_P(DecodeAttention, MatchesReference) {
  const AttnParam p = GetParam();
  if (p.whole)
    KB_REQUIRE_CC(9, 0);
  else
    KB_REQUIRE_GPU();
  const int hd = p.head_dim, KVH = p.n_kv_heads, H = KVH * p.group, dim = 512;
  const int max_seq = p.len + 3, pos = p.len - 1;
  const float eps = 1e-5f, theta = 10000.f;
  const uint64_t seed = 100 + p.len * 7 + p.n_splits;
  const size_t cache_n = size_t(KVH) * max_seq * hd;
  // The residual x with an offset and a scale so that r is not 1.
  auto xh = kb::random_bf16(dim, seed, -2.f, 3.f);
  auto qkvh = kb::random_bf16(size_t(H + 2 * KVH) * hd, seed + 1, -2.f, 2.f);
  auto kch = kb::random_bf16(cache_n, seed + 2, -1.5f, 1.5f);
  auto vch = kb::random_bf16(cache_n, seed + 3, -1.f, 1.f);
  // Rows at and past pos start as NaN: the kernel must write pos and read no further.
  const bf16 nan = kb::float_to_bf16(NAN);
  for (int h = 0; h < KVH; ++h)
    for (int j = pos; j < max_seq; ++j)
      for (int e = 0; e < hd; ++e)
        kch[(size_t(h) * max_seq + j) * hd + e] = vch[(size_t(h) * max_seq + j) * hd + e] = nan;

  kb::DeviceBuffer<bf16> x(dim), qkv(qkvh.size()), kc(cache_n), vc(cache_n), out(size_t(H) * hd);
  kb::DeviceBuffer<int32_t> dpos(1), counters(KVH);
  dec::ModelConfig cfg;
  cfg.n_heads = H;
  cfg.n_kv_heads = KVH;
  cfg.head_dim = hd;
  kb::DeviceBuffer<float> partial(dec::attention_workspace_floats(cfg, p.n_splits));
  x.upload(xh);
  qkv.upload(qkvh);
  kc.upload(kch);
  vc.upload(vch);
  dpos.upload({pos});
  counters.upload(std::vector<int32_t>(KVH, 0));

  dec::AttentionArgs a;
  a.qkv = qkv.get();
  a.x = x.get();
  a.dim = dim;
  a.eps = eps;
  a.rope_theta = theta;
  a.n_heads = H;
  a.n_kv_heads = KVH;
  a.head_dim = hd;
  a.k_cache = kc.get();
  a.v_cache = vc.get();
  a.max_seq = max_seq;
  a.pos = dpos.get();
  a.out = out.get();
  a.n_splits = p.n_splits;
  a.min_chunk = p.min_chunk;
  a.partial = partial.get();
  a.counters = counters.get();
  a.whole = p.whole;
  a.x_ready = p.whole;

  // CPU: r, q and the new k/v, the appended rows (bf16 as stored), attention.
  const auto xf = kb::to_float(xh), qkvf = kb::to_float(qkvh);
  const float r = rms_scale(xf, eps);
  std::vector<float> q(size_t(H) * hd);
  for (size_t i = 0; i < q.size(); ++i) q[i] = r * qkvf[i];
  for (int h = 0; h < H; ++h) dec::rope_ref(q.data() + size_t(h) * hd, hd, pos, theta);
  auto kf = kb::to_float(kch), vf = kb::to_float(vch);
  std::vector<float> k_new(size_t(KVH) * hd), v_new(size_t(KVH) * hd);
  for (int h = 0; h < KVH; ++h) {
    for (int e = 0; e < hd; ++e) {
      k_new[h * hd + e] = r * qkvf[size_t(H) * hd + h * hd + e];
      v_new[h * hd + e] = r * qkvf[size_t(H + KVH) * hd + h * hd + e];
    }
    dec::rope_ref(k_new.data() + h * hd, hd, pos, theta);
  }
  k_new = round_bf16(k_new);
  v_new = round_bf16(v_new);
  for (int h = 0; h < KVH; ++h)
    for (int e = 0; e < hd; ++e) {
      kf[(size_t(h) * max_seq + pos) * hd + e] = k_new[h * hd + e];
      vf[(size_t(h) * max_seq + pos) * hd + e] = v_new[h * hd + e];
    }
  std::vector<float> ref(size_t(H) * hd);
  dec::attention_ref(q.data(), kf.data(), vf.data(), H, KVH, hd, max_seq, p.len, ref.data());

  // Twice: the second launch finds the counters the first one left (zero).
  for (int rep = 0; rep < 2; ++rep) {
    out.poison();
    dec::attention(a, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = kb::to_float(out.download());
    const auto c = kb::compare(got, ref, 1e-2);
    EXPECT_TRUE(c.ok) << "launch " << rep << ": " << c.text();
    EXPECT_EQ(counters.download(), std::vector<int32_t>(KVH, 0)) << "counters not left at zero";
  }
  // The appended rows, and nothing written past pos.
  const auto kg = kb::to_float(kc.download()), vg = kb::to_float(vc.download());
  for (int h = 0; h < KVH; ++h) {
    std::vector<float> krow(kg.begin() + (size_t(h) * max_seq + pos) * hd,
                            kg.begin() + (size_t(h) * max_seq + pos + 1) * hd);
    std::vector<float> vrow(vg.begin() + (size_t(h) * max_seq + pos) * hd,
                            vg.begin() + (size_t(h) * max_seq + pos + 1) * hd);
    std::vector<float> kw(k_new.begin() + h * hd, k_new.begin() + (h + 1) * hd);
    std::vector<float> vw(v_new.begin() + h * hd, v_new.begin() + (h + 1) * hd);
    EXPECT_TRUE(kb::compare(krow, kw, 1e-2).ok) << "K row of kv head " << h;
    EXPECT_TRUE(kb::compare(vrow, vw, 1e-2).ok) << "V row of kv head " << h;
    for (int j = pos + 1; j < max_seq; ++j)
      ASSERT_TRUE(std::isnan(kg[(size_t(h) * max_seq + j) * hd])) << "wrote past pos at " << j;
    // Rows before pos are unchanged.
    for (int j = 0; j < pos; ++j)
      ASSERT_EQ(kg[(size_t(h) * max_seq + j) * hd + 1], kf[(size_t(h) * max_seq + j) * hd + 1]);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DecodeAttention,
    ::testing::Values(AttnParam{128, 1, 4, 1, 1, 16},     // first position: softmax of one
                      AttnParam{128, 1, 4, 206, 1, 16},   // one block over the whole cache
                      AttnParam{128, 1, 32, 206, 9, 16},  // Llama-2-7B at the end of the run
                      AttnParam{128, 4, 2, 100, 8, 1},    // GQA 4 (Llama-3-8B, Mixtral)
                      AttnParam{128, 8, 1, 77, 5, 4},     // GQA 8
                      AttnParam{128, 2, 3, 64, 64, 1},    // one position per split, 64 splits
                      AttnParam{128, 1, 2, 20, 64, 1},    // more splits than positions
                      AttnParam{64, 2, 2, 37, 4, 1},      // the tiny config's shape
                      AttnParam{64, 1, 2, 1000, 7, 16},   // long: chunks of 143, odd warps' share
                      AttnParam{64, 8, 2, 9, 3, 3},       // a full last chunk
                      // one block a kv head, the cache copied into shared memory
                      AttnParam{128, 4, 8, 106, 1, 1, true},   // Mixtral mid-generation
                      AttnParam{128, 4, 8, 206, 1, 1, true},   // Mixtral at the end
                      AttnParam{128, 1, 32, 206, 1, 1, true},  // Llama-2-7B at the end
                      AttnParam{128, 1, 4, 1, 1, 1, true},     // first position: no copy
                      AttnParam{64, 2, 2, 37, 1, 1, true}),    // the tiny config's shape
    [](const ::testing::TestParamInfo<AttnParam>& i) {
      const auto& p = i.param;
      return "hd" + std::to_string(p.head_dim) + "_G" + std::to_string(p.group) + "_KVH" +
             std::to_string(p.n_kv_heads) + "_len" + std::to_string(p.len) + "_splits" +
             std::to_string(p.n_splits) + "_chunk" + std::to_string(p.min_chunk) +
             (p.whole ? "_whole" : "");
    });

TEST(DecodeKernels, AttentionPastTheCacheGivesNaN) {
  KB_REQUIRE_GPU();
  const int hd = 64, KVH = 2, H = 4, dim = 64, max_seq = 8;
  kb::DeviceBuffer<bf16> x(dim), qkv(size_t(H + 2 * KVH) * hd), kc(size_t(KVH) * max_seq * hd),
      vc(size_t(KVH) * max_seq * hd), out(size_t(H) * hd);
  kb::DeviceBuffer<int32_t> dpos(1), counters(KVH);
  kb::DeviceBuffer<float> partial(4096);
  x.upload(kb::random_bf16(dim, 1));
  qkv.upload(kb::random_bf16(qkv.size(), 2));
  kc.upload(std::vector<bf16>(kc.size(), kb::float_to_bf16(0.5f)));
  vc.upload(std::vector<bf16>(vc.size(), kb::float_to_bf16(0.5f)));
  dpos.upload({max_seq});
  counters.upload(std::vector<int32_t>(KVH, 0));
  dec::AttentionArgs a;
  a.qkv = qkv.get();
  a.x = x.get();
  a.dim = dim;
  a.n_heads = H;
  a.n_kv_heads = KVH;
  a.head_dim = hd;
  a.k_cache = kc.get();
  a.v_cache = vc.get();
  a.max_seq = max_seq;
  a.pos = dpos.get();
  a.out = out.get();
  a.n_splits = 2;
  a.partial = partial.get();
  a.counters = counters.get();
  dec::attention(a, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (float v : kb::to_float(out.download())) ASSERT_TRUE(std::isnan(v));
  for (float v : kb::to_float(kc.download())) ASSERT_EQ(v, 0.5f) << "no write past the cache";
}

struct Sampler {
  int vocab, dim = 256, prompt_len, capacity = 16;
  kb::DeviceBuffer<bf16> raw, x;
  kb::DeviceBuffer<float> logits, pv;
  kb::DeviceBuffer<int32_t> tokens, pos, pi, counter;
  Sampler(int v, int prompt)
      : vocab(v),
        prompt_len(prompt),
        raw(v),
        x(256),
        logits(v),
        pv(dec::sample_blocks(v)),
        tokens(16),
        pos(1),
        pi(dec::sample_blocks(v)),
        counter(1) {
    counter.upload({0});
  }
  void launch() {
    dec::SampleArgs a;
    a.raw_logits = raw.get();
    a.x = x.get();
    a.dim = dim;
    a.vocab = vocab;
    a.logits = logits.get();
    a.tokens = tokens.get();
    a.capacity = capacity;
    a.prompt_len = prompt_len;
    a.pos = pos.get();
    a.partial_value = pv.get();
    a.partial_index = pi.get();
    a.counter = counter.get();
    dec::sample_greedy(a, nullptr);
  }
};

TEST(DecodeKernels, SampleGreedyPicksTheArgmaxAndAdvances) {
  KB_REQUIRE_GPU();
  for (int vocab : {1000, 2048, 32000, 128256}) {
    Sampler s(vocab, 3);
    auto xh = kb::random_bf16(256, vocab, -2.f, 2.f);
    s.x.upload(xh);
    const float r = rms_scale(kb::to_float(xh), 1e-5f);
    std::vector<int32_t> toks(16, 7);
    s.tokens.upload(toks);
    s.pos.upload({0});
    // Steps at pos 0 and 1 keep the prompt; from pos 2 on the argmax is written.
    for (int step = 0; step < 6; ++step) {
      auto rh = kb::random_bf16(vocab, vocab * 10 + step, -5.f, 5.f);
      s.raw.upload(rh);
      s.launch();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto lg = s.logits.download();
      const auto rf = kb::to_float(rh);
      for (int i = 0; i < vocab; i += 97)
        ASSERT_NEAR(lg[i], rf[i] * r, 1e-5 * std::fabs(rf[i] * r) + 1e-7) << "logit " << i;
      const auto t = s.tokens.download();
      ASSERT_EQ(s.pos.download()[0], step + 1);
      ASSERT_EQ(s.counter.download()[0], 0) << "counter not left at zero";
      if (step + 1 < 3)
        EXPECT_EQ(t[step + 1], 7) << "a prompt token was overwritten";
      else
        EXPECT_EQ(t[step + 1], dec::argmax_ref(lg)) << "vocab " << vocab << " step " << step;
    }
  }
}

TEST(DecodeKernels, SampleGreedyBreaksTiesTowardTheLowerIndex) {
  KB_REQUIRE_GPU();
  const int vocab = 32000;
  Sampler s(vocab, 1);
  s.x.upload(kb::random_bf16(256, 3, 0.5f, 1.f));
  std::vector<bf16> rh(vocab, kb::float_to_bf16(-1.f));
  // The same maximum in three blocks and twice in one block.
  for (int i : {31999, 20001, 4097, 4099, 30000}) rh[i] = kb::float_to_bf16(3.f);
  s.raw.upload(rh);
  s.pos.upload({0});
  s.launch();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(s.tokens.download()[1], 4097);
}

// ------------------------------------------------------------ the whole model

struct ModelParam {
  dec::WeightType type;
  bool graph;
  int splits, min_chunk;
  bool prefill = false;
  bool whole = false;  // DecoderOptions::attn_whole (a 9.0 GPU; else the split attention)
};
void PrintTo(const ModelParam& p, std::ostream* os) {
  *os << dec::weight_type_name(p.type) << (p.graph ? " graph" : " eager") << " splits " << p.splits
      << " min_chunk " << p.min_chunk << (p.prefill ? " prefill" : "") << (p.whole ? " whole" : "");
}

class DecodeTiny : public ::testing::TestWithParam<ModelParam> {};

// The tiny model against the CPU fp32 reference, step by step: logits,
// greedy tokens (equal unless a near tie), KV rows, final residual.
TEST_P(DecodeTiny, MatchesCpuReference) {
  KB_REQUIRE_GPU();
  const ModelParam p = GetParam();
  dec::ReferenceCheckOptions o;
  o.decoder.prompt = {1, 15043, 29892, 590, 1024, 338};
  o.steps = 40;
  o.decoder.max_seq = 48;
  o.decoder.attn_splits = p.splits;
  o.decoder.attn_min_chunk = p.min_chunk;
  o.decoder.capture = p.graph;
  o.prefill = p.prefill;
  o.decoder.attn_whole = p.whole;
  o.decoder.seed = 11;
  const auto r = dec::check_against_reference(dec::find_config("tiny"), p.type, o);
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_LE(r.worst_logits_rel, 3e-2);
  std::printf("  %s\n", r.detail.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Types, DecodeTiny,
    ::testing::Values(ModelParam{dec::WeightType::bf16, true, 4, 2},
                      ModelParam{dec::WeightType::int8, true, 4, 2},
                      ModelParam{dec::WeightType::bf16, false, 1, 16},
                      ModelParam{dec::WeightType::int8, false, 16, 1},
                      ModelParam{dec::WeightType::bf16, true, 4, 2, true},
                      ModelParam{dec::WeightType::int8, false, 1, 16, true},
                      ModelParam{dec::WeightType::int8, true, 4, 2, true, true},
                      ModelParam{dec::WeightType::bf16, false, 4, 2, false, true}),
    [](const ::testing::TestParamInfo<ModelParam>& i) {
      return std::string(i.param.type == dec::WeightType::int8 ? "int8" : "bf16") +
             (i.param.graph ? "_graph" : "_eager") + "_splits" + std::to_string(i.param.splits) +
             (i.param.prefill ? "_prefill" : "") + (i.param.whole ? "_whole" : "");
    });

// The prompt as one prefill leaves what the same number of single-token
// steps leaves: the same next token, logits and K rows within 1e-2 (the
// multi-token gemv may split K otherwise, so the sums' order differs), and
// the same 5 steps after. Prompts of 4 tokens (one chunk) and 11 (8 + 3),
// graph and eager.
TEST(DecodeModel, PrefillEqualsPromptSteps) {
  KB_REQUIRE_GPU();
  const auto& c = dec::find_config("tiny");
  for (auto t : {dec::WeightType::bf16, dec::WeightType::int8})
    for (int P : {4, 11}) {
      dec::DecoderOptions o;
      o.max_seq = 24;
      o.attn_splits = 3;
      o.attn_min_chunk = 2;
      o.prompt.clear();
      for (int i = 0; i < P; ++i) o.prompt.push_back((37 * i + 5) % c.vocab);
      dec::Decoder d(c, t, o);
      EXPECT_EQ(d.prefill_graph_nodes(), size_t(dec::Decoder::prefill_nodes(c, P)));
      cudaStream_t s;
      ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
      const int more = 5;
      d.reset(s);
      for (int i = 0; i < P + more; ++i) d.replay(s);
      const auto want_tok = d.tokens();
      const auto want_logits = d.logits();
      const auto want_k = d.cache_row(false, 1, 0, P - 1);
      for (bool eager : {false, true}) {
        SCOPED_TRACE(std::string(dec::weight_type_name(t)) + " P=" + std::to_string(P) +
                     (eager ? " eager" : " graph"));
        d.prefill(s, eager);
        EXPECT_EQ(d.position(), P);
        for (int i = 0; i < more; ++i) d.replay(s);
        EXPECT_EQ(d.position(), P + more);
        EXPECT_EQ(d.tokens(), want_tok);
        const auto cl = kb::compare(d.logits(), want_logits, 1e-2);
        EXPECT_TRUE(cl.ok) << cl.text();
        const auto ck = kb::compare(d.cache_row(false, 1, 0, P - 1), want_k, 1e-2);
        EXPECT_TRUE(ck.ok) << ck.text();
      }
      cudaStreamDestroy(s);
    }
}

// GQA 4 at head_dim 128 (Llama-3-8B's attention shape) on a small model.
TEST(DecodeModel, Gqa4HeadDim128MatchesCpuReference) {
  KB_REQUIRE_GPU();
  dec::ModelConfig c = dec::find_config("tiny");
  c.name = "small-gqa4";
  c.dim = 512;
  c.n_heads = 8;
  c.n_kv_heads = 2;
  c.head_dim = 128;
  c.ffn = 1408;
  c.vocab = 2000;
  c.rope_theta = 500000.f;
  for (auto t : {dec::WeightType::bf16, dec::WeightType::int8}) {
    dec::ReferenceCheckOptions o;
    o.steps = 20;
    o.decoder.max_seq = 24;
    o.decoder.attn_min_chunk = 3;
    const auto r = dec::check_against_reference(c, t, o);
    EXPECT_TRUE(r.ok) << r.detail;
  }
}

// The GPU fill, through the decoder's own layout and dequantization, equals
// the host's recomputation of every weight.
TEST(DecodeModel, GpuWeightsEqualTheHostHash) {
  KB_REQUIRE_GPU();
  const auto& c = dec::find_config("tiny");
  for (auto t : {dec::WeightType::bf16, dec::WeightType::int8}) {
    dec::DecoderOptions o;
    o.max_seq = 8;
    o.seed = 77;
    dec::Decoder d(c, t, o);
    const auto gpu = d.host_weights();
    const auto host = dec::make_host_weights(c, t, 77);
    EXPECT_EQ(gpu.embedding, host.embedding);
    for (int l = 0; l < c.n_layers; ++l) {
      EXPECT_EQ(gpu.layers[l].qkv, host.layers[l].qkv) << "layer " << l;
      EXPECT_EQ(gpu.layers[l].wo, host.layers[l].wo) << "layer " << l;
      EXPECT_EQ(gpu.layers[l].gate_up, host.layers[l].gate_up) << "layer " << l;
      EXPECT_EQ(gpu.layers[l].down, host.layers[l].down) << "layer " << l;
    }
    EXPECT_EQ(gpu.output, host.output);
  }
}

TEST(DecodeModel, GraphHasOneNodePerKernel) {
  KB_REQUIRE_GPU();
  const auto& c = dec::find_config("tiny");
  for (auto t : {dec::WeightType::bf16, dec::WeightType::int8}) {
    dec::DecoderOptions o;
    o.max_seq = 16;
    dec::Decoder d(c, t, o);
    // If this fails, a gemv launches more than one kernel: the experiment's
    // `launches` (Decoder::kernels_per_step, prefill_nodes) must count them.
    EXPECT_EQ(d.graph_nodes(), size_t(dec::Decoder::kernels_per_step(c)));
    EXPECT_EQ(d.prefill_graph_nodes(),
              size_t(dec::Decoder::prefill_nodes(c, int(o.prompt.size()))));
  }
}

TEST(DecodeModel, GraphReplayEqualsEagerAndRestartsAfterReset) {
  KB_REQUIRE_GPU();
  const auto& c = dec::find_config("tiny");
  dec::DecoderOptions o;
  o.max_seq = 40;
  o.prompt = {5, 6, 7, 8};
  o.attn_splits = 3;
  o.attn_min_chunk = 2;
  dec::Decoder d(c, dec::WeightType::int8, o);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  const int steps = 30;
  auto run = [&](bool graph) {
    d.reset(s);
    for (int i = 0; i < steps; ++i) graph ? d.replay(s) : d.step(s);
    return std::make_pair(d.tokens(), d.logits());
  };
  const auto eager = run(false);
  const auto graph1 = run(true);
  const auto graph2 = run(true);  // reset restarts the same generation
  EXPECT_EQ(d.position(), steps);
  for (const auto* g : {&graph1, &graph2}) {
    EXPECT_TRUE(std::equal(eager.first.begin(), eager.first.begin() + steps + 1, g->first.begin()));
    const auto cmp = kb::compare(g->second, eager.second, 1e-5);
    EXPECT_TRUE(cmp.ok) << cmp.text();
  }
  EXPECT_TRUE(std::equal(o.prompt.begin(), o.prompt.end(), graph1.first.begin()));
  cudaStreamDestroy(s);
}

TEST(DecodeModel, StepsPastTheCacheGiveNaNNotAFault) {
  KB_REQUIRE_GPU();
  dec::DecoderOptions o;
  o.max_seq = 6;
  o.prompt = {1, 2};
  dec::Decoder d(dec::find_config("tiny"), dec::WeightType::bf16, o);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  d.reset(s);
  for (int i = 0; i < 6; ++i) d.replay(s);
  for (float v : d.logits()) ASSERT_TRUE(std::isfinite(v));
  d.replay(s);  // pos 6 = max_seq
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  size_t nan = 0;
  for (float v : d.logits()) nan += std::isnan(v);
  EXPECT_EQ(nan, size_t(dec::find_config("tiny").vocab));
  cudaStreamDestroy(s);
}

TEST(DecodeModel, RefusesAModelThatDoesNotFit) {
  KB_REQUIRE_GPU();
  dec::ModelConfig c = dec::find_config("Llama-2-7b-chat-hf");
  c.n_layers = 4000;  // 1.6 TB
  try {
    dec::Decoder d(c, dec::WeightType::bf16, dec::DecoderOptions{});
    FAIL() << "a 1.6 TB model was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("free"), std::string::npos) << e.what();
  }
}

// The experiment's check at full size, one layer (every kernel and gemv
// shape of the 7B step) against the CPU.
TEST(DecodeModel, Llama2OneLayerMatchesCpuReference) {
  KB_REQUIRE_GPU();
  dec::ModelConfig c = dec::find_config("Llama-2-7b-chat-hf");
  c.n_layers = 1;
  for (auto t : {dec::WeightType::bf16, dec::WeightType::int8}) {
    dec::ReferenceCheckOptions o;
    o.decoder.prompt = {1, 15043, 29892, 590, 1024, 338};
    o.steps = 10;
    o.decoder.max_seq = 16;
    o.decoder.attn_min_chunk = 2;
    for (bool prefill : {false, true}) {
      o.prefill = prefill;
      const auto r = dec::check_against_reference(c, t, o);
      EXPECT_TRUE(r.ok) << r.detail;
      std::printf("  %s\n", r.detail.c_str());
    }
  }
}

}  // namespace
