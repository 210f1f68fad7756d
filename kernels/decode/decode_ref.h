// CPU fp32 reference of the Llama decode step, written the plain way (RMSNorm
// before each projection, full softmax over the cache) so that it shares no
// algebra with the GPU path; its weights are the GPU model's, dequantized.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/decode/model_config.h"

namespace kb::decode {

struct HostLayer {
  std::vector<float> qkv;      // [(H + 2·KVH)·hd, dim], rows [q | k | v]
  std::vector<float> wo;       // [dim, H·hd]
  std::vector<float> gate_up;  // [2·ffn, dim], rows [gate | up]
  std::vector<float> down;     // [dim, ffn]
  // A mixture of experts instead of gate_up and down:
  std::vector<float> router;           // [E, dim]
  std::vector<float> experts_gate_up;  // [E · 2·ffn, dim]: expert e's gate | up rows at e · 2·ffn
  std::vector<float> experts_down;     // [E · dim, ffn]
};

struct HostWeights {
  ModelConfig cfg;
  std::vector<float> embedding;  // [vocab, dim]
  std::vector<HostLayer> layers;
  std::vector<float> output;  // [vocab, dim]
};

// The weights a Decoder of (c, t, seed) generates, recomputed on the host.
HostWeights make_host_weights(const ModelConfig& c, WeightType t, uint64_t seed);

// In place, interleaved pairs (v[2i], v[2i+1]) rotated by pos · theta^(-2i/hd).
void rope_ref(float* v, int head_dim, int pos, float theta);
// One query token over cache positions [0, len): q [H·hd], caches
// [KVH][max_seq][hd], out [H·hd]; query head h reads kv head h / (H / KVH).
void attention_ref(const float* q, const float* k_cache, const float* v_cache, int n_heads,
                   int n_kv_heads, int head_dim, int max_seq, int len, float* out);
// Index of the largest value, the lowest on a tie (torch.argmax).
int argmax_ref(const std::vector<float>& v);

class RefDecoder {
 public:
  RefDecoder(const HostWeights& w, int max_seq);
  // Runs `token` at the next position; returns the logits [vocab].
  // A MoE layer routes as route_ref, or as set by prefer_routing.
  std::vector<float> step(int token);
  // MoE, for the next step only: per layer the GPU's ids where
  // routing_mismatch accepts them (so that a near tie does not make the
  // models diverge), else its own choice, why in route_error().
  void prefer_routing(std::vector<std::vector<int>> ids, double tol);
  // The first routing the GPU's choice did not pass ("" if none).
  const std::string& route_error() const { return route_error_; }
  // MoE: the last step's router logits of a layer (CPU), [E].
  const std::vector<float>& router_logits(int layer) const { return router_logits_.at(layer); }
  // The residual after the last step's final block (before the final norm).
  const std::vector<float>& residual() const { return x_; }
  // This layer's K cache row at `pos` of kv head `kvh` (after RoPE).
  const float* k_row(int layer, int kvh, int pos) const;
  const float* v_row(int layer, int kvh, int pos) const;

 private:
  const HostWeights& w_;
  int max_seq_, pos_ = 0;
  std::vector<float> x_;
  std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer [KVH][max_seq][hd]
  std::vector<std::vector<int>> preferred_;
  double prefer_tol_ = 0;
  std::string route_error_;
  std::vector<std::vector<float>> router_logits_;           // per layer, the last step's
  void moe_block(int layer, const std::vector<float>& xn);  // x += the experts' weighted sum
};

}  // namespace kb::decode
