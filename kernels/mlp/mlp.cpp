#include "kernels/mlp/mlp.h"

#include <stdexcept>

#include "kernels/gemv/gemv.h"
#include "kernels/layer_norm/layer_norm.h"

namespace kb::mlp {

const char* path_name(Path p) { return p == Path::cublaslt ? "cublaslt" : "gemv"; }

Mlp::Mlp(int64_t tokens, int64_t D, int64_t F, Path path) : T_(tokens), D_(D), F_(F), path_(path) {
  const std::string shape =
      "tokens=" + std::to_string(T_) + " D=" + std::to_string(D_) + " F=" + std::to_string(F_);
  if (T_ <= 0 || D_ <= 0 || F_ <= 0)
    throw std::invalid_argument("mlp: tokens, D and F must be > 0 (got " + shape + ")");
  if (D_ % 8 != 0 || F_ % 8 != 0)
    throw std::invalid_argument("mlp: D and F must be multiples of 8 for the LayerNorm (got " +
                                shape + ")");
  if (path_ == Path::gemv) {
    if (T_ != 1)
      throw std::invalid_argument("mlp: the gemv path serves one token only (got " + shape + ")");
    const int64_t kv = gemv::k_multiple_bf16();
    if (D_ % kv != 0 || F_ % kv != 0)
      throw std::invalid_argument("mlp: the gemv path needs D and F multiples of " +
                                  std::to_string(kv) + " (got " + shape + ")");
  } else {
    // No epilogue: the LayerNorms add the biases (docs/decisions/0041).
    up_ = std::make_unique<gemm::Gemm>(T_, F_, D_);
    down_ = std::make_unique<gemm::Gemm>(T_, D_, F_);
  }
  h_ = DeviceBuffer<bf16>(static_cast<size_t>(T_ * F_));
  g_ = DeviceBuffer<bf16>(static_cast<size_t>(T_ * F_));
  u_ = DeviceBuffer<bf16>(static_cast<size_t>(T_ * D_));
}

void Mlp::run(const Params& p, const bf16* x, bf16* y, cudaStream_t s) {
  // Every kernel after the first is a programmatic dependent of the one
  // before (cuBLASLt's GEMMs aside): the second GEMV streams its weights
  // during the LayerNorm.
  const bool lt = path_ == Path::cublaslt;
  if (lt)
    up_->run(x, p.w1, nullptr, h_.get(), s);
  else
    gemv::gemv_bf16(p.w1, x, h_.get(), F_, D_, s, p.b1);
  layer_norm::layer_norm(h_.get(), p.ln1_g, p.ln1_b, g_.get(), T_, F_, kEps,
                         layer_norm::Activation::gelu_erf, s, lt ? p.b1 : nullptr, true);
  if (lt)
    down_->run(g_.get(), p.w2, nullptr, u_.get(), s);
  else
    gemv::gemv_bf16(p.w2, g_.get(), u_.get(), D_, F_, s, p.b2, true);
  layer_norm::layer_norm(u_.get(), p.ln2_g, p.ln2_b, y, T_, D_, kEps, layer_norm::Activation::none,
                         s, lt ? p.b2 : nullptr, true);
}

void Mlp::run_gemms(const Params& p, const bf16* x, cudaStream_t s) {
  if (path_ == Path::cublaslt) {
    up_->run(x, p.w1, nullptr, h_.get(), s);
    down_->run(g_.get(), p.w2, nullptr, u_.get(), s);
  } else {
    gemv::gemv_bf16(p.w1, x, h_.get(), F_, D_, s, p.b1);
    gemv::gemv_bf16(p.w2, g_.get(), u_.get(), D_, F_, s, p.b2, true);
  }
}

std::string Mlp::detail() const {
  if (path_ != Path::cublaslt) return "";
  const std::string us = gemm::algo_source_name(up_->source());
  const std::string ds = gemm::algo_source_name(down_->source());
  return "up=" + up_->id() + ";down=" + down_->id() + ";src=" + (us == ds ? us : us + "+" + ds);
}

std::string Mlp::note() const {
  if (path_ != Path::cublaslt) return "";
  const std::string& u = up_->note();
  const std::string& d = down_->note();
  return u.empty() ? d : d.empty() ? u : u + "; " + d;
}

void Mlp::poison_intermediates() {
  h_.poison();
  g_.poison();
  u_.poison();
}

}  // namespace kb::mlp
