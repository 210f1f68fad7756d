// GEMV for batch-1 decode: y = W·x, weights streamed once from HBM.
//
//   y[n] = scale[n] * sum_k W[n, k] * x[k]  (+ residual[n])
//
// W row-major [N, K] in bf16, or int8 weight-only with a per-output-row bf16
// scale (gpt-fast's int8 path: scale == nullptr for bf16); x, y, residual
// bf16; fp32 accumulation. `residual` may alias `y` (in-place residual add).
//
// gather_gemv: W [E, N, K]; `experts` holds `n_sel` expert ids in device
// memory; y[s, :] = W[experts[s]] · x (MoE expert selection at batch 1).
//
// Shapes a kernel cannot serve (K not a multiple of the vector width, N or
// K <= 0, n_sel > E) throw std::invalid_argument before any launch. An
// expert id outside [0, E) is never read out of bounds: the kernel writes
// NaN for that row instead (ids live on the device; see gather_gemv docs).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace kb::gemv {

using bf16 = __nv_bfloat16;

// The vector width in elements that K must be a multiple of.
int k_multiple_bf16();
int k_multiple_int8();

void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual = nullptr);
void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual = nullptr);

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream);
void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream);

// CPU references (fp32 accumulation over the same bf16/int8 inputs; y in fp32).
void gemv_ref(const float* W, const float* scale, const float* x, float* y, int64_t N, int64_t K,
              const float* residual = nullptr);

}  // namespace kb::gemv
