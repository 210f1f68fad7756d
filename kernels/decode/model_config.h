// Named model configs (gpt-fast's `transformer_configs`) and the byte counts
// the decode rows declare. No CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kb::decode {

// The linear weights (the embedding stays bf16); int8 has a bf16 scale per row.
enum class WeightType { bf16, int8 };
const char* weight_type_name(WeightType t);  // "bfloat16", "int8" (the CSV dtype)

struct ModelConfig {
  std::string name;
  int dim = 0;  // model width
  int n_layers = 0;
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads (GQA: n_heads is a multiple of it)
  int head_dim = 0;
  int ffn = 0;  // hidden size of the SwiGLU MLP
  int vocab = 0;
  float rope_theta = 10000.f;
  float norm_eps = 1e-5f;
  int n_experts = 0;    // 0: dense SwiGLU MLP; else a mixture of experts of hidden size ffn each
  int top_experts = 0;  // experts each token uses (top-k of the router's softmax, renormalized)

  bool moe() const { return n_experts > 0; }
  int group() const { return n_heads / n_kv_heads; }  // query heads per kv head
  int q_size() const { return n_heads * head_dim; }
  int kv_size() const { return n_kv_heads * head_dim; }
  int qkv_rows() const { return q_size() + 2 * kv_size(); }  // fused [q | k | v]
};

// Llama-2-7B, Llama-3-8B, Mixtral-8x7B, and "tiny" / "tiny-moe" for the tests.
const std::vector<ModelConfig>& model_configs();
// The config named `name`; throws std::invalid_argument listing the known names.
const ModelConfig& find_config(const std::string& name);
// "" when this code can decode `c`, else why not (shape limits of the kernels).
std::string unsupported_reason(const ModelConfig& c);

// Bytes of one model's parts, as stored on the GPU.
struct WeightBytes {
  double linear = 0;     // every linear layer's weights, the LM head and all experts
  double scales = 0;     // int8 per-row scales (bf16), 0 for bf16
  double norms = 0;      // RMSNorm weights (bf16, 2 per layer + final): counted as the seed does
  double embedding = 0;  // token embedding (bf16)
  // What the seed's model_size counts: every parameter except the embedding.
  double seed_model_size() const { return linear + scales + norms; }
};
WeightBytes weight_bytes(const ModelConfig& c, WeightType t);
// The weight bytes one decode step reads (docs/metrics.md): seed_model_size()
// with only the top_experts of each layer's experts.
double active_weight_bytes(const ModelConfig& c, WeightType t);

// KV-cache bytes read by one decode step attending over `len` positions (bf16 K and V).
double kv_bytes_read(const ModelConfig& c, int64_t len);

// `bytes` as "12.3 GB", for messages.
std::string gigabytes(double bytes);

}  // namespace kb::decode
