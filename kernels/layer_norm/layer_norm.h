// LayerNorm over the last dimension, bf16 in/out, fp32 statistics, with an
// optional fused activation (the MLP's LayerNorm -> GELU) and an optional
// input bias (the preceding Linear's, added in fp32 as the row is read):
//
//   y[r, :] = act((h[r, :] - mean_r) * rstd_r * gamma + beta),  h = x + bias
//   rstd_r  = 1 / sqrt(var_r + eps),  var the biased variance of h (as PyTorch)
//
// gamma, beta and bias may be nullptr. D must be a multiple of 8 up to 32768,
// rows > 0, the pointers 16-byte aligned; otherwise std::invalid_argument
// before launch. `pdl`: a programmatic dependent of the previous work on the
// stream (kernels/common/pdl.cuh), which lets the next grid launch at once.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/layer_norm/layer_norm_cpu.h"  // Activation, the CPU reference

namespace kb::layer_norm {

using bf16 = __nv_bfloat16;

void layer_norm(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, int64_t rows,
                int64_t D, float eps, Activation act, cudaStream_t stream,
                const bf16* bias = nullptr, bool pdl = false);

}  // namespace kb::layer_norm
