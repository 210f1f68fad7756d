// RMSNorm over the last dimension (Llama's, Mixtral's), bf16 in/out, fp32
// math, rounded once: y[r, :] = x[r, :] · w / sqrt(mean(x[r, :]²) + eps).
// D a multiple of 8 up to 32768, 16-byte aligned pointers; else std::invalid_argument.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/rms_norm/rms_norm_cpu.h"  // the CPU reference and check

namespace kb::rms_norm {

using bf16 = __nv_bfloat16;

void rms_norm(const bf16* x, const bf16* w, bf16* y, int64_t rows, int64_t D, float eps,
              cudaStream_t stream);

}  // namespace kb::rms_norm
