// CPU reference of kb::mlp, step by step as the GPU does it.
#include <stdexcept>

#include "kernels/common/host_math.h"
#include "kernels/gemm/gemm.h"
#include "kernels/layer_norm/layer_norm.h"
#include "kernels/mlp/mlp.h"

namespace kb::mlp {

namespace {

void check_sizes(const HostParams& p, int64_t D, int64_t F) {
  const auto n = [](const std::vector<bf16>& v) { return static_cast<int64_t>(v.size()); };
  if (n(p.w1) != F * D || n(p.b1) != F || n(p.ln1_g) != F || n(p.ln1_b) != F || n(p.w2) != D * F ||
      n(p.b2) != D || n(p.ln2_g) != D || n(p.ln2_b) != D)
    throw std::invalid_argument("mlp_ref: parameter sizes do not match D and F");
}

}  // namespace

std::vector<float> mlp_ref(const HostParams& p, const bf16* x, const std::vector<int64_t>& tokens,
                           int64_t D, int64_t F, Path path) {
  check_sizes(p, D, F);
  const int64_t R = static_cast<int64_t>(tokens.size());
  std::vector<int64_t> all(static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r) all[r] = r;
  // Where the GPU adds each bias: cublaslt in the LayerNorm (fp32, after
  // the GEMM's output was stored as bf16), gemv before storing.
  const bool in_norm = path == Path::cublaslt;
  const auto ep = in_norm ? gemm::Epilogue::none : gemm::Epilogue::bias;

  // h = x W1^T (+ b1), fp32 accumulate, stored as bf16.
  const auto b1 = to_float(p.b1);
  auto h = to_float(to_bf16(gemm::ref_rows(tokens, x, p.w1.data(), b1.data(), F, D, ep)));
  // g = GELU(LayerNorm(h (+ b1))), stored as bf16.
  std::vector<float> g(h.size());
  const auto g1 = to_float(p.ln1_g), be1 = to_float(p.ln1_b);
  layer_norm::layer_norm_ref(h.data(), g1.data(), be1.data(), g.data(), R, F, kEps,
                             layer_norm::Activation::gelu_erf, in_norm ? b1.data() : nullptr);
  const auto g_bf16 = to_bf16(g);
  // u = g W2^T (+ b2), stored as bf16.
  const auto b2 = to_float(p.b2);
  auto u = to_float(to_bf16(gemm::ref_rows(all, g_bf16.data(), p.w2.data(), b2.data(), D, F, ep)));
  // y = LayerNorm(u (+ b2)), left in fp32 (the tolerance covers its rounding).
  std::vector<float> y(u.size());
  const auto g2 = to_float(p.ln2_g), be2 = to_float(p.ln2_b);
  layer_norm::layer_norm_ref(u.data(), g2.data(), be2.data(), y.data(), R, D, kEps,
                             layer_norm::Activation::none, in_norm ? b2.data() : nullptr);
  return y;
}

}  // namespace kb::mlp
