// The decoder's launches (decoder.h): one step, and the prompt's prefill.
#include <algorithm>
#include <stdexcept>

#include "kernels/common/cuda_check.h"
#include "kernels/decode/decoder.h"
#include "kernels/gemv/gemv.h"

namespace kb::decode {

void Decoder::gemv(const LinearW& w, const bf16* x, bf16* y, const bf16* residual, cudaStream_t s,
                   const gemv::RouteBlocks* route) const {
  gemv::Config c = step_config(w.rows, w.cols);
  c.pdl = true;
  const bool int8 = wt_ == WeightType::int8;
  gemv::launch({int8, w.w, w.scale, nullptr, 1, 0, x, y, w.rows, w.cols, residual, 1, route}, c, s);
}

void Decoder::gemv_tokens(const LinearW& w, const bf16* x, bf16* y, int tokens,
                          const bf16* residual, cudaStream_t s) const {
  gemv::gemv_tokens(wt_ == WeightType::int8, w.w, w.scale, x, y, tokens, w.rows, w.cols, s,
                    residual, /*pdl=*/true);
}

AttentionArgs Decoder::attention_args(int layer) const {
  const auto& c = cfg_;
  const size_t cache_per_layer = size_t(c.kv_size()) * opt_.max_seq;
  AttentionArgs a;
  a.qkv = qkv_;
  a.x = x_;
  a.dim = c.dim;
  a.eps = c.norm_eps;
  a.rope_theta = c.rope_theta;
  a.n_heads = c.n_heads;
  a.n_kv_heads = c.n_kv_heads;
  a.head_dim = c.head_dim;
  a.k_cache = k_cache_ + layer * cache_per_layer;
  a.v_cache = v_cache_ + layer * cache_per_layer;
  a.max_seq = opt_.max_seq;
  a.pos = pos_;
  a.out = att_;
  a.n_splits = splits_;
  a.min_chunk = opt_.attn_min_chunk;
  a.partial = attn_partial_;
  a.counters = attn_counters_;
  a.pdl = true;
  a.x_ready = true;  // x's writer precedes the qkv gemv, which waits for it
  a.whole = whole_;
  return a;
}

SampleArgs Decoder::sample_args() const {
  const auto& c = cfg_;
  SampleArgs sa;
  sa.raw_logits = raw_logits_;
  sa.x = x_;
  sa.dim = c.dim;
  sa.eps = c.norm_eps;
  sa.vocab = c.vocab;
  sa.logits = logits_;
  sa.tokens = tokens_;
  sa.capacity = capacity();
  sa.prompt_len = static_cast<int>(opt_.prompt.size());
  sa.pos = pos_;
  sa.partial_value = sample_value_;
  sa.partial_index = sample_index_;
  sa.counter = sample_counter_;
  return sa;
}

// The router of `layer` on x (the token at *pos).
RouteArgs Decoder::route_args(int layer, const bf16* x, int32_t* ids, float* weights,
                              const int32_t* pos) const {
  const auto& c = cfg_;
  const LayerW& L = layers_[layer];
  RouteArgs ra;
  ra.w = L.router.w;
  ra.scale = L.router.scale;
  ra.x = x;
  ra.dim = c.dim;
  ra.eps = c.norm_eps;
  ra.n_experts = c.n_experts;
  ra.top = c.top_experts;
  ra.ids = ids;
  ra.weights = weights;
  ra.pos = pos;
  ra.capacity = capacity();
  ra.hist_stride = c.n_layers * c.n_experts;
  ra.hist_logits = hist_logits_ + layer * c.n_experts;
  ra.hist_ids = hist_ids_ + layer * c.n_experts;
  ra.fault = opt_.route_fault == 3 ? 0 : opt_.route_fault;
  ra.pdl = true;
  return ra;
}

// The MoE block of `layer`: route (unless the o projection's grid did:
// then its output xm_ is the block's input), both experts' gate/up with the
// SwiGLU, their down rows with the weighted sum and the residual.
void Decoder::enqueue_moe(int layer, cudaStream_t s) {
  const auto& c = cfg_;
  const LayerW& L = layers_[layer];
  const bool int8 = wt_ == WeightType::int8;
  const int k = c.top_experts;
  const bf16* xin = parallel_ ? xm_ : x_;
  if (!parallel_)
    moe_route(route_args(layer, x_, route_ids_ + layer * k, route_w_ + layer * k, pos_), s);
  gemv::gather_gemv_swiglu(int8, L.experts_gate_up.w, L.experts_gate_up.scale,
                           route_ids_ + layer * k, k, c.n_experts, xin, moe_h_, c.ffn, c.dim,
                           c.norm_eps, s, /*pdl=*/true);
  if (parallel_) KB_CUDA_CHECK(cudaStreamWaitEvent(s, ev_finish_, 0));  // the weights
  const int combine_layer = opt_.route_fault == 3 ? (layer + 1) % c.n_layers : layer;
  gemv::gather_gemv_combine(int8, L.experts_down.w, L.experts_down.scale,
                            route_ids_ + combine_layer * k, route_w_ + combine_layer * k, k,
                            c.n_experts, moe_h_, x_, c.dim, c.ffn, xin, s, /*pdl=*/true);
}

// The o projection of `layer` (into xm_) carrying the router blocks (the
// ids from x_ and att_), then moe_route_finish on side_ once it is complete.
void Decoder::enqueue_o_and_route(int layer, cudaStream_t s) {
  const auto& c = cfg_;
  const LayerW& L = layers_[layer];
  const int k = c.top_experts;
  gemv::RouteBlocks rb;
  rb.w = L.router.w;
  rb.scale = L.router.scale;
  rb.x = x_;
  rb.fold = L.route_fold;
  rb.dim = c.dim;
  rb.q = c.q_size();
  rb.E = c.n_experts;
  rb.top = k;
  rb.ids = route_ids_ + layer * k;
  rb.logits = route_l_ + layer * (c.n_experts + k);
  rb.partial = route_partial_;
  rb.counter = route_counter_;
  rb.pos = pos_;
  rb.capacity = capacity();
  rb.hist_ids = hist_ids_ + layer * c.n_experts;
  rb.hist_stride = c.n_layers * c.n_experts;
  rb.fault = opt_.route_fault == 3 ? 0 : opt_.route_fault;
  gemv(L.wo, att_, xm_, x_, s, &rb);
  KB_CUDA_CHECK(cudaEventRecord(ev_o_, s));
  KB_CUDA_CHECK(cudaStreamWaitEvent(side_, ev_o_, 0));
  RouteFinishArgs fa;
  fa.y = xm_;
  fa.dim = c.dim;
  fa.eps = c.norm_eps;
  fa.n_experts = c.n_experts;
  fa.top = k;
  fa.logits = rb.logits;
  fa.weights = route_w_ + layer * k;
  fa.pos = pos_;
  fa.capacity = capacity();
  fa.hist_logits = hist_logits_ + layer * c.n_experts;
  fa.hist_stride = c.n_layers * c.n_experts;
  moe_route_finish(fa, side_);
  KB_CUDA_CHECK(cudaEventRecord(ev_finish_, side_));
}

void Decoder::step(cudaStream_t s) {
  const auto& c = cfg_;
  embed(embedding_, tokens_, pos_, capacity(), c.vocab, c.dim, x_, s);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerW& L = layers_[l];
    gemv(L.qkv, x_, qkv_, nullptr, s);
    attention(attention_args(l), s);
    if (parallel_)
      enqueue_o_and_route(l, s);
    else
      gemv(L.wo, att_, x_, x_, s);
    if (c.moe()) {  // its down projection, weighted sum and residual included
      enqueue_moe(l, s);
      continue;
    }
    gemv::gemv_swiglu(wt_ == WeightType::int8, L.gate_up.w, L.gate_up.scale, x_, h_, 1, c.ffn,
                      c.dim, c.norm_eps, s, /*pdl=*/true);
    gemv(L.down, h_, x_, x_, s);
  }
  gemv(output_, x_, raw_logits_, nullptr, s);
  sample_greedy(sample_args(), s);
}

// The MoE block of `layer` for the n tokens of a prefill chunk at
// positions c0.. (pf_x_ rows), in place: each token routed, each chosen
// expert read once for its tokens (docs/decisions/0040).
void Decoder::enqueue_prefill_moe(int layer, int n, int c0, cudaStream_t s) {
  const auto& c = cfg_;
  const LayerW& L = layers_[layer];
  const bool int8 = wt_ == WeightType::int8;
  const int k = c.top_experts;
  const size_t per_layer = size_t(pf_rows_) * k;
  int32_t* ids = pf_ids_ + layer * per_layer;
  float* w = pf_rw_ + layer * per_layer;
  for (int i = 0; i < n; ++i)
    moe_route(
        route_args(layer, pf_x_ + size_t(i) * c.dim, ids + i * k, w + i * k, pf_pos_ + c0 + i), s);
  gemv::gather_tokens_swiglu(int8, L.experts_gate_up.w, L.experts_gate_up.scale, ids, k,
                             c.n_experts, pf_x_, pf_h_, n, c.ffn, c.dim, c.norm_eps, s,
                             /*pdl=*/true);
  gemv::gather_tokens_gemv(int8, L.experts_down.w, L.experts_down.scale, ids, k, c.n_experts, pf_h_,
                           pf_ed_, n, c.dim, c.ffn, s, /*pdl=*/true);
  // route_fault 3: the combine reads the next layer's ids and weights.
  const int cl = opt_.route_fault == 3 ? (layer + 1) % c.n_layers : layer;
  moe_tokens_combine(pf_x_, pf_ed_, pf_ids_ + cl * per_layer, pf_rw_ + cl * per_layer, n, c.dim,
                     c.n_experts, k, s, /*pdl=*/true);
}

// The layers for the n tokens of a prefill chunk at positions c0.. (pf_x_
// rows, in place). Attention runs token by token, without pdl: it reads
// the cache rows the previous token appended before its wait.
void Decoder::enqueue_prefill_layers(int n, int c0, cudaStream_t s) {
  const auto& c = cfg_;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerW& L = layers_[l];
    gemv_tokens(L.qkv, pf_x_, pf_qkv_, n, nullptr, s);
    for (int i = 0; i < n; ++i) {
      AttentionArgs a = attention_args(l);
      a.qkv = pf_qkv_ + size_t(i) * c.qkv_rows();
      a.x = pf_x_ + size_t(i) * c.dim;
      a.pos = pf_pos_ + c0 + i;
      a.out = pf_att_ + size_t(i) * c.q_size();
      a.pdl = false;
      attention(a, s);
    }
    gemv_tokens(L.wo, pf_att_, pf_x_, n, pf_x_, s);
    if (c.moe()) {
      enqueue_prefill_moe(l, n, c0, s);
      continue;
    }
    gemv::gemv_swiglu(wt_ == WeightType::int8, L.gate_up.w, L.gate_up.scale, pf_x_, pf_h_, n, c.ffn,
                      c.dim, c.norm_eps, s, /*pdl=*/true);
    gemv_tokens(L.down, pf_h_, pf_x_, n, pf_x_, s);
  }
}

// Chunks of up to pf_rows_ prompt tokens; within a chunk, token i has
// position c0 + i (pf_pos_), its rows at i in the pf_ buffers.
void Decoder::enqueue_prefill(cudaStream_t s) {
  const auto& c = cfg_;
  const int P = static_cast<int>(opt_.prompt.size());
  reset_state(prompt_, P, tokens_, pos_, s, P - 1);
  int last = 0;
  for (int c0 = 0; c0 < P; c0 += pf_rows_) {
    const int n = std::min(pf_rows_, P - c0);
    last = n - 1;
    for (int i = 0; i < n; ++i)
      embed(embedding_, tokens_, pf_pos_ + c0 + i, capacity(), c.vocab, c.dim,
            pf_x_ + size_t(i) * c.dim, s);
    enqueue_prefill_layers(n, c0, s);
  }
  // The last prompt token's residual is the step's x for the LM head and sampler.
  KB_CUDA_CHECK(cudaMemcpyAsync(x_, pf_x_ + size_t(last) * c.dim, size_t(c.dim) * 2,
                                cudaMemcpyDeviceToDevice, s));
  gemv(output_, x_, raw_logits_, nullptr, s);
  sample_greedy(sample_args(), s);
}

int Decoder::prefill_nodes(const ModelConfig& c, int prompt_len) {
  const int P = prompt_len;
  const int chunks = (P + gemv::kMaxTokens - 1) / gemv::kMaxTokens;
  // reset; per chunk the embeds and per layer 4 gemvs (MoE: 2, two gathers
  // and the combine); per token and layer an attention (MoE: and a router);
  // the copy, the LM head, the sampler.
  if (c.moe()) return 1 + P + chunks * 5 * c.n_layers + 2 * P * c.n_layers + 3;
  return 1 + P + chunks * 4 * c.n_layers + P * c.n_layers + 3;
}

void Decoder::prefill(cudaStream_t s, bool eager) {
  if (eager || !prefill_graph_.exec)
    enqueue_prefill(s);
  else
    prefill_graph_.launch(s);
}

void Decoder::reset(cudaStream_t s) {
  reset_state(prompt_, static_cast<int>(opt_.prompt.size()), tokens_, pos_, s);
}

void Decoder::replay(cudaStream_t s) {
  if (!graph_.exec) throw std::logic_error("Decoder::replay before capture()");
  graph_.launch(s);
}

}  // namespace kb::decode
