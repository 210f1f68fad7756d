// The seed's MLP block (mlp_layer_norm_gelu), bf16, docs/notes/mlp.md:
//   h = x · W1^T + b1; g = GELU(LayerNorm(h)); u = g · W2^T + b2; y = LayerNorm(u)
// in four kernels: cuBLASLt GEMMs with the biases and GELU in the LayerNorms
// (`cublaslt`), or at one token kb::gemv with the bias as its residual (`gemv`).
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
  // Plans both GEMMs (cublaslt) and allocates h, g and u.
  Mlp(int64_t tokens, int64_t D, int64_t F, Path path);

  // y [T, D] = MLP(x [T, D]); enqueued on `stream` only.
  void run(const Params& p, const bf16* x, bf16* y, cudaStream_t stream);

  // run()'s two Linears alone (the `gemm_share` metric); writes h and u.
  void run_gemms(const Params& p, const bf16* x, cudaStream_t stream);

  // The row's variant: "up=<id>;down=<id>;src=table" (cublaslt), or "".
  std::string detail() const;
  // What the rows must say about the GEMMs' algorithms (a refused pin), or "".
  std::string note() const;
  // NaN into the intermediates, so a check sees any step that wrote nothing.
  void poison_intermediates();

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

// CPU reference of the tokens `tokens` of x [T, D]: [tokens.size(), D], with
// the GPU's bf16 roundings and each bias where `path` adds it.
std::vector<float> mlp_ref(const HostParams& p, const bf16* x, const std::vector<int64_t>& tokens,
                           int64_t D, int64_t F, Path path = Path::gemv);

}  // namespace kb::mlp
