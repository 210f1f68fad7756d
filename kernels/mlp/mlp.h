// The seed's MLP block (benchmarks/gpt_fast's mlp_layer_norm_gelu), with
// the GELU its name promises, on T tokens of width D, hidden width F:
//
//   h = x · W1^T + b1            [T, F]  Linear(D -> F)
//   g = GELU(LayerNorm(h))       [T, F]  exact (erf) GELU, nn.GELU's default
//   u = g · W2^T + b2            [T, D]  Linear(F -> D)
//   y = LayerNorm(u)             [T, D]
//
// bf16 in and out, bf16 parameters, fp32 accumulation and statistics.
// Four kernels per call, in two paths:
//   cublaslt  both Linears are bare cuBLASLt GEMMs (kb::gemm: the algorithm
//             pinned in the GPU's tuning table, else the heuristic's first
//             choice); each bias is
//             fused into the LayerNorm that reads the GEMM's output (added
//             in fp32 as the row is read: free in a memory-bound kernel,
//             where cuBLASLt's bias epilogue made its heuristic pick slower
//             algorithms). The GELU cannot be an epilogue: it follows the
//             LayerNorm, whose statistics span a whole row of h, so it is
//             fused into the LayerNorm kernel too (kb::layer_norm with
//             Activation::gelu_erf).
//   gemv      T = 1 only: the Linears are kb::gemv::gemv_bf16 with the bias
//             as its residual (y = W·x + b). At one token each Linear is a
//             weight stream, where cuBLASLt reaches about 60% of HBM
//             bandwidth (anchors: 1.7-1.9 TB/s of 3.35).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/gemm/gemm.h"

namespace kb::mlp {

using bf16 = __nv_bfloat16;

constexpr int64_t kHidden = 14336;  // the seed's hidden width
constexpr float kEps = 1e-5f;       // nn.LayerNorm's default
constexpr int kLaunches = 4;        // kernels one run() enqueues, either path

enum class Path { cublaslt, gemv };
const char* path_name(Path p);  // "cublaslt", "gemv"

// Device pointers, in nn.Linear / nn.LayerNorm layouts.
struct Params {
  const bf16* w1 = nullptr;     // [F, D]
  const bf16* b1 = nullptr;     // [F]
  const bf16* ln1_g = nullptr;  // [F]
  const bf16* ln1_b = nullptr;  // [F]
  const bf16* w2 = nullptr;     // [D, F]
  const bf16* b2 = nullptr;     // [D]
  const bf16* ln2_g = nullptr;  // [D]
  const bf16* ln2_b = nullptr;  // [D]
};

class Mlp {
 public:
  // Plans both GEMMs (cublaslt path) and allocates the intermediates h, g
  // [T, F] and u [T, D]. Throws std::invalid_argument for shapes a path
  // cannot serve (gemv with T != 1; D or F not a multiple of 8, as the
  // LayerNorm's 16-byte vectors need), kb::CudaError when cuBLASLt refuses.
  Mlp(int64_t tokens, int64_t D, int64_t F, Path path);

  // y [T, D] = MLP(x [T, D]); enqueued on `stream` only.
  void run(const Params& p, const bf16* x, bf16* y, cudaStream_t stream);

  // The two Linears of run() alone, as run() launches them, without the
  // LayerNorms (cublaslt: the bare GEMMs x·W1^T -> h, g·W2^T -> u; gemv: the
  // two GEMVs with their bias): what the MLP would take if everything
  // around its GEMMs were free (the `gemm_share` metric). Writes h and u.
  void run_gemms(const Params& p, const bf16* x, cudaStream_t stream);

  // What the row's variant should add to the path's name: the cuBLASLt
  // algorithms and where they came from ("up=<id>;down=<id>;src=table"),
  // or "" for the gemv path.
  std::string detail() const;
  // What the rows must say about the GEMMs' algorithms (a refused pin), or "".
  std::string note() const;
  // NaN into the intermediates, so a check sees any step that wrote nothing.
  void poison_intermediates();

  int64_t tokens() const { return T_; }
  int64_t D() const { return D_; }
  int64_t F() const { return F_; }
  Path path() const { return path_; }

 private:
  int64_t T_, D_, F_;
  Path path_;
  std::unique_ptr<gemm::Gemm> up_, down_;
  DeviceBuffer<bf16> h_, g_, u_;
};

// Host copies of the parameters, for the reference.
struct HostParams {
  std::vector<bf16> w1, b1, ln1_g, ln1_b, w2, b2, ln2_g, ln2_b;
};

// CPU reference of the tokens `tokens` of x [T, D] (host, bf16): returns
// [tokens.size(), D]. fp32 dot products, fp64 LayerNorm statistics, and the
// GPU's roundings of h, g and u to bf16 reproduced (with each bias added
// where `path` adds it: before the rounding for gemv, in the LayerNorm for
// cublaslt), so that the only differences left are summation order and the
// final rounding of y.
std::vector<float> mlp_ref(const HostParams& p, const bf16* x, const std::vector<int64_t>& tokens,
                           int64_t D, int64_t F, Path path = Path::gemv);

}  // namespace kb::mlp
