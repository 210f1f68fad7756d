// SwiGLU, the activation of Llama's and Mixtral's MLP, on the gate/up
// projection's output gu [tokens, 2F] (row t = [g[t, :], u[t, :]]), bf16
// in/out, fp32 math, rounded to bf16 once:
//
//   y[t, i] = silu(g[t, i]) · u[t, i],  silu(z) = z / (1 + e^-z)
//
// F must be a multiple of 8, tokens > 0, tokens · F / 8 < 2^31, the pointers
// 16-byte aligned; otherwise std::invalid_argument before any launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/swiglu/swiglu_cpu.h"  // the CPU reference and check

namespace kb::swiglu {

using bf16 = __nv_bfloat16;

void swiglu(const bf16* gu, bf16* y, int64_t tokens, int64_t F, cudaStream_t stream);

}  // namespace kb::swiglu
