#include "kernels/decode/model_config.h"

#include <stdexcept>

#include "core/record.h"

namespace kb::decode {

const char* weight_type_name(WeightType t) { return t == WeightType::int8 ? "int8" : "bfloat16"; }

const std::vector<ModelConfig>& model_configs() {
  // name, dim, layers, heads, kv heads, head_dim, ffn, vocab, rope theta, eps, experts, top.
  // "tiny" is small enough for a CPU reference in milliseconds, with GQA,
  // head_dim 64 and sizes that are not powers of two (an indexing bug shows).
  static const std::vector<ModelConfig> configs = {
      {"Llama-2-7b-chat-hf", 4096, 32, 32, 32, 128, 11008, 32000, 10000.f, 1e-5f, 0, 0},
      {"Meta-Llama-3-8B", 4096, 32, 32, 8, 128, 14336, 128256, 500000.f, 1e-5f, 0, 0},
      {"Mixtral-8x7B-v0.1", 4096, 32, 32, 8, 128, 14336, 32000, 1000000.f, 1e-5f, 8, 2},
      {"tiny", 256, 2, 4, 2, 64, 704, 1000, 10000.f, 1e-5f, 0, 0},
      {"tiny-moe", 256, 2, 4, 2, 64, 704, 1000, 1000000.f, 1e-5f, 4, 2},
  };
  return configs;
}

const ModelConfig& find_config(const std::string& name) {
  std::string known;
  for (const auto& c : model_configs()) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  throw std::invalid_argument("unknown model config '" + name + "' (known: " + known + ")");
}

std::string unsupported_reason(const ModelConfig& c) {
  if (c.dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.ffn <= 0 ||
      c.vocab <= 0)
    return "every size must be positive";
  if (c.n_experts < 0 ||
      (c.n_experts > 0 && (c.top_experts < 1 || c.top_experts > 2 || c.top_experts > c.n_experts)))
    return "a mixture of experts needs top_experts of 1 or 2 (at most n_experts)";
  if (c.n_experts > 64) return "at most 64 experts (the router kernel)";
  if (c.head_dim != 64 && c.head_dim != 128) return "head_dim must be 64 or 128";
  if (c.n_heads % c.n_kv_heads != 0) return "n_heads must be a multiple of n_kv_heads";
  const int g = c.group();
  if (g != 1 && g != 2 && g != 4 && g != 8) return "n_heads / n_kv_heads must be 1, 2, 4 or 8";
  // 16-byte vectors of bf16 in the embedding and norm-scale loads.
  if (c.dim % 8 != 0 || c.ffn % 8 != 0) return "dim and ffn must be multiples of 8";
  return "";
}

WeightBytes weight_bytes(const ModelConfig& c, WeightType t) {
  const double per_elem = t == WeightType::int8 ? 1 : 2;
  const double d = c.dim;
  // Output rows of each linear layer of one block and their K.
  const double qkv = double(c.qkv_rows()) * d;
  const double wo = d * c.q_size();
  // The MLP: one, or every expert and the router (n_experts rows of dim).
  const double mlps = c.moe() ? c.n_experts : 1;
  const double router = c.moe() ? double(c.n_experts) * d : 0;
  const double gate_up = mlps * 2.0 * c.ffn * d;
  const double down = mlps * d * c.ffn;
  const double layer_elems = qkv + wo + router + gate_up + down;
  const double layer_rows =
      double(c.qkv_rows()) + d + (c.moe() ? c.n_experts : 0) + mlps * (2.0 * c.ffn + d);
  WeightBytes b;
  b.linear = (c.n_layers * layer_elems + double(c.vocab) * d) * per_elem;
  b.scales = t == WeightType::int8 ? (c.n_layers * layer_rows + c.vocab) * 2.0 : 0.0;
  b.norms = (2.0 * c.n_layers + 1) * d * 2.0;
  b.embedding = double(c.vocab) * d * 2.0;
  return b;
}

double active_weight_bytes(const ModelConfig& c, WeightType t) {
  const WeightBytes all = weight_bytes(c, t);
  if (!c.moe()) return all.seed_model_size();
  // Less the experts a token does not use: their weights and row scales.
  const double per_elem = t == WeightType::int8 ? 1 : 2;
  const double expert =
      3.0 * c.ffn * c.dim * per_elem + (t == WeightType::int8 ? (2.0 * c.ffn + c.dim) * 2.0 : 0.0);
  return all.seed_model_size() - double(c.n_layers) * (c.n_experts - c.top_experts) * expert;
}

std::string gigabytes(double bytes) { return format_double("%.1f GB", bytes / 1e9); }

double kv_bytes_read(const ModelConfig& c, int64_t len) {
  return double(c.n_layers) * 2.0 * c.kv_size() * 2.0 * double(len);
}

}  // namespace kb::decode
