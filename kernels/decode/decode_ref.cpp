#include "kernels/decode/decode_ref.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/common/host_math.h"
#include "kernels/common/host_parallel.h"
#include "kernels/decode/moe_routing.h"
#include "kernels/decode/weight_init.h"
#include "kernels/rms_norm/rms_norm_cpu.h"
#include "kernels/swiglu/swiglu_cpu.h"

namespace kb::decode {

namespace {

// y[n] = W[n] · x with eight partial sums: independent chains the
// compiler can pipeline.
void linear_row(const float* W, const float* x, float* y, int64_t n, int64_t K) {
  const float* w = W + n * K;
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    for (int u = 0; u < 8; ++u) acc[u] += w[k + u] * x[k + u];
  for (; k < K; ++k) acc[0] += w[k] * x[k];
  y[n] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// y = W·x, W row-major [N, K].
void linear_ref(const float* W, const float* x, float* y, int64_t N, int64_t K) {
  if (N * K < (int64_t(1) << 22)) {  // threads cost more than they save
    for (int64_t n = 0; n < N; ++n) linear_row(W, x, y, n, K);
    return;
  }
  parallel_for(N, [&](int64_t n) { linear_row(W, x, y, n, K); });
}

std::vector<float> host_tensor(WeightType t, int64_t rows, int64_t cols, uint64_t seed,
                               uint32_t tensor) {
  std::vector<float> w(size_t(rows) * cols);
  const float amp = weight_amplitude(cols);
  const uint32_t key = tensor_key(seed, tensor);
  if (t == WeightType::bf16) {
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = bf16_to_float(float_to_bf16(amp * hash_uniform(key, i)));
    return w;
  }
  const uint32_t skey = tensor_key(seed, tensor + kScaleTensorOffset);
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = bf16_to_float(float_to_bf16(row_scale_value(skey, r, amp)));
    for (int64_t k = 0; k < cols; ++k) {
      const size_t i = size_t(r) * cols + k;
      w[i] = scale * static_cast<float>(hash_int8(key, i));
    }
  }
  return w;
}

}  // namespace

HostWeights make_host_weights(const ModelConfig& c, WeightType t, uint64_t seed) {
  HostWeights w;
  w.cfg = c;
  const uint32_t ekey = tensor_key(seed, kEmbeddingTensor);
  w.embedding.resize(size_t(c.vocab) * c.dim);
  for (size_t i = 0; i < w.embedding.size(); ++i)
    w.embedding[i] = bf16_to_float(float_to_bf16(hash_uniform(ekey, i)));
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    HostLayer& L = w.layers[l];
    L.qkv = host_tensor(t, c.qkv_rows(), c.dim, seed, layer_tensor(l, kQkv));
    L.wo = host_tensor(t, c.dim, c.q_size(), seed, layer_tensor(l, kWo));
    if (c.moe()) {
      const int64_t E = c.n_experts;
      L.router = host_tensor(t, E, c.dim, seed, moe_tensor(l, kRouter));
      L.experts_gate_up = host_tensor(t, E * 2 * c.ffn, c.dim, seed, moe_tensor(l, kExpertsGateUp));
      L.experts_down = host_tensor(t, E * c.dim, c.ffn, seed, moe_tensor(l, kExpertsDown));
    } else {
      L.gate_up = host_tensor(t, 2 * int64_t(c.ffn), c.dim, seed, layer_tensor(l, kGateUp));
      L.down = host_tensor(t, c.dim, c.ffn, seed, layer_tensor(l, kDown));
    }
  }
  w.output = host_tensor(t, c.vocab, c.dim, seed, kOutputTensor);
  return w;
}

void rope_ref(float* v, int head_dim, int pos, float theta) {
  for (int i = 0; i < head_dim / 2; ++i) {
    const double freq = std::pow(double(theta), -2.0 * i / head_dim);
    const double a = pos * freq;
    const double c = std::cos(a), s = std::sin(a);
    const double x0 = v[2 * i], x1 = v[2 * i + 1];
    v[2 * i] = static_cast<float>(x0 * c - x1 * s);
    v[2 * i + 1] = static_cast<float>(x1 * c + x0 * s);
  }
}

void attention_ref(const float* q, const float* k_cache, const float* v_cache, int n_heads,
                   int n_kv_heads, int head_dim, int max_seq, int len, float* out) {
  const int group = n_heads / n_kv_heads;
  const double scale = 1.0 / std::sqrt(double(head_dim));
  std::vector<double> s(len);
  for (int h = 0; h < n_heads; ++h) {
    const int kvh = h / group;
    const float* qh = q + size_t(h) * head_dim;
    const float* kh = k_cache + size_t(kvh) * max_seq * head_dim;
    const float* vh = v_cache + size_t(kvh) * max_seq * head_dim;
    double mx = -INFINITY;
    for (int j = 0; j < len; ++j) {
      double d = 0;
      for (int e = 0; e < head_dim; ++e) d += double(qh[e]) * kh[size_t(j) * head_dim + e];
      s[j] = d * scale;
      mx = std::max(mx, s[j]);
    }
    double sum = 0;
    for (int j = 0; j < len; ++j) sum += (s[j] = std::exp(s[j] - mx));
    for (int e = 0; e < head_dim; ++e) {
      double o = 0;
      for (int j = 0; j < len; ++j) o += s[j] * vh[size_t(j) * head_dim + e];
      out[size_t(h) * head_dim + e] = static_cast<float>(o / sum);
    }
  }
}

int argmax_ref(const std::vector<float>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

RefDecoder::RefDecoder(const HostWeights& w, int max_seq)
    : w_(w), max_seq_(max_seq), x_(w.cfg.dim) {
  const auto& c = w.cfg;
  if (static_cast<int>(w.layers.size()) != c.n_layers)
    throw std::invalid_argument("RefDecoder: layer count differs from the config");
  const size_t cache = size_t(c.n_kv_heads) * max_seq * c.head_dim;
  k_cache_.assign(c.n_layers, std::vector<float>(cache, 0.f));
  v_cache_.assign(c.n_layers, std::vector<float>(cache, 0.f));
  router_logits_.assign(c.n_layers, std::vector<float>(std::max(c.n_experts, 0), 0.f));
}

void RefDecoder::prefer_routing(std::vector<std::vector<int>> ids, double tol) {
  preferred_ = std::move(ids);
  prefer_tol_ = tol;
}

// Mixtral's block: logits = Wr · xn; the top k, renormalized; for each
// chosen expert e: x += w_e · W2[e] · (silu(W1[e] · xn) ⊙ W3[e] · xn).
void RefDecoder::moe_block(int layer, const std::vector<float>& xn) {
  const auto& c = w_.cfg;
  const HostLayer& L = w_.layers[layer];
  std::vector<float>& logits = router_logits_[layer];
  linear_ref(L.router.data(), xn.data(), logits.data(), c.n_experts, c.dim);
  Route route = route_ref(logits, c.top_experts);
  if (layer < static_cast<int>(preferred_.size()) && !preferred_[layer].empty()) {
    const std::string why = routing_mismatch(logits, preferred_[layer], c.top_experts, prefer_tol_);
    if (why.empty())
      route = route_with(logits, preferred_[layer]);
    else if (route_error_.empty())
      route_error_ =
          "layer " + std::to_string(layer) + ", position " + std::to_string(pos_) + ": " + why;
  }
  const int64_t F = c.ffn;
  std::vector<float> gu(2 * size_t(F)), h(F), y(c.dim);
  for (size_t j = 0; j < route.ids.size(); ++j) {
    const int e = route.ids[j];
    linear_ref(L.experts_gate_up.data() + size_t(e) * 2 * F * c.dim, xn.data(), gu.data(), 2 * F,
               c.dim);
    swiglu::swiglu_ref(gu.data(), h.data(), 1, F);
    linear_ref(L.experts_down.data() + size_t(e) * c.dim * F, h.data(), y.data(), c.dim, F);
    for (int i = 0; i < c.dim; ++i) x_[i] += route.weights[j] * y[i];
  }
}

const float* RefDecoder::k_row(int layer, int kvh, int pos) const {
  return k_cache_.at(layer).data() + (size_t(kvh) * max_seq_ + pos) * w_.cfg.head_dim;
}
const float* RefDecoder::v_row(int layer, int kvh, int pos) const {
  return v_cache_.at(layer).data() + (size_t(kvh) * max_seq_ + pos) * w_.cfg.head_dim;
}

std::vector<float> RefDecoder::step(int token) {
  const auto& c = w_.cfg;
  if (pos_ >= max_seq_) throw std::out_of_range("RefDecoder: the cache is full");
  if (token < 0 || token >= c.vocab) throw std::out_of_range("RefDecoder: token id out of range");
  const int hd = c.head_dim, H = c.n_heads, KVH = c.n_kv_heads;
  std::copy_n(w_.embedding.begin() + size_t(token) * c.dim, c.dim, x_.begin());
  std::vector<float> xn(c.dim), qkv(c.qkv_rows()), att(c.q_size()), proj(c.dim);
  std::vector<float> gu(2 * size_t(c.ffn)), h(c.ffn);
  for (int l = 0; l < c.n_layers; ++l) {
    const HostLayer& L = w_.layers[l];
    rms_norm::rms_norm_ref(x_.data(), nullptr, xn.data(), 1, c.dim, c.norm_eps);
    linear_ref(L.qkv.data(), xn.data(), qkv.data(), c.qkv_rows(), c.dim);
    float* q = qkv.data();
    float* k = q + c.q_size();
    float* v = k + c.kv_size();
    for (int i = 0; i < H; ++i) rope_ref(q + size_t(i) * hd, hd, pos_, c.rope_theta);
    for (int i = 0; i < KVH; ++i) {
      rope_ref(k + size_t(i) * hd, hd, pos_, c.rope_theta);
      std::copy_n(k + size_t(i) * hd, hd, k_cache_[l].begin() + (size_t(i) * max_seq_ + pos_) * hd);
      std::copy_n(v + size_t(i) * hd, hd, v_cache_[l].begin() + (size_t(i) * max_seq_ + pos_) * hd);
    }
    attention_ref(q, k_cache_[l].data(), v_cache_[l].data(), H, KVH, hd, max_seq_, pos_ + 1,
                  att.data());
    linear_ref(L.wo.data(), att.data(), proj.data(), c.dim, c.q_size());
    for (int i = 0; i < c.dim; ++i) x_[i] += proj[i];
    rms_norm::rms_norm_ref(x_.data(), nullptr, xn.data(), 1, c.dim, c.norm_eps);
    if (c.moe()) {
      moe_block(l, xn);
      continue;
    }
    linear_ref(L.gate_up.data(), xn.data(), gu.data(), 2 * int64_t(c.ffn), c.dim);
    swiglu::swiglu_ref(gu.data(), h.data(), 1, c.ffn);
    linear_ref(L.down.data(), h.data(), proj.data(), c.dim, c.ffn);
    for (int i = 0; i < c.dim; ++i) x_[i] += proj[i];
  }
  rms_norm::rms_norm_ref(x_.data(), nullptr, xn.data(), 1, c.dim, c.norm_eps);
  std::vector<float> logits(c.vocab);
  linear_ref(w_.output.data(), xn.data(), logits.data(), c.vocab, c.dim);
  ++pos_;
  preferred_.clear();  // for one step only
  return logits;
}

}  // namespace kb::decode
