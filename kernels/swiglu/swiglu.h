// SwiGLU (Llama's, Mixtral's MLP) on gu [tokens, 2F], row t = [g[t, :], u[t, :]],
// bf16 in/out, fp32 math: y[t, i] = silu(g[t, i]) · u[t, i]. F a multiple
// of 8, tokens · F / 8 < 2^31, 16-byte aligned pointers; else std::invalid_argument.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/swiglu/swiglu_cpu.h"  // the CPU reference and check

namespace kb::swiglu {

using bf16 = __nv_bfloat16;

void swiglu(const bf16* gu, bf16* y, int64_t tokens, int64_t F, cudaStream_t stream);

}  // namespace kb::swiglu
