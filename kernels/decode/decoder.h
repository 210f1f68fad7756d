// A Llama decoder at batch 1 on the GPU (docs/notes/decode.md), seeded
// random weights; the step is a CUDA graph that reads and advances the
// position and tokens in device memory: reset(s), then replay(s) per token.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/graph.h"
#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/decode_ref.h"
#include "kernels/decode/model_config.h"
#include "kernels/gemv/gemv.h"

namespace kb::decode {

struct DecoderOptions {
  int max_seq = 256;               // KV-cache positions
  uint64_t seed = 1;               // of the weights
  std::vector<int32_t> prompt{1};  // token ids, each in [0, vocab)
  bool capture = true;             // capture the step and prefill graphs in the constructor
  int attn_splits = 0;             // the split attention's splits (0: default_attention_splits)
  int attn_min_chunk = 16;
  // Tests, to cover other GPUs' paths: false runs the split attention where
  // the whole-cache one could, and keeps the MoE router on the chain
  // (moe_route) where the o projection could carry router blocks.
  bool attn_whole = true;
  bool moe_route_parallel = true;
  // Tests only, to prove the checks fail: 1 wrong routing, 2 id out of range
  // (RouteArgs::fault); 3 the combine reads the next layer's ids and weights.
  int route_fault = 0;
};

// Which linear layer. A MoE layer has router, experts_gate_up ([E·2·ffn,
// dim]) and experts_down ([E·dim, ffn]) instead of gate_up and down.
enum class Linear { qkv, wo, gate_up, down, router, experts_gate_up, experts_down, output };

class Decoder {
 public:
  // Device bytes a decoder needs: weights + KV cache + step buffers.
  static size_t device_bytes(const ModelConfig& c, WeightType t, int max_seq);
  // Kernels per step (the graph's nodes when every gemv is one kernel).
  static int kernels_per_step(const ModelConfig& c) { return (c.moe() ? 6 : 5) * c.n_layers + 3; }
  // Of those, the kernels that each wait for the one before (the roofline's
  // launches): all but moe_route_finish beside the chain.
  static int chain_kernels_per_step(const ModelConfig& c, bool moe_parallel = true) {
    return kernels_per_step(c) - (c.moe() && moe_parallel ? c.n_layers : 0);
  }

  // Allocates (a model that does not fit: std::runtime_error saying how
  // much), fills the weights, runs one eager step and prefill (lazy setup
  // outside the capture) and captures the graphs.
  Decoder(const ModelConfig& c, WeightType t, const DecoderOptions& o);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // pos = 0, tokens[0, prompt) = prompt: one kernel.
  void reset(cudaStream_t s);
  // The prompt as one forward (gpt-fast's prefill), each weight read once
  // per gemv::kMaxTokens tokens: the state of reset + prompt steps.
  void prefill(cudaStream_t s, bool eager = false);
  // The prefill graph's nodes (kernels and one copy) for `prompt_len` tokens.
  static int prefill_nodes(const ModelConfig& c, int prompt_len);
  void step(cudaStream_t s);    // one step, eager
  void replay(cudaStream_t s);  // one step, a replay of the captured graph
  void capture();               // done by the constructor unless options.capture is false
  bool captured() const { return graph_.exec != nullptr; }
  size_t graph_nodes() const { return graph_.nodes(); }
  size_t prefill_graph_nodes() const { return prefill_graph_.nodes(); }

  // ---- host views (each synchronizes the device first) ----
  std::vector<float> logits() const;    // fp32 logits of the last step (after the final norm)
  std::vector<int32_t> tokens() const;  // [capacity()]: prompt, then generated ids
  int32_t position() const;             // tokens consumed so far
  std::vector<float> residual() const;  // x at the end of the last step (before the final norm)
  // K or V cache row (after RoPE for K) of a layer, kv head and position.
  std::vector<float> cache_row(bool v, int layer, int kvh, int pos) const;
  // Rows [row0, row0 + n) of a linear layer, dequantized (scale · int8 for int8).
  std::vector<float> linear_rows(Linear which, int layer, int64_t row0, int64_t n) const;
  // Every weight, dequantized, for the CPU reference (small models only).
  HostWeights host_weights() const;
  // MoE: the router's logits [n_layers · n_experts] and chosen ids
  // [n_layers · top_experts] of the token at position `pos` (layer-major).
  std::vector<float> router_logits(int pos) const;
  std::vector<int32_t> routed_experts(int pos) const;

  const ModelConfig& config() const { return cfg_; }
  WeightType weight_type() const { return wt_; }
  int capacity() const { return opt_.max_seq + 1; }
  int max_seq() const { return opt_.max_seq; }
  const std::vector<int32_t>& prompt() const { return opt_.prompt; }
  bool attention_whole() const { return whole_; }    // AttentionArgs::whole
  bool route_parallel() const { return parallel_; }  // the router beside the o projection

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
  void enqueue_moe(int layer, cudaStream_t s);
  void enqueue_o_and_route(int layer, cudaStream_t s);
  void enqueue_prefill(cudaStream_t s);
  void enqueue_prefill_layers(int n, int c0, cudaStream_t s);
  void enqueue_prefill_moe(int layer, int n, int c0, cudaStream_t s);
  void gemv_tokens(const LinearW& w, const bf16* x, bf16* y, int tokens, const bf16* residual,
                   cudaStream_t s) const;
  AttentionArgs attention_args(int layer) const;  // pos, qkv, x, out: the step's
  RouteArgs route_args(int layer, const bf16* x, int32_t* ids, float* weights,
                       const int32_t* pos) const;
  SampleArgs sample_args() const;
  const LinearW& linear(Linear which, int layer) const;

  ModelConfig cfg_;
  WeightType wt_;
  DecoderOptions opt_;
  int splits_ = 1;
  bool whole_ = false;  // DecoderOptions::attn_whole where it can run
  DeviceBuffer<uint8_t> arena_;
  // weights
  bf16* embedding_ = nullptr;
  std::vector<LayerW> layers_;
  LinearW output_;
  bf16 *k_cache_ = nullptr, *v_cache_ = nullptr;  // [L][KVH][max_seq][hd]
  bf16 *x_ = nullptr, *qkv_ = nullptr, *att_ = nullptr, *h_ = nullptr;
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
  bf16 *pf_x_ = nullptr, *pf_qkv_ = nullptr, *pf_att_ = nullptr, *pf_h_ = nullptr;
  int32_t* pf_pos_ = nullptr;
  // MoE prefill: experts' down rows [E][rows][dim] (pf_h_: [E][rows][ffn]),
  // each layer's ids and weights per token [L][rows][top]
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
  // The router beside the o projection: the MoE block's input, per layer
  // the router blocks' logits [L][E + top], their workspace and ticket,
  // route_finish's stream and events.
  bool parallel_ = false;
  bf16* xm_ = nullptr;
  float* route_l_ = nullptr;
  float* route_partial_ = nullptr;
  unsigned int* route_counter_ = nullptr;
  cudaStream_t side_ = nullptr;
  cudaEvent_t ev_o_ = nullptr, ev_finish_ = nullptr;
  CudaGraph graph_, prefill_graph_;
};

}  // namespace kb::decode
