// A Llama decoder at batch 1 on the GPU: random weights from a seed (bf16,
// or int8 weight-only with per-row bf16 scales), a bf16 KV cache, and one
// decode step captured once as a CUDA graph. The step reads the position and
// the current token from device memory and advances them itself, so the same
// graph replays for every step:
//
//   Decoder d(find_config("Llama-2-7b-chat-hf"), WeightType::int8, opts);
//   d.reset(stream);                          // pos = 0, tokens = prompt
//   for (int i = 0; i < n; ++i) d.replay(stream);
//
// Kernels per step (decode_kernels.h): embed, per layer [gemv qkv, attention,
// gemv o (+x), gemv gate/up with the SwiGLU (gemv::gemv_swiglu), gemv down
// (+x)], gemv lm head, sample: 5 · n_layers + 3 (if each gemv is one kernel;
// 6 · n_layers + 3 with DecoderOptions::fuse_swiglu off, a silu_mul kernel).
//
// A mixture of experts (Mixtral) replaces the MLP's two gemvs with three
// kernels: the router, gemv::gather_gemv_swiglu (both chosen experts'
// gate/up rows and the SwiGLU, one launch) and gemv::gather_gemv_combine
// (both experts' down rows, the weighted sum and the residual, one launch):
// 6 · n_layers + 3 kernels per step. The router (ids and weights stay in
// device memory): by default router blocks in the o projection's grid pick
// the experts (gemv::RouteBlocks) and moe_route_finish takes the weights
// beside the gate/up gather, so 5 kernels a layer are on the chain
// (DecoderOptions::moe_route_parallel); else moe_route, on the chain.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/decode_ref.h"
#include "kernels/decode/model_config.h"
#include "kernels/gemv/gemv.h"

namespace kb::decode {

struct DecoderOptions {
  int max_seq = 256;               // KV-cache positions
  uint64_t seed = 1;               // of the weights
  std::vector<int32_t> prompt{1};  // token ids, each in [0, vocab)
  int attn_splits = 0;             // 0: default_attention_splits() for this GPU
  int attn_min_chunk = 16;         // positions per split at the least (not with attn_cluster)
  // Compute capability 9.0: the attention splits of a kv head as one
  // thread-block cluster, merged in distributed shared memory (at most 8
  // splits: a larger attn_splits is taken as 8; 8 by default).
  bool attn_cluster = true;
  // The attention as one block per kv head with the head's cache copied
  // into shared memory before its wait (AttentionArgs::whole; a 9.0 GPU
  // where the cache of one head fits; else attn_cluster's or the splits'):
  // no splits, no merge between blocks. On by measurement (H100, one
  // process, with the online softmax it first had: Mixtral 16 layers int8
  // 411.0 -> 415.2 tok/s a generation, Llama-2-7B int8 374.2 -> 382.9;
  // its two passes since: a Mixtral step -0.57% more;
  // docs/decisions/0039-whole-cache-attention.md).
  bool attn_whole = true;
  bool capture = true;            // capture the step graph in the constructor
  bool pdl = true;                // every kernel after the first as a programmatic dependent
                                  // (gemv.h): each gemv starts streaming its weights during the
                                  // previous kernel; attention and silu_mul let the next gemv
                                  // start at once
  bool fuse_swiglu = true;        // gate/up gemv writes h = silu(r·gate)·(r·up) itself
                                  // (gemv::gemv_swiglu): no silu_mul kernel
  bool tensor_core_gemv = false;  // the gemvs as chosen for a GEMV alone (true: the
                                  // tensor-core kernels where they win there), or for the
                                  // decode step (gemv::Use::decode: the general kernel
                                  // unless the GPU's table says otherwise). Off: in the
                                  // graph of programmatic dependents the general kernel's
                                  // step measured 2742 us against 2846 (H100, Llama-2-7B
                                  // int8, docs/decisions/0031-decode-keeps-the-general-gemv.md),
                                  // though alone they are faster
  // Mixture of experts: the gather kernels' configurations (general kernel;
  // unset: gemv::gather_swiglu_config / combine_config), for tuning
  // (tools/decode_profile).
  std::optional<gemv::Config> moe_swiglu_config, moe_down_config;
  // On: the combine reads the ids and weights before its griddepcontrol.wait
  // and streams its first weights during the gate/up gather's tail
  // (gather_gemv_combine's experts_ready; correct because the router two
  // launches back wrote them and the gather waits for it before it lets
  // the combine launch). Off by measurement: on, the graph step was 0.6%
  // slower on an H100 (docs/decisions/0033-moe-combine-reads-ids-after-its-wait.md).
  bool moe_combine_early = false;
  // On: the router runs beside the o projection (router blocks in its grid,
  // gemv::RouteBlocks, pick the experts from the layer's input and the
  // attention's output through the fold F = Wr · diag(so) · Wo,
  // decode_kernels.h) and moe_route_finish takes r and the weights beside
  // the gate/up gather on a side stream: 5 kernels a layer on the chain of
  // kernels that each wait for the one before instead of 6. The o
  // projection then writes the MoE block's input to a buffer of its own.
  // The combine reads its weights after its wait (moe_combine_early is
  // ignored: route_finish writes them beside the gather). Measured in
  // docs/decisions/0035-router-beside-the-o-projection.md.
  bool moe_route_parallel = true;
  // The prefill's MoE layers read each chosen expert once for the tokens
  // that chose it (gemv::gather_tokens_swiglu / gather_tokens_gemv); false:
  // the prompt token by token through the step's kernels (as gpt-fast reads
  // the experts, per token; kept for the A/B in docs/decisions/0040-moe-prefill-by-expert.md).
  bool moe_prefill_by_expert = true;
  // Tests only: 1 wrong routing, 2 id out of range (RouteArgs::fault); 3 the
  // combine reads the next layer's ids and weights (a wrong read of a right
  // routing, as a stale early read would be; no fault with one layer).
  int route_fault = 0;
};

// The kernels of one step in launch order, for the time breakdown.
struct KernelTiming {
  std::string name;  // "gemv_qkv", "attention", ...
  int layer = -1;    // -1 outside the layers
  double us = 0;
};

// Which linear layer. A MoE layer has router, experts_gate_up ([E·2·ffn,
// dim]) and experts_down ([E·dim, ffn]) instead of gate_up and down.
enum class Linear { qkv, wo, gate_up, down, output, router, experts_gate_up, experts_down };

class Decoder {
 public:
  // Device bytes a decoder needs: weights + KV cache + step buffers.
  static size_t device_bytes(const ModelConfig& c, WeightType t, int max_seq);
  // Kernels per step when every gemv is one kernel (the graph's node count then).
  // (A MoE layer: 6 either way; with moe_route_parallel the router is the
  // o projection's router blocks and moe_route_finish runs beside the chain.)
  static int kernels_per_step(const ModelConfig& c, bool fuse_swiglu = true) {
    return (c.moe() || !fuse_swiglu ? 6 : 5) * c.n_layers + 3;
  }
  // Of those, the kernels that each wait for the one before (the roofline's
  // launches): all but moe_route_finish beside the chain (moe_route_parallel).
  static int chain_kernels_per_step(const ModelConfig& c, bool fuse_swiglu = true,
                                    bool moe_parallel = true) {
    return kernels_per_step(c, fuse_swiglu) - (c.moe() && moe_parallel ? c.n_layers : 0);
  }

  // Allocates (after checking free memory: a model that does not fit throws
  // std::runtime_error saying how much it needs), fills the weights, runs one
  // eager step (so that any lazy setup of the kernels happens outside the
  // capture) and captures the step graph. Returns with the device idle.
  Decoder(const ModelConfig& c, WeightType t, const DecoderOptions& o);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // pos = 0, tokens[0, prompt) = prompt: one kernel.
  void reset(cudaStream_t s);
  // The prompt as one forward (gpt-fast's prefill): resets, then runs every
  // prompt token through the model with one gemv per linear layer for up to
  // gemv::kMaxTokens tokens at a time (each weight read once per chunk; a
  // MoE layer: each token routed, then each expert that some token chose
  // read once for those tokens), attention token by token, and the LM head
  // and sampler for the last token. Leaves the state that reset + prompt-length steps leave: pos =
  // prompt length, tokens[pos] = the first generated token, logits of the
  // last prompt token. The captured prefill graph when captured(), else
  // eager launches (or always eager with `eager`).
  void prefill(cudaStream_t s, bool eager = false);
  // Kernels (and the one copy) of a prefill of `prompt_len` tokens: its graph's nodes.
  static int prefill_nodes(const ModelConfig& c, int prompt_len, bool fuse_swiglu = true);
  // Of those, the kernels on the chain (chain_kernels_per_step): all of them
  // (the router beside the o projection is the step's only; a MoE prefill
  // routes each token in the chain).
  static int prefill_chain_nodes(const ModelConfig& c, int prompt_len, bool fuse_swiglu = true);
  // One step, eager (every kernel launched on `s`).
  void step(cudaStream_t s);
  // One step, as a replay of the captured graph.
  void replay(cudaStream_t s);
  // Captures the step (done by the constructor unless options.capture is false).
  void capture();
  bool captured() const { return exec_ != nullptr; }
  size_t graph_nodes() const { return graph_nodes_; }
  size_t prefill_graph_nodes() const { return prefill_graph_nodes_; }
  // One eager step with an event between kernels; synchronizes.
  std::vector<KernelTiming> profile_step(cudaStream_t s);
  // Profiling only: the step graph with every kernel whose KernelTiming name
  // is in `omit` left out. What it computes is then wrong (the kernels after
  // read stale inputs); its replay time against replay()'s is what those
  // kernels cost inside the graph, their dependency waits and tails
  // included, which an eager step's events cannot show.
  using GraphExec = std::shared_ptr<std::remove_pointer_t<cudaGraphExec_t>>;
  GraphExec capture_step_without(const std::vector<std::string>& omit);
  // Profiling only (tools/decode_profile --timeline): the step graph whose
  // general-kernel gemvs and gathers and whose attentions stamp every
  // block's timeline (kb::stamp, kernels/common/timeline.cuh) into
  // `buf`: launch i (launch order) writes lines [i · kTimelineBlocks, ...),
  // 4 words a line; `spans` gets each traced launch's name and layer. The
  // results are the step's; the stamps cost one store a block.
  struct TimelineSpan {
    std::string name;
    int layer = -1;
    size_t first_line = 0;
  };
  static constexpr size_t kTimelineBlocks = 16384;  // lines a traced launch may use
  GraphExec capture_step_timeline(unsigned long long* buf, size_t lines,
                                  std::vector<TimelineSpan>* spans);
  // Profiling only: the step graph with a MoE model's gathers run by other
  // configurations (as DecoderOptions::moe_swiglu_config / moe_down_config;
  // unset: the decoder's own), for an in-graph comparison of configurations.
  GraphExec capture_step_with_moe(const std::optional<gemv::Config>& swiglu,
                                  const std::optional<gemv::Config>& down);

  // ---- host views (each synchronizes the device first) ----
  std::vector<float> logits() const;    // fp32 logits of the last step (after the final norm)
  std::vector<int32_t> tokens() const;  // [capacity()]: prompt, then generated ids
  int32_t position() const;             // tokens consumed so far
  std::vector<float> residual() const;  // x at the end of the last step (before the final norm)
  // K or V cache row (after RoPE for K) of a layer, kv head and position.
  std::vector<float> cache_row(bool v, int layer, int kvh, int pos) const;
  // Rows [row0, row0 + n) of a linear layer, dequantized (scale · int8 for int8).
  std::vector<float> linear_rows(Linear which, int layer, int64_t row0, int64_t n) const;
  std::vector<float> embedding_rows(int64_t row0, int64_t n) const;
  // Every weight, dequantized, for the CPU reference (small models only).
  HostWeights host_weights() const;
  // MoE: the router's logits [n_layers · n_experts] and chosen ids
  // [n_layers · top_experts] of the token at position `pos` (layer-major).
  std::vector<float> router_logits(int pos) const;
  std::vector<int32_t> routed_experts(int pos) const;
  // MoE: the last token's routing weights [n_layers · top_experts].
  std::vector<float> routing_weights() const;

  const ModelConfig& config() const { return cfg_; }
  WeightType weight_type() const { return wt_; }
  int capacity() const { return opt_.max_seq + 1; }
  int max_seq() const { return opt_.max_seq; }
  const std::vector<int32_t>& prompt() const { return opt_.prompt; }
  int attention_splits() const { return splits_; }
  bool attention_cluster() const { return cluster_; }
  // AttentionArgs::whole: one block a kv head, its cache in shared memory.
  bool attention_whole() const { return whole_; }
  // The router beside the o projection (DecoderOptions::moe_route_parallel,
  // where the o projection's kernel carries router blocks).
  bool route_parallel() const { return parallel_; }

 private:
  struct LinearW {
    void* w = nullptr;
    bf16* scale = nullptr;  // int8 only
    int64_t rows = 0, cols = 0;
  };
  struct LayerW {
    LinearW qkv, wo, gate_up, down;
    LinearW router, experts_gate_up, experts_down;  // MoE only
    float* route_fold = nullptr;  // MoE: F = Wr · diag(so) · Wo [n_experts, q_size] (fp32)
  };
  struct LayoutOnly {};
  // An object that only computes the layout (device_bytes): no CUDA call.
  Decoder(LayoutOnly, const ModelConfig& c, WeightType t, const DecoderOptions& o, int splits);
  size_t layout(uint8_t* base);  // assigns every pointer from `base`; returns the bytes
  void fill_weights(cudaStream_t s);
  void gemv(const LinearW& w, const bf16* x, bf16* y, const bf16* residual, cudaStream_t s,
            const gemv::RouteBlocks* route = nullptr) const;
  // The configuration a one-token gemv of rows x cols runs with in the step.
  gemv::Config step_config(int64_t rows, int64_t cols) const;
  // The step's launches; `mark(name, layer)` is called after each (profiling).
  // `lm_head` false: no LM head gemv (a MoE prefill's tokens before the last).
  template <typename Mark>
  void enqueue_step(cudaStream_t s, Mark&& mark, bool lm_head = true);
  template <typename Mark>
  void enqueue_moe(int layer, cudaStream_t s, Mark&& mark);
  template <typename Mark>
  void enqueue_o_and_route(int layer, cudaStream_t s, Mark&& mark);
  void enqueue_prefill(cudaStream_t s);
  void enqueue_prefill_moe(int layer, int n, int c0, cudaStream_t s);
  void gemv_tokens(const LinearW& w, const bf16* x, bf16* y, int tokens, const bf16* residual,
                   cudaStream_t s) const;
  AttentionArgs attention_args(int layer) const;  // pos, qkv, x, out: the step's
  RouteArgs route_args(int layer, const bf16* x, int32_t* ids, float* weights,
                       const int32_t* pos) const;
  SampleArgs sample_args() const;
  const LinearW& linear(Linear which, int layer) const;

  // capture_step_without: the kernels enqueue_step leaves out.
  bool omitted(const char* name) const;
  // One kernel of the step: launch() then mark(name, layer), unless omitted.
  template <typename Mark, typename Launch>
  void run(const char* name, int layer, Mark& mark, Launch&& launch) const {
    if (omitted(name)) return;
    tl_name_ = name;
    tl_layer_ = layer;
    launch();
    mark(name, layer);
  }
  std::vector<std::string> omit_;
  // capture_step_timeline: the buffer (null: no timeline), its lines, the
  // spans so far, the launch run() is making.
  unsigned long long* tl_buf_ = nullptr;
  size_t tl_lines_ = 0;
  mutable std::vector<TimelineSpan> tl_spans_;
  mutable const char* tl_name_ = "";
  mutable int tl_layer_ = -1;
  // The next launch's lines (run()'s name and layer), or nullptr without a timeline.
  unsigned long long* timeline_slot(int64_t blocks) const;
  ModelConfig cfg_;
  WeightType wt_;
  DecoderOptions opt_;
  int splits_ = 1;
  bool cluster_ = false;  // attention as clusters (DecoderOptions::attn_cluster on a 9.0 GPU)
  bool whole_ = false;    // DecoderOptions::attn_whole where it can run
  DeviceBuffer<uint8_t> arena_;
  // weights
  bf16* embedding_ = nullptr;
  std::vector<LayerW> layers_;
  LinearW output_;
  // state and step buffers
  bf16 *k_cache_ = nullptr, *v_cache_ = nullptr;  // [L][KVH][max_seq][hd]
  bf16 *x_ = nullptr, *qkv_ = nullptr, *att_ = nullptr, *gu_ = nullptr, *h_ = nullptr;
  bf16* raw_logits_ = nullptr;
  float* logits_ = nullptr;
  float* attn_partial_ = nullptr;
  int32_t* attn_counters_ = nullptr;
  float* sample_value_ = nullptr;
  int32_t* sample_index_ = nullptr;
  int32_t* sample_counter_ = nullptr;
  int32_t *tokens_ = nullptr, *prompt_ = nullptr, *pos_ = nullptr;
  size_t counters_bytes_ = 0;  // attention + sample counters, contiguous (zeroed once)
  // prefill: rows for up to gemv::kMaxTokens tokens; pf_pos_[i] = i
  int pf_rows_ = 0;
  bf16 *pf_x_ = nullptr, *pf_qkv_ = nullptr, *pf_att_ = nullptr, *pf_gu_ = nullptr,
       *pf_h_ = nullptr;
  int32_t* pf_pos_ = nullptr;
  // MoE prefill: the experts' down rows [E][rows][dim] (pf_h_ is then
  // [E][rows][ffn]), each layer's ids and weights per token [L][rows][top]
  bf16* pf_ed_ = nullptr;
  int32_t* pf_ids_ = nullptr;
  float* pf_rw_ = nullptr;
  // MoE: h of the chosen experts [top][ffn]; per layer the router's ids and
  // weights [L][top]; per position the router's logits and ids [capacity][L · E]
  bf16* moe_h_ = nullptr;
  int32_t* route_ids_ = nullptr;
  float* route_w_ = nullptr;
  float* hist_logits_ = nullptr;
  int32_t* hist_ids_ = nullptr;
  // moe_route_parallel (parallel_: on, and the o projection runs the
  // general kernel, which carries the router blocks): the MoE block's input
  // (the o projection's output), per layer the router blocks' logits
  // [L][E + top], their workspace and ticket, the stream beside the chain
  // for route_finish and its fork/join events (after the o projection,
  // after route_finish).
  bool parallel_ = false;
  bf16* xm_ = nullptr;
  float* route_l_ = nullptr;
  float* route_partial_ = nullptr;
  unsigned int* route_counter_ = nullptr;
  cudaStream_t side_ = nullptr;
  cudaEvent_t ev_o_ = nullptr, ev_finish_ = nullptr;
  // graphs
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  size_t graph_nodes_ = 0;
  cudaGraph_t pf_graph_ = nullptr;
  cudaGraphExec_t pf_exec_ = nullptr;
  size_t prefill_graph_nodes_ = 0;
};

}  // namespace kb::decode
