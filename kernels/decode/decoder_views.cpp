// The decoder's host views (decoder.h): each synchronizes the device, then
// copies a tensor back (dequantized where it is int8).
#include <cuda_runtime.h>

#include <stdexcept>

#include "kernels/common/cuda_check.h"
#include "kernels/common/host_math.h"
#include "kernels/decode/decoder.h"

namespace kb::decode {

namespace {

// n elements at p, after every kernel on the device has finished.
template <typename T>
std::vector<T> download(const T* p, size_t n) {
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> v(n);
  KB_CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

std::vector<float> download_bf16(const bf16* p, size_t n) { return to_float(download(p, n)); }

}  // namespace

std::vector<float> Decoder::logits() const { return download(logits_, size_t(cfg_.vocab)); }

std::vector<int32_t> Decoder::tokens() const { return download(tokens_, size_t(capacity())); }

int32_t Decoder::position() const { return download(pos_, 1)[0]; }

std::vector<float> Decoder::residual() const { return download_bf16(x_, cfg_.dim); }

std::vector<float> Decoder::cache_row(bool v, int layer, int kvh, int pos) const {
  if (layer < 0 || layer >= cfg_.n_layers || kvh < 0 || kvh >= cfg_.n_kv_heads || pos < 0 ||
      pos >= opt_.max_seq)
    throw std::out_of_range("Decoder::cache_row: index out of range");
  const size_t off = ((size_t(layer) * cfg_.n_kv_heads + kvh) * opt_.max_seq + pos) * cfg_.head_dim;
  return download_bf16((v ? v_cache_ : k_cache_) + off, cfg_.head_dim);
}

const Decoder::LinearW& Decoder::linear(Linear which, int layer) const {
  if (which == Linear::output) return output_;
  static constexpr LinearW LayerW::*kByLinear[] = {// in the order of Linear
                                                   &LayerW::qkv,         &LayerW::wo,
                                                   &LayerW::gate_up,     &LayerW::down,
                                                   &LayerW::router,      &LayerW::experts_gate_up,
                                                   &LayerW::experts_down};
  return layers_.at(layer).*kByLinear[static_cast<int>(which)];
}

std::vector<float> Decoder::linear_rows(Linear which, int layer, int64_t row0, int64_t n) const {
  const LinearW& l = linear(which, layer);
  if (!l.w) throw std::invalid_argument("Decoder::linear_rows: this model has no such layer");
  if (row0 < 0 || n < 0 || row0 + n > l.rows)
    throw std::out_of_range("Decoder::linear_rows: rows out of range");
  const size_t count = size_t(n) * l.cols;
  if (wt_ == WeightType::bf16)
    return download_bf16(static_cast<const bf16*>(l.w) + size_t(row0) * l.cols, count);
  const std::vector<int8_t> q =
      download(static_cast<const int8_t*>(l.w) + size_t(row0) * l.cols, count);
  const std::vector<float> sc = download_bf16(l.scale + row0, size_t(n));
  std::vector<float> out(count);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < l.cols; ++k)
      out[size_t(r) * l.cols + k] = sc[r] * static_cast<float>(q[size_t(r) * l.cols + k]);
  return out;
}

HostWeights Decoder::host_weights() const {
  HostWeights w;
  w.cfg = cfg_;
  w.embedding = download_bf16(embedding_, size_t(cfg_.vocab) * cfg_.dim);
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
  const size_t row = size_t(c.n_layers) * c.n_experts;
  return download(hist_logits_ + size_t(pos) * row, row);
}

std::vector<int32_t> Decoder::routed_experts(int pos) const {
  const auto& c = cfg_;
  if (!c.moe()) throw std::logic_error("Decoder::routed_experts: not a mixture of experts");
  if (pos < 0 || pos >= capacity()) throw std::out_of_range("Decoder::routed_experts: pos");
  const size_t row = size_t(c.n_layers) * c.n_experts;
  const std::vector<int32_t> all = download(hist_ids_ + size_t(pos) * row, row);
  std::vector<int32_t> v;
  for (int l = 0; l < c.n_layers; ++l)
    for (int j = 0; j < c.top_experts; ++j) v.push_back(all[size_t(l) * c.n_experts + j]);
  return v;
}

}  // namespace kb::decode
