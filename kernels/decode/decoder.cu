// The decoder's construction (decoder.h): the arena's layout, the memory
// check, the weights' fill, and the graph captures.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/decode/decoder.h"
#include "kernels/decode/weight_init.h"
#include "kernels/gemv/gemv.h"

namespace kb::decode {

namespace {

constexpr size_t kAlign = 256;  // every tensor starts 256-byte aligned (vector loads, gemv)
// Left free for the CUDA context, the gemv's workspace and the engine's L2 flush.
constexpr size_t kReserveBytes = size_t(512) << 20;

size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

}  // namespace

size_t Decoder::layout(uint8_t* base) {
  size_t off = 0;
  auto take = [&](size_t bytes) {
    uint8_t* p = base ? base + off : nullptr;
    off += align_up(bytes);
    return p;
  };
  // p = the next n elements of its type.
  auto place = [&](auto*& p, size_t n) {
    p = reinterpret_cast<std::remove_reference_t<decltype(p)>>(take(n * sizeof(*p)));
  };
  const auto& c = cfg_;
  const size_t wsize = wt_ == WeightType::int8 ? 1 : 2;
  auto linear_w = [&](int64_t rows, int64_t cols) {
    LinearW l;
    l.rows = rows;
    l.cols = cols;
    l.w = take(size_t(rows) * cols * wsize);
    if (wt_ == WeightType::int8) place(l.scale, rows);
    return l;
  };
  place(embedding_, size_t(c.vocab) * c.dim);
  layers_.resize(c.n_layers);
  for (auto& L : layers_) {
    L.qkv = linear_w(c.qkv_rows(), c.dim);
    L.wo = linear_w(c.dim, c.q_size());
    if (c.moe()) {  // experts e's rows at e · rows (gather_gemv's [E, N, K])
      L.router = linear_w(c.n_experts, c.dim);
      L.experts_gate_up = linear_w(int64_t(c.n_experts) * 2 * c.ffn, c.dim);
      L.experts_down = linear_w(int64_t(c.n_experts) * c.dim, c.ffn);
      place(L.route_fold, size_t(c.n_experts) * c.q_size());
    } else {
      L.gate_up = linear_w(2 * int64_t(c.ffn), c.dim);
      L.down = linear_w(c.dim, c.ffn);
    }
  }
  output_ = linear_w(c.vocab, c.dim);
  const size_t cache = size_t(c.n_layers) * c.kv_size() * opt_.max_seq;
  place(k_cache_, cache);
  place(v_cache_, cache);
  place(x_, c.dim);
  place(qkv_, c.qkv_rows());
  place(att_, c.q_size());
  place(h_, c.ffn);
  place(raw_logits_, c.vocab);
  place(logits_, c.vocab);
  place(attn_partial_, attention_workspace_floats(c, splits_));
  place(sample_value_, sample_blocks(c.vocab));
  place(sample_index_, sample_blocks(c.vocab));
  // The counters sit together so one memset zeroes them.
  counters_bytes_ = (size_t(c.n_kv_heads) + 1) * 4;
  place(attn_counters_, c.n_kv_heads + 1);
  sample_counter_ = attn_counters_ ? attn_counters_ + c.n_kv_heads : nullptr;
  pf_rows_ = std::min<int>(static_cast<int>(opt_.prompt.size()), gemv::kMaxTokens);
  place(pf_x_, size_t(pf_rows_) * c.dim);
  place(pf_qkv_, size_t(pf_rows_) * c.qkv_rows());
  place(pf_att_, size_t(pf_rows_) * c.q_size());
  // MoE: per expert and token h and the down rows, per layer and token the routes.
  const size_t pf_experts = c.moe() ? size_t(c.n_experts) : 1;
  place(pf_h_, pf_experts * pf_rows_ * c.ffn);
  if (c.moe()) {
    place(pf_ed_, pf_experts * pf_rows_ * c.dim);
    place(pf_ids_, size_t(c.n_layers) * pf_rows_ * c.top_experts);
    place(pf_rw_, size_t(c.n_layers) * pf_rows_ * c.top_experts);
  }
  place(pf_pos_, opt_.prompt.size());
  place(tokens_, capacity());
  place(prompt_, opt_.prompt.size());
  place(pos_, 1);
  if (c.moe()) {
    place(moe_h_, size_t(c.top_experts) * c.ffn);
    place(route_ids_, size_t(c.n_layers) * c.top_experts);
    place(route_w_, size_t(c.n_layers) * c.top_experts);
    const size_t hist = size_t(capacity()) * c.n_layers * c.n_experts;
    place(hist_logits_, hist);
    place(hist_ids_, hist);
    place(xm_, c.dim);
    place(route_l_, size_t(c.n_layers) * (c.n_experts + c.top_experts));
    place(route_partial_, size_t(gemv::route_blocks(c.dim, c.q_size())) * c.n_experts);
    place(route_counter_, 1);
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
  // The whole-cache attention where it can run, else the split one.
  whole_ = o.attn_whole && !attention_whole_refusal(o.max_seq, c.head_dim);
  splits_ = whole_              ? 1
            : o.attn_splits > 0 ? o.attn_splits
                                : default_attention_splits(c, sms, o.max_seq);

  const size_t need = layout(nullptr);
  size_t free_b = 0, total_b = 0;
  KB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (need + kReserveBytes > free_b) {
    const WeightBytes wb = weight_bytes(c, t);
    const double cache = 2.0 * c.n_layers * c.kv_size() * o.max_seq * 2;
    throw std::runtime_error(
        c.name + " " + weight_type_name(t) + " does not fit: needs " + gigabytes(double(need)) +
        " of GPU memory (weights " + gigabytes(wb.linear + wb.scales + wb.embedding) +
        ", KV cache " + gigabytes(cache) + " for " + std::to_string(o.max_seq) + " positions) + " +
        gigabytes(double(kReserveBytes)) + " reserve; " + gigabytes(double(free_b)) + " of " +
        gigabytes(double(total_b)) + " free");
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
  {
    const Stream own;
    const cudaStream_t s = own.s;
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
    // One eager step and prefill: any lazy setup happens outside the capture.
    reset(s);
    step(s);
    prefill(s, /*eager=*/true);
    reset(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));  // `positions` is read until here
  }
  if (o.capture) capture();
}

Decoder::~Decoder() {
  graph_ = {};  // before the stream and events its nodes use
  prefill_graph_ = {};
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
  return gemv::choose(wt_ == WeightType::int8, rows, cols, 1, gemv::Use::decode).config;
}

void Decoder::capture() {
  if (graph_.exec) return;
  graph_ = capture_graph([this](cudaStream_t s) { step(s); });
  prefill_graph_ = capture_graph([this](cudaStream_t s) { enqueue_prefill(s); });
}

}  // namespace kb::decode
