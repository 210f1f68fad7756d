#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kernels/common/cuda_check.h"
#include "kernels/common/host_math.h"
#include "kernels/common/timeline.cuh"
#include "kernels/decode/decoder.h"
#include "kernels/decode/weight_init.h"
#include "kernels/gemv/gemv.h"

namespace kb::decode {

namespace {

constexpr size_t kAlign = 256;  // every tensor starts 256-byte aligned (vector loads, gemv)
// Left free beyond what the decoder allocates: the CUDA context's own needs,
// the gemv's workspace if it has one, and the engine's L2-flush buffer.
constexpr size_t kReserveBytes = size_t(512) << 20;

size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

void sync_device() { KB_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace

size_t Decoder::layout(uint8_t* base) {
  size_t off = 0;
  auto take = [&](size_t bytes) {
    uint8_t* p = base ? base + off : nullptr;
    off += align_up(bytes);
    return p;
  };
  const auto& c = cfg_;
  const size_t wsize = wt_ == WeightType::int8 ? 1 : 2;
  auto linear_w = [&](int64_t rows, int64_t cols) {
    LinearW l;
    l.rows = rows;
    l.cols = cols;
    l.w = take(size_t(rows) * cols * wsize);
    if (wt_ == WeightType::int8) l.scale = reinterpret_cast<bf16*>(take(size_t(rows) * 2));
    return l;
  };
  embedding_ = reinterpret_cast<bf16*>(take(size_t(c.vocab) * c.dim * 2));
  layers_.resize(c.n_layers);
  for (auto& L : layers_) {
    L.qkv = linear_w(c.qkv_rows(), c.dim);
    L.wo = linear_w(c.dim, c.q_size());
    if (c.moe()) {  // experts e's rows at e · rows (gather_gemv's [E, N, K])
      L.router = linear_w(c.n_experts, c.dim);
      L.experts_gate_up = linear_w(int64_t(c.n_experts) * 2 * c.ffn, c.dim);
      L.experts_down = linear_w(int64_t(c.n_experts) * c.dim, c.ffn);
      L.route_fold = reinterpret_cast<float*>(take(size_t(c.n_experts) * c.q_size() * 4));
    } else {
      L.gate_up = linear_w(2 * int64_t(c.ffn), c.dim);
      L.down = linear_w(c.dim, c.ffn);
    }
  }
  output_ = linear_w(c.vocab, c.dim);
  const size_t cache = size_t(c.n_layers) * c.kv_size() * opt_.max_seq * 2;
  k_cache_ = reinterpret_cast<bf16*>(take(cache));
  v_cache_ = reinterpret_cast<bf16*>(take(cache));
  x_ = reinterpret_cast<bf16*>(take(size_t(c.dim) * 2));
  qkv_ = reinterpret_cast<bf16*>(take(size_t(c.qkv_rows()) * 2));
  att_ = reinterpret_cast<bf16*>(take(size_t(c.q_size()) * 2));
  gu_ = reinterpret_cast<bf16*>(take(size_t(c.ffn) * 2 * 2));
  h_ = reinterpret_cast<bf16*>(take(size_t(c.ffn) * 2));
  raw_logits_ = reinterpret_cast<bf16*>(take(size_t(c.vocab) * 2));
  logits_ = reinterpret_cast<float*>(take(size_t(c.vocab) * 4));
  attn_partial_ =
      reinterpret_cast<float*>(take(size_t(attention_workspace_floats(c, splits_)) * 4));
  sample_value_ = reinterpret_cast<float*>(take(size_t(sample_blocks(c.vocab)) * 4));
  sample_index_ = reinterpret_cast<int32_t*>(take(size_t(sample_blocks(c.vocab)) * 4));
  // The counters sit together so one memset zeroes them.
  counters_bytes_ = (size_t(c.n_kv_heads) + 1) * 4;
  attn_counters_ = reinterpret_cast<int32_t*>(take(counters_bytes_));
  sample_counter_ = attn_counters_ ? attn_counters_ + c.n_kv_heads : nullptr;
  pf_rows_ = std::min<int>(static_cast<int>(opt_.prompt.size()), gemv::kMaxTokens);
  pf_x_ = reinterpret_cast<bf16*>(take(size_t(pf_rows_) * c.dim * 2));
  pf_qkv_ = reinterpret_cast<bf16*>(take(size_t(pf_rows_) * c.qkv_rows() * 2));
  pf_att_ = reinterpret_cast<bf16*>(take(size_t(pf_rows_) * c.q_size() * 2));
  pf_gu_ = reinterpret_cast<bf16*>(take(size_t(pf_rows_) * c.ffn * 2 * 2));
  // MoE: h and the down projection per expert and token ([E][rows][ffn],
  // [E][rows][dim]), each layer's ids and weights per token ([L][rows][top]).
  const size_t pf_experts = c.moe() ? size_t(c.n_experts) : 1;
  pf_h_ = reinterpret_cast<bf16*>(take(pf_experts * pf_rows_ * c.ffn * 2));
  if (c.moe()) {
    pf_ed_ = reinterpret_cast<bf16*>(take(pf_experts * pf_rows_ * c.dim * 2));
    pf_ids_ = reinterpret_cast<int32_t*>(take(size_t(c.n_layers) * pf_rows_ * c.top_experts * 4));
    pf_rw_ = reinterpret_cast<float*>(take(size_t(c.n_layers) * pf_rows_ * c.top_experts * 4));
  }
  pf_pos_ = reinterpret_cast<int32_t*>(take(opt_.prompt.size() * 4));
  tokens_ = reinterpret_cast<int32_t*>(take(size_t(capacity()) * 4));
  prompt_ = reinterpret_cast<int32_t*>(take(opt_.prompt.size() * 4));
  pos_ = reinterpret_cast<int32_t*>(take(4));
  if (c.moe()) {
    moe_h_ = reinterpret_cast<bf16*>(take(size_t(c.top_experts) * c.ffn * 2));
    route_ids_ = reinterpret_cast<int32_t*>(take(size_t(c.n_layers) * c.top_experts * 4));
    route_w_ = reinterpret_cast<float*>(take(size_t(c.n_layers) * c.top_experts * 4));
    const size_t hist = size_t(capacity()) * c.n_layers * c.n_experts;
    hist_logits_ = reinterpret_cast<float*>(take(hist * 4));
    hist_ids_ = reinterpret_cast<int32_t*>(take(hist * 4));
    xm_ = reinterpret_cast<bf16*>(take(size_t(c.dim) * 2));
    route_l_ =
        reinterpret_cast<float*>(take(size_t(c.n_layers) * (c.n_experts + c.top_experts) * 4));
    route_partial_ = reinterpret_cast<float*>(
        take(size_t(gemv::route_blocks(c.dim, c.q_size())) * c.n_experts * 4));
    route_counter_ = reinterpret_cast<unsigned int*>(take(4));
  }
  return off;
}

size_t Decoder::device_bytes(const ModelConfig& c, WeightType t, int max_seq) {
  // The layout with a null base only counts; splits at their largest.
  DecoderOptions o;
  o.max_seq = max_seq;
  o.capture = false;
  Decoder counter(LayoutOnly{}, c, t, o, 64);
  return counter.layout(nullptr);
}

Decoder::Decoder(LayoutOnly, const ModelConfig& c, WeightType t, const DecoderOptions& o,
                 int splits)
    : cfg_(c), wt_(t), opt_(o), splits_(splits) {}

Decoder::Decoder(const ModelConfig& c, WeightType t, const DecoderOptions& o)
    : cfg_(c), wt_(t), opt_(o) {
  if (std::string why = unsupported_reason(c); !why.empty())
    throw std::invalid_argument(c.name + ": " + why);
  const int k_mult =
      std::max(t == WeightType::int8 ? gemv::k_multiple_int8() : gemv::k_multiple_bf16(), 1);
  for (int k : {c.dim, c.q_size(), c.ffn})
    if (k % k_mult != 0)
      throw std::invalid_argument(c.name +
                                  ": every gemv K (dim, H·hd, ffn) must be a multiple of " +
                                  std::to_string(k_mult) + " for the " + weight_type_name(t) +
                                  " gemv; " + std::to_string(k) + " is not");
  if (o.max_seq < 1) throw std::invalid_argument("Decoder: max_seq must be positive");
  if (o.prompt.empty() || static_cast<int>(o.prompt.size()) > o.max_seq)
    throw std::invalid_argument("Decoder: the prompt needs 1..max_seq tokens");
  for (int32_t id : o.prompt)
    if (id < 0 || id >= c.vocab)
      throw std::invalid_argument("Decoder: prompt token " + std::to_string(id) +
                                  " outside the vocabulary of " + c.name);
  int dev = 0, sms = 1;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  KB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  int major = 0;
  KB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  cluster_ = o.attn_cluster && major >= 9;
  whole_ = o.attn_whole && !attention_whole_refusal(o.max_seq, c.head_dim);
  splits_ = cluster_ ? std::min(o.attn_splits > 0 ? o.attn_splits : kMaxAttentionClusterSplits,
                                kMaxAttentionClusterSplits)
            : o.attn_splits > 0 ? o.attn_splits
                                : default_attention_splits(c, sms, o.max_seq);

  const size_t need = layout(nullptr);
  size_t free_b = 0, total_b = 0;
  KB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (need + kReserveBytes > free_b) {
    const WeightBytes wb = weight_bytes(c, t);
    const double cache = 2.0 * c.n_layers * c.kv_size() * o.max_seq * 2;
    throw std::runtime_error(c.name + " " + weight_type_name(t) + " does not fit: needs " +
                             gb(double(need)) + " of GPU memory (weights " +
                             gb(wb.linear + wb.scales + wb.embedding) + ", KV cache " + gb(cache) +
                             " for " + std::to_string(o.max_seq) + " positions) + " +
                             gb(double(kReserveBytes)) + " reserve; " + gb(double(free_b)) +
                             " of " + gb(double(total_b)) + " free");
  }
  arena_ = DeviceBuffer<uint8_t>(need);
  layout(arena_.get());

  // The router beside the o projection needs the general kernel there.
  parallel_ =
      c.moe() && o.moe_route_parallel && gemv::carries_route_blocks(step_config(c.dim, c.q_size()));
  if (parallel_) {
    KB_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&ev_o_, &ev_finish_})
      KB_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  }
  cudaStream_t s = nullptr;
  KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  try {
    fill_weights(s);
    // Unwritten cache rows read as NaN: a read past the appended positions shows.
    const size_t cache = size_t(c.n_layers) * c.kv_size() * o.max_seq * 2;
    KB_CUDA_CHECK(cudaMemsetAsync(k_cache_, 0xFF, cache, s));
    KB_CUDA_CHECK(cudaMemsetAsync(v_cache_, 0xFF, cache, s));
    KB_CUDA_CHECK(cudaMemsetAsync(attn_counters_, 0, counters_bytes_, s));
    KB_CUDA_CHECK(cudaMemsetAsync(tokens_, 0, size_t(capacity()) * 4, s));
    if (c.moe()) {  // positions not yet routed read as NaN logits and id -1
      const size_t hist = size_t(capacity()) * c.n_layers * c.n_experts * 4;
      KB_CUDA_CHECK(cudaMemsetAsync(hist_logits_, 0xFF, hist, s));
      KB_CUDA_CHECK(cudaMemsetAsync(hist_ids_, 0xFF, hist, s));
      // Likewise a layer not yet routed: ids -1 (the gathers write NaN), weights NaN.
      const size_t routes = size_t(c.n_layers) * c.top_experts * 4;
      KB_CUDA_CHECK(cudaMemsetAsync(route_ids_, 0xFF, routes, s));
      KB_CUDA_CHECK(cudaMemsetAsync(route_w_, 0xFF, routes, s));
      const size_t pf_routes = size_t(c.n_layers) * pf_rows_ * c.top_experts * 4;
      KB_CUDA_CHECK(cudaMemsetAsync(pf_ids_, 0xFF, pf_routes, s));
      KB_CUDA_CHECK(cudaMemsetAsync(pf_rw_, 0xFF, pf_routes, s));
      KB_CUDA_CHECK(cudaMemsetAsync(route_counter_, 0, 4, s));
    }
    KB_CUDA_CHECK(cudaMemcpyAsync(prompt_, opt_.prompt.data(), opt_.prompt.size() * 4,
                                  cudaMemcpyHostToDevice, s));
    std::vector<int32_t> positions(opt_.prompt.size());
    for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(i);
    KB_CUDA_CHECK(cudaMemcpyAsync(pf_pos_, positions.data(), positions.size() * 4,
                                  cudaMemcpyHostToDevice, s));
    // One eager step and prefill: any lazy setup of the kernels (function
    // attributes, workspaces) happens here, outside the capture.
    reset(s);
    step(s);
    prefill(s, /*eager=*/true);
    reset(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));  // `positions` is read until here
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
  } catch (...) {
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    throw;
  }
  KB_CUDA_CHECK(cudaStreamDestroy(s));
  if (o.capture) capture();
}

Decoder::~Decoder() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
  if (pf_exec_) cudaGraphExecDestroy(pf_exec_);
  if (pf_graph_) cudaGraphDestroy(pf_graph_);
  for (cudaEvent_t e : {ev_o_, ev_finish_})
    if (e) cudaEventDestroy(e);
  if (side_) cudaStreamDestroy(side_);
}

void Decoder::fill_weights(cudaStream_t s) {
  const auto& c = cfg_;
  const uint64_t seed = opt_.seed;
  init_bf16(embedding_, int64_t(c.vocab) * c.dim, seed, kEmbeddingTensor, 1.0f, s);
  auto fill = [&](const LinearW& l, uint32_t tensor) {
    const float a = weight_amplitude(l.cols);
    if (wt_ == WeightType::bf16) {
      init_bf16(static_cast<bf16*>(l.w), l.rows * l.cols, seed, tensor, a, s);
    } else {
      init_int8(static_cast<int8_t*>(l.w), l.rows * l.cols, seed, tensor, s);
      init_row_scales(l.scale, l.rows, seed, tensor, a, s);
    }
  };
  for (int i = 0; i < c.n_layers; ++i) {
    fill(layers_[i].qkv, layer_tensor(i, kQkv));
    fill(layers_[i].wo, layer_tensor(i, kWo));
    if (c.moe()) {
      fill(layers_[i].router, moe_tensor(i, kRouter));
      fill(layers_[i].experts_gate_up, moe_tensor(i, kExpertsGateUp));
      fill(layers_[i].experts_down, moe_tensor(i, kExpertsDown));
      const LayerW& L = layers_[i];
      moe_route_fold(wt_ == WeightType::int8, L.router.w, L.wo.w, L.wo.scale, c.n_experts, c.dim,
                     c.q_size(), L.route_fold, s);
    } else {
      fill(layers_[i].gate_up, layer_tensor(i, kGateUp));
      fill(layers_[i].down, layer_tensor(i, kDown));
    }
  }
  fill(output_, kOutputTensor);
}

gemv::Config Decoder::step_config(int64_t rows, int64_t cols) const {
  return gemv::choose(wt_ == WeightType::int8, rows, cols, 1,
                      opt_.tensor_core_gemv ? gemv::Use::standalone : gemv::Use::decode)
      .config;
}

void Decoder::gemv(const LinearW& w, const bf16* x, bf16* y, const bf16* residual, cudaStream_t s,
                   const gemv::RouteBlocks* route) const {
  const bool int8 = wt_ == WeightType::int8;
  gemv::Config c = step_config(w.rows, w.cols);
  c.pdl = opt_.pdl;
  if (tl_buf_ && c.is<gemv::General>())
    c.timeline = timeline_slot(gemv::grid_blocks(int8, w.rows, w.cols, c) +
                               (route ? gemv::route_blocks(route->dim, route->q) : 0));
  gemv::Operands op;
  op.int8 = int8;
  op.W = w.w;
  op.scale = w.scale;
  op.x = x;
  op.y = y;
  op.N = w.rows;
  op.K = w.cols;
  op.residual = residual;
  op.route = route;
  gemv::launch(op, c, s);
}

void Decoder::gemv_tokens(const LinearW& w, const bf16* x, bf16* y, int tokens,
                          const bf16* residual, cudaStream_t s) const {
  gemv::gemv_tokens(wt_ == WeightType::int8, w.w, w.scale, x, y, tokens, w.rows, w.cols, s,
                    residual, opt_.pdl);
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
  a.pdl = opt_.pdl;
  // x (the residual) is written by the kernel before the qkv gemv (embed,
  // the combine or down gemv), and every gemv family waits for its
  // predecessor before it lets the next grid launch.
  a.x_ready = true;
  a.cluster = cluster_;
  a.whole = whole_;
  a.timeline = timeline_slot(int64_t(c.n_kv_heads) * splits_);
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

// The router of `layer` on x (the token at *pos): its ids and weights out,
// the history's logits and ids at its position.
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
  ra.pdl = opt_.pdl;
  return ra;
}

// The MoE block of `layer` on x (after the attention's residual add):
// route, both experts' gate/up with the SwiGLU, both experts' down with
// the weighted sum and the residual. With moe_route_parallel the o
// projection's grid picked the experts (enqueue_o_and_route) and `xin`, its
// output, is this block's input; else xin is x_ and the router runs here.
template <typename Mark>
void Decoder::enqueue_moe(int layer, cudaStream_t s, Mark&& mark) {
  const auto& c = cfg_;
  const LayerW& L = layers_[layer];
  const bool int8 = wt_ == WeightType::int8;
  const int k = c.top_experts;
  const bool parallel = parallel_;
  const bf16* xin = parallel ? xm_ : x_;
  if (!parallel) {
    const RouteArgs ra = route_args(layer, x_, route_ids_ + layer * k, route_w_ + layer * k, pos_);
    run("moe_route", layer, mark, [&] { moe_route(ra, s); });
  }
  // The router is the only writer of this layer's ids and weights; the
  // gather reads them, and waits for the router (griddepcontrol.wait, its
  // ids not ready) before it lets the combine launch. So when the combine
  // can launch they are complete: it may read them before its own wait
  // (moe_combine_early), and stream its first weights during the gather's
  // tail. (Not so with moe_route_parallel: route_finish writes the weights
  // beside the gather.)
  // With a timeline, the configurations the gathers would take, traced.
  std::optional<gemv::Config> swiglu_cfg = opt_.moe_swiglu_config, down_cfg = opt_.moe_down_config;
  if (tl_buf_) {
    if (!swiglu_cfg) swiglu_cfg = gemv::gather_swiglu_config(int8, c.ffn, c.dim);
    if (!down_cfg) down_cfg = gemv::combine_config(int8, c.dim, c.ffn);
  }
  run("gather_gate_up_swiglu", layer, mark, [&] {
    if (tl_buf_ && swiglu_cfg->is<gemv::General>())
      swiglu_cfg->timeline =
          timeline_slot(gemv::grid_blocks(int8, 2 * c.ffn, c.dim, *swiglu_cfg, k, true));
    gemv::gather_gemv_swiglu(int8, L.experts_gate_up.w, L.experts_gate_up.scale,
                             route_ids_ + layer * k, k, c.n_experts, xin, moe_h_, c.ffn, c.dim,
                             c.norm_eps, s, opt_.pdl, swiglu_cfg ? &*swiglu_cfg : nullptr);
  });
  if (parallel) KB_CUDA_CHECK(cudaStreamWaitEvent(s, ev_finish_, 0));  // the weights
  const int combine_layer = opt_.route_fault == 3 ? (layer + 1) % c.n_layers : layer;
  run("gather_down_combine_residual", layer, mark, [&] {
    if (tl_buf_ && down_cfg->is<gemv::General>())
      down_cfg->timeline = timeline_slot(gemv::grid_blocks(int8, c.dim, c.ffn, *down_cfg, k, true));
    gemv::gather_gemv_combine(int8, L.experts_down.w, L.experts_down.scale,
                              route_ids_ + combine_layer * k, route_w_ + combine_layer * k, k,
                              c.n_experts, moe_h_, x_, c.dim, c.ffn, xin, s, opt_.pdl,
                              down_cfg ? &*down_cfg : nullptr, opt_.moe_combine_early && !parallel);
  });
}

// moe_route_parallel: the o projection of `layer` (into xm_) carrying the
// router blocks (gemv::RouteBlocks: the ids from x_, the layer's input, and
// att_), then moe_route_finish on side_ once it is complete (r from xm_, the
// weights, the history's logits); enqueue_moe waits for it before the
// combine.
template <typename Mark>
void Decoder::enqueue_o_and_route(int layer, cudaStream_t s, Mark&& mark) {
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
  run("gemv_o_residual", layer, mark, [&] { gemv(L.wo, att_, xm_, x_, s, &rb); });
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
  run("moe_route_finish", layer, mark, [&] { moe_route_finish(fa, side_); });
  KB_CUDA_CHECK(cudaEventRecord(ev_finish_, side_));
}

template <typename Mark>
void Decoder::enqueue_step(cudaStream_t s, Mark&& mark, bool lm_head) {
  const auto& c = cfg_;
  run("embed", -1, mark,
      [&] { embed(embedding_, tokens_, pos_, capacity(), c.vocab, c.dim, x_, s); });
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerW& L = layers_[l];
    run("gemv_qkv", l, mark, [&] { gemv(L.qkv, x_, qkv_, nullptr, s); });
    run("attention", l, mark, [&] { attention(attention_args(l), s); });
    if (parallel_)
      enqueue_o_and_route(l, s, mark);
    else
      run("gemv_o_residual", l, mark, [&] { gemv(L.wo, att_, x_, x_, s); });
    if (c.moe()) {  // its down projection, weighted sum and residual included
      enqueue_moe(l, s, mark);
      continue;
    }
    if (opt_.fuse_swiglu) {
      run("gemv_gate_up_swiglu", l, mark, [&] {
        gemv::gemv_swiglu(wt_ == WeightType::int8, L.gate_up.w, L.gate_up.scale, x_, h_, 1, c.ffn,
                          c.dim, c.norm_eps, s, opt_.pdl);
      });
    } else {
      run("gemv_gate_up", l, mark, [&] { gemv(L.gate_up, x_, gu_, nullptr, s); });
      run("silu_mul", l, mark,
          [&] { silu_mul(gu_, x_, c.dim, c.norm_eps, h_, c.ffn, s, opt_.pdl); });
    }
    run("gemv_down_residual", l, mark, [&] { gemv(L.down, h_, x_, x_, s); });
  }
  if (lm_head) run("gemv_lm_head", -1, mark, [&] { gemv(output_, x_, raw_logits_, nullptr, s); });
  run("sample_greedy", -1, mark, [&] { sample_greedy(sample_args(), s); });
}

// The MoE block of `layer` for the n tokens of a prefill chunk at
// positions c0.. (pf_x_ rows, after the attention's residual add), in place.
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
                             c.n_experts, pf_x_, pf_h_, n, c.ffn, c.dim, c.norm_eps, s, opt_.pdl);
  gemv::gather_tokens_gemv(int8, L.experts_down.w, L.experts_down.scale, ids, k, c.n_experts, pf_h_,
                           pf_ed_, n, c.dim, c.ffn, s, opt_.pdl);
  // route_fault 3: the combine reads the next layer's ids and weights.
  const int cl = opt_.route_fault == 3 ? (layer + 1) % c.n_layers : layer;
  moe_tokens_combine(pf_x_, pf_ed_, pf_ids_ + cl * per_layer, pf_rw_ + cl * per_layer, n, c.dim,
                     c.n_experts, k, s, opt_.pdl);
}

// Chunks of up to pf_rows_ prompt tokens; within a chunk, token i has
// position c0 + i (pf_pos_), its rows at i in the pf_ buffers. Attention
// runs token by token in order, each appending its K/V before the next
// reads them, so it is launched without the programmatic-dependent
// attribute (it reads the cache rows before its position before waiting).
// A MoE layer routes each token (moe_route, its ids and weights into
// pf_ids_ / pf_rw_ and the history at its position), then reads each
// chosen expert once for the tokens that chose it (gather_tokens_swiglu,
// gather_tokens_gemv) and adds the weighted rows (moe_tokens_combine).
void Decoder::enqueue_prefill(cudaStream_t s) {
  const auto& c = cfg_;
  const int P = static_cast<int>(opt_.prompt.size());
  const bool int8 = wt_ == WeightType::int8;
  if (c.moe() && !opt_.moe_prefill_by_expert) {
    // Token by token: each step's sampler feeds the next prompt token and
    // advances pos; no LM head before the last token (its logits unused).
    reset_state(prompt_, P, tokens_, pos_, s);
    for (int i = 0; i < P; ++i)
      enqueue_step(
          s, [](const char*, int) {}, i == P - 1);
    return;
  }
  reset_state(prompt_, P, tokens_, pos_, s, P - 1);
  int last = 0;
  for (int c0 = 0; c0 < P; c0 += pf_rows_) {
    const int n = std::min(pf_rows_, P - c0);
    last = n - 1;
    for (int i = 0; i < n; ++i)
      embed(embedding_, tokens_, pf_pos_ + c0 + i, capacity(), c.vocab, c.dim,
            pf_x_ + size_t(i) * c.dim, s);
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
      if (opt_.fuse_swiglu) {
        gemv::gemv_swiglu(int8, L.gate_up.w, L.gate_up.scale, pf_x_, pf_h_, n, c.ffn, c.dim,
                          c.norm_eps, s, opt_.pdl);
      } else {
        gemv_tokens(L.gate_up, pf_x_, pf_gu_, n, nullptr, s);
        for (int i = 0; i < n; ++i)
          silu_mul(pf_gu_ + size_t(i) * 2 * c.ffn, pf_x_ + size_t(i) * c.dim, c.dim, c.norm_eps,
                   pf_h_ + size_t(i) * c.ffn, c.ffn, s, opt_.pdl);
      }
      gemv_tokens(L.down, pf_h_, pf_x_, n, pf_x_, s);
    }
  }
  // The last prompt token's residual becomes the step's x; the LM head and
  // the sampler (at pos = P - 1) as in a step.
  KB_CUDA_CHECK(cudaMemcpyAsync(x_, pf_x_ + size_t(last) * c.dim, size_t(c.dim) * 2,
                                cudaMemcpyDeviceToDevice, s));
  gemv(output_, x_, raw_logits_, nullptr, s);
  sample_greedy(sample_args(), s);
}

int Decoder::prefill_nodes(const ModelConfig& c, int prompt_len, bool fuse_swiglu) {
  const int P = prompt_len;
  const int chunks = (P + gemv::kMaxTokens - 1) / gemv::kMaxTokens;
  // reset; per chunk: the embeds and, per layer, 4 gemvs (MoE: the qkv and
  // o gemvs, the two gathers over tokens and the combine); per token and
  // layer an attention (and a silu_mul unfused; MoE: a router); the copy,
  // the LM head, the sampler.
  if (c.moe()) return 1 + P + chunks * 5 * c.n_layers + 2 * P * c.n_layers + 3;
  return 1 + P + chunks * 4 * c.n_layers + (fuse_swiglu ? 1 : 2) * P * c.n_layers + 3;
}

int Decoder::prefill_chain_nodes(const ModelConfig& c, int prompt_len, bool fuse_swiglu) {
  return prefill_nodes(c, prompt_len, fuse_swiglu);  // no kernel beside the chain
}

void Decoder::prefill(cudaStream_t s, bool eager) {
  if (eager || !pf_exec_)
    enqueue_prefill(s);
  else
    KB_CUDA_CHECK(cudaGraphLaunch(pf_exec_, s));
}

void Decoder::reset(cudaStream_t s) {
  reset_state(prompt_, static_cast<int>(opt_.prompt.size()), tokens_, pos_, s);
}

void Decoder::step(cudaStream_t s) {
  enqueue_step(s, [](const char*, int) {});
}

void Decoder::replay(cudaStream_t s) {
  if (!exec_) throw std::logic_error("Decoder::replay before capture()");
  KB_CUDA_CHECK(cudaGraphLaunch(exec_, s));
}

namespace {

// Captures what `enqueue` launches on a fresh stream into a graph,
// instantiates and uploads it.
template <typename Enqueue>
void capture_graph(Enqueue&& enqueue, cudaGraph_t* graph, cudaGraphExec_t* exec) {
  cudaStream_t s = nullptr;
  KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  KB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue(s);
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(s, &broken);
    if (broken) cudaGraphDestroy(broken);
    cudaGetLastError();
    cudaStreamDestroy(s);
    throw;
  }
  cudaGraph_t g = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &g);
  cudaStreamDestroy(s);
  KB_CUDA_CHECK(end);
  *graph = g;
  KB_CUDA_CHECK(cudaGraphInstantiate(exec, g, 0));
  // Upload now so that the first replay is not slower than the others.
  cudaStream_t up = nullptr;
  KB_CUDA_CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
  KB_CUDA_CHECK(cudaGraphUpload(*exec, up));
  KB_CUDA_CHECK(cudaStreamSynchronize(up));
  KB_CUDA_CHECK(cudaStreamDestroy(up));
}

}  // namespace

void Decoder::capture() {
  if (exec_) return;
  capture_graph([this](cudaStream_t s) { step(s); }, &graph_, &exec_);
  KB_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &graph_nodes_));
  capture_graph([this](cudaStream_t s) { enqueue_prefill(s); }, &pf_graph_, &pf_exec_);
  KB_CUDA_CHECK(cudaGraphGetNodes(pf_graph_, nullptr, &prefill_graph_nodes_));
}

bool Decoder::omitted(const char* name) const {
  return std::find(omit_.begin(), omit_.end(), name) != omit_.end();
}

Decoder::GraphExec Decoder::capture_step_without(const std::vector<std::string>& omit) {
  omit_ = omit;
  cudaGraph_t g = nullptr;
  cudaGraphExec_t e = nullptr;
  try {
    capture_graph([this](cudaStream_t s) { step(s); }, &g, &e);
  } catch (...) {
    omit_.clear();
    if (g) cudaGraphDestroy(g);
    throw;
  }
  omit_.clear();
  KB_CUDA_CHECK(cudaGraphDestroy(g));
  return GraphExec(e, [](cudaGraphExec_t x) { cudaGraphExecDestroy(x); });
}

unsigned long long* Decoder::timeline_slot(int64_t blocks) const {
  if (!tl_buf_) return nullptr;
  const size_t first = tl_spans_.size() * kTimelineBlocks;
  if (blocks > int64_t(kTimelineBlocks) || first + kTimelineBlocks > tl_lines_)
    throw std::invalid_argument(std::string("capture_step_timeline: no room for ") + tl_name_ +
                                " (" + std::to_string(blocks) + " blocks)");
  tl_spans_.push_back({tl_name_, tl_layer_, first});
  return tl_buf_ + 4 * first;
}

Decoder::GraphExec Decoder::capture_step_timeline(unsigned long long* buf, size_t lines,
                                                  std::vector<TimelineSpan>* spans) {
  // Off again on every way out, a throw included.
  struct Off {
    Decoder& d;
    ~Off() {
      d.tl_buf_ = nullptr;
      d.tl_lines_ = 0;
    }
  } off{*this};
  if (!kTimelineBuilt)
    throw std::runtime_error(
        "capture_step_timeline: the kernels were built without their stamps (configure with "
        "-DKBENCH_TIMELINE=ON)");
  tl_buf_ = buf;
  tl_lines_ = lines;
  tl_spans_.clear();
  GraphExec e = capture_step_without({});
  *spans = tl_spans_;
  return e;
}

Decoder::GraphExec Decoder::capture_step_with_moe(const std::optional<gemv::Config>& swiglu,
                                                  const std::optional<gemv::Config>& down) {
  // The decoder's own options back on every way out, a throw included.
  struct Restore {
    DecoderOptions& o;
    const DecoderOptions saved;
    ~Restore() {
      o.moe_swiglu_config = saved.moe_swiglu_config;
      o.moe_down_config = saved.moe_down_config;
    }
  } restore{opt_, opt_};
  if (swiglu) opt_.moe_swiglu_config = swiglu;
  if (down) opt_.moe_down_config = down;
  return capture_step_without({});
}

std::vector<KernelTiming> Decoder::profile_step(cudaStream_t s) {
  std::vector<KernelTiming> out;
  std::vector<cudaEvent_t> events;
  auto new_event = [&] {
    cudaEvent_t e = nullptr;
    KB_CUDA_CHECK(cudaEventCreate(&e));
    events.push_back(e);
    return e;
  };
  try {
    KB_CUDA_CHECK(cudaEventRecord(new_event(), s));
    enqueue_step(s, [&](const char* name, int layer) {
      KB_CUDA_CHECK(cudaEventRecord(new_event(), s));
      out.push_back({name, layer, 0});
    });
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < out.size(); ++i) {
      float ms = 0;
      KB_CUDA_CHECK(cudaEventElapsedTime(&ms, events[i], events[i + 1]));
      out[i].us = ms * 1e3;
    }
  } catch (...) {
    for (auto e : events) cudaEventDestroy(e);
    throw;
  }
  for (auto e : events) KB_CUDA_CHECK(cudaEventDestroy(e));
  return out;
}

// ---------------------------------------------------------------- host views

std::vector<float> Decoder::logits() const {
  sync_device();
  std::vector<float> v(cfg_.vocab);
  KB_CUDA_CHECK(cudaMemcpy(v.data(), logits_, v.size() * 4, cudaMemcpyDeviceToHost));
  return v;
}

std::vector<int32_t> Decoder::tokens() const {
  sync_device();
  std::vector<int32_t> v(capacity());
  KB_CUDA_CHECK(cudaMemcpy(v.data(), tokens_, v.size() * 4, cudaMemcpyDeviceToHost));
  return v;
}

int32_t Decoder::position() const {
  sync_device();
  int32_t p = 0;
  KB_CUDA_CHECK(cudaMemcpy(&p, pos_, 4, cudaMemcpyDeviceToHost));
  return p;
}

namespace {
std::vector<float> download_bf16(const bf16* p, size_t n) {
  std::vector<bf16> h(n);
  KB_CUDA_CHECK(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
  return to_float(h);
}
}  // namespace

std::vector<float> Decoder::residual() const {
  sync_device();
  return download_bf16(x_, cfg_.dim);
}

std::vector<float> Decoder::cache_row(bool v, int layer, int kvh, int pos) const {
  if (layer < 0 || layer >= cfg_.n_layers || kvh < 0 || kvh >= cfg_.n_kv_heads || pos < 0 ||
      pos >= opt_.max_seq)
    throw std::out_of_range("Decoder::cache_row: index out of range");
  sync_device();
  const size_t off = ((size_t(layer) * cfg_.n_kv_heads + kvh) * opt_.max_seq + pos) * cfg_.head_dim;
  return download_bf16((v ? v_cache_ : k_cache_) + off, cfg_.head_dim);
}

const Decoder::LinearW& Decoder::linear(Linear which, int layer) const {
  if (which == Linear::output) return output_;
  const LayerW& L = layers_.at(layer);
  switch (which) {
    case Linear::qkv:
      return L.qkv;
    case Linear::wo:
      return L.wo;
    case Linear::gate_up:
      return L.gate_up;
    case Linear::down:
      return L.down;
    case Linear::router:
      return L.router;
    case Linear::experts_gate_up:
      return L.experts_gate_up;
    case Linear::experts_down:
      return L.experts_down;
    case Linear::output:
      break;
  }
  return output_;
}

std::vector<float> Decoder::linear_rows(Linear which, int layer, int64_t row0, int64_t n) const {
  const LinearW& l = linear(which, layer);
  if (!l.w) throw std::invalid_argument("Decoder::linear_rows: this model has no such layer");
  if (row0 < 0 || n < 0 || row0 + n > l.rows)
    throw std::out_of_range("Decoder::linear_rows: rows out of range");
  sync_device();
  const size_t count = size_t(n) * l.cols;
  if (wt_ == WeightType::bf16)
    return download_bf16(static_cast<const bf16*>(l.w) + size_t(row0) * l.cols, count);
  std::vector<int8_t> q(count);
  KB_CUDA_CHECK(cudaMemcpy(q.data(), static_cast<const int8_t*>(l.w) + size_t(row0) * l.cols, count,
                           cudaMemcpyDeviceToHost));
  const std::vector<float> sc = download_bf16(l.scale + row0, size_t(n));
  std::vector<float> out(count);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < l.cols; ++k)
      out[size_t(r) * l.cols + k] = sc[r] * static_cast<float>(q[size_t(r) * l.cols + k]);
  return out;
}

std::vector<float> Decoder::embedding_rows(int64_t row0, int64_t n) const {
  if (row0 < 0 || n < 0 || row0 + n > cfg_.vocab)
    throw std::out_of_range("Decoder::embedding_rows: rows out of range");
  sync_device();
  return download_bf16(embedding_ + size_t(row0) * cfg_.dim, size_t(n) * cfg_.dim);
}

HostWeights Decoder::host_weights() const {
  HostWeights w;
  w.cfg = cfg_;
  w.embedding = embedding_rows(0, cfg_.vocab);
  w.layers.resize(cfg_.n_layers);
  auto all = [&](Linear which, int layer) {
    return linear_rows(which, layer, 0, linear(which, layer).rows);
  };
  for (int l = 0; l < cfg_.n_layers; ++l) {
    w.layers[l].qkv = all(Linear::qkv, l);
    w.layers[l].wo = all(Linear::wo, l);
    if (cfg_.moe()) {
      w.layers[l].router = all(Linear::router, l);
      w.layers[l].experts_gate_up = all(Linear::experts_gate_up, l);
      w.layers[l].experts_down = all(Linear::experts_down, l);
    } else {
      w.layers[l].gate_up = all(Linear::gate_up, l);
      w.layers[l].down = all(Linear::down, l);
    }
  }
  w.output = all(Linear::output, -1);
  return w;
}

std::vector<float> Decoder::router_logits(int pos) const {
  const auto& c = cfg_;
  if (!c.moe()) throw std::logic_error("Decoder::router_logits: not a mixture of experts");
  if (pos < 0 || pos >= capacity()) throw std::out_of_range("Decoder::router_logits: pos");
  sync_device();
  const size_t row = size_t(c.n_layers) * c.n_experts;
  std::vector<float> v(row);
  KB_CUDA_CHECK(
      cudaMemcpy(v.data(), hist_logits_ + size_t(pos) * row, row * 4, cudaMemcpyDeviceToHost));
  return v;
}

std::vector<int32_t> Decoder::routed_experts(int pos) const {
  const auto& c = cfg_;
  if (!c.moe()) throw std::logic_error("Decoder::routed_experts: not a mixture of experts");
  if (pos < 0 || pos >= capacity()) throw std::out_of_range("Decoder::routed_experts: pos");
  sync_device();
  const size_t row = size_t(c.n_layers) * c.n_experts;
  std::vector<int32_t> all(row);
  KB_CUDA_CHECK(
      cudaMemcpy(all.data(), hist_ids_ + size_t(pos) * row, row * 4, cudaMemcpyDeviceToHost));
  std::vector<int32_t> v;
  for (int l = 0; l < c.n_layers; ++l)
    for (int j = 0; j < c.top_experts; ++j) v.push_back(all[size_t(l) * c.n_experts + j]);
  return v;
}

std::vector<float> Decoder::routing_weights() const {
  const auto& c = cfg_;
  if (!c.moe()) throw std::logic_error("Decoder::routing_weights: not a mixture of experts");
  sync_device();
  std::vector<float> v(size_t(c.n_layers) * c.top_experts);
  KB_CUDA_CHECK(cudaMemcpy(v.data(), route_w_, v.size() * 4, cudaMemcpyDeviceToHost));
  return v;
}

}  // namespace kb::decode
