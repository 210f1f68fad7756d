// LayerNorm over the last dimension, bf16 in/out, fp32 statistics, with an
// optional fused activation and input bias (the preceding Linear's):
//   y[r, :] = act((h[r, :] - mean_r) * rstd_r * gamma + beta),  h = x + bias,
//   rstd_r = 1 / sqrt(var_r + eps), var biased (as PyTorch)
// gamma, beta and bias may be nullptr; D a multiple of 8 up to 32768 and
// 16-byte aligned pointers, else std::invalid_argument. `pdl`: pdl.cuh.
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

// Blocks of 512 threads of the plain block-row kernel (2048 < D <= 16384:
// gamma and beta, no bias, no activation, no pdl) resident on one SM of the
// current device, 0 if it spills to local memory (docs/decisions/0066: the
// row packed to fit 3).
int packed_row_blocks_per_sm();

}  // namespace kb::layer_norm
