// LayerNorm (+ optional GELU) over rows of bf16, fp32 statistics.
//
// Versions:
//   row_per_warp<VPL>      D <= 2048: one warp per row, VPL 16-byte vectors
//                          per lane in registers, shuffle-only reductions.
//   row_in_registers<VPT>  one block per row; each thread holds VPT 16-byte
//                          vectors (8 bf16 each) of the row in registers, so
//                          the row is read from HBM once and written once
//                          (the 2·rows·D·2 bytes the seed counts). Two-pass
//                          statistics (mean, then sum of squared deviations)
//                          on the registers: exact as a CPU two-pass.
//   row_streaming          D too large for registers (> 32768): three passes
//                          over global memory. Correct, not tuned.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/common/bf16x8.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/cuda_check.h"
#include "kernels/common/pdl.cuh"
#include "kernels/common/warp.cuh"
#include "kernels/layer_norm/layer_norm.h"

namespace kb::layer_norm {

namespace {

constexpr int kVec = kBf16x8;

// The hardware's approximate reciprocal and 2^x, flush-to-zero (2^x is 0
// below -126: fine for e^(-v²/2)).
__device__ __forceinline__ float rcp_approx(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float exp2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// The exact (erf) GELU, v·Φ(v), without erff: q = Φ(-|v|) = erfc(|v|/√2)/2
// from Abramowitz & Stegun 7.1.26 (erfc(z) = t·P(t)·e^(-z²), t = 1/(1 +
// 0.3275911·z), |error| <= 1.5e-7), then Φ(v) = v >= 0 ? 1 - q : q: one
// reciprocal, one exponential, a few FMAs and no branch (erff has two
// ranges). Relative error against a double erfc (float, on the CPU):
// < 7e-7 for v >= -1, 3e-6 on [-2, -1), 5e-5 on [-3, -2), 5e-4 on [-4, -3),
// 2e-3 on [-5, -4), where 0.5·v·(1 + erff(v/√2)) is off by 5e-2 (and below
// -5.5 returns 0, as 1 + erf cancels); |GELU| there is under 1.3e-4.
__device__ __forceinline__ float gelu_erf(float v) {
  // t = 1 / (1 + p·|v|/√2); the 1/2 of q folded into the coefficients.
  const float t = rcp_approx(fmaf(0.3275911f * 0.70710678118654752f, fabsf(v), 1.f));
  const float p =
      fmaf(fmaf(fmaf(fmaf(0.5f * 1.061405429f, t, 0.5f * -1.453152027f), t, 0.5f * 1.421413741f), t,
                0.5f * -0.284496736f),
           t, 0.5f * 0.254829592f) *
      t;
  const float q = p * exp2_approx(v * v * -0.72134752044448170f);  // e^(-v²/2) = 2^(-v²·log2(e)/2)
  return v * (v >= 0.f ? 1.f - q : q);
}

template <Activation ACT>
__device__ __forceinline__ float activate(float v) {
  if constexpr (ACT == Activation::gelu_erf) {
    return gelu_erf(v);
  } else if constexpr (ACT == Activation::gelu_tanh) {
    const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.f + tanhf(u));
  } else {
    return v;
  }
}

// The scalars every version takes; the pointers go as __restrict__
// parameters (read-only, not aliasing y: with them in a struct the gamma
// and beta loads were no longer hoisted and D >= 4096 lost 25%).
struct Shape {
  int64_t rows, D;
  float eps;
};
// What the host passes down (the kernels take the pointers one by one).
struct Args {
  const bf16* x;
  const bf16* bias;  // added to every row before the statistics, or nullptr
  const bf16* gamma;
  const bf16* beta;
  bf16* y;
  Shape shape;
  bool pdl;  // launched as a programmatic dependent (layer_norm.h)
};

// The input bias of vector c, added (after all of a thread's loads are
// issued: a branch between them would serialize them).
__device__ __forceinline__ void add_bias(const bf16* bias, int c, int nvec, float (&v)[kVec]) {
  if (c >= nvec) return;
  float b[kVec];
  load_param(bias, c, b);
#pragma unroll
  for (int j = 0; j < kVec; ++j) v[j] += b[j];
}

// Sum of a thread's vectors.
template <int N>
__device__ __forceinline__ float sum_of(const float (&v)[N][kVec]) {
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < kVec; ++j) sum += v[i][j];
  return sum;
}

// Vector c of a row, given as deviations d = v - mean: d * rstd * gamma +
// beta, activated, stored as bf16 (gamma/beta nullptr: 1 and 0). The tail
// of every version.
template <Activation ACT>
__device__ __forceinline__ void normalize_store(const float (&d)[kVec], int c,
                                                const bf16* __restrict__ gamma,
                                                const bf16* __restrict__ beta, float rstd,
                                                bf16* yr) {
  float g[kVec], b[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    g[j] = 1.f;
    b[j] = 0.f;
  }
  if (gamma) load_param(gamma, c, g);
  if (beta) load_param(beta, c, b);
  Bf16x8 out;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float a0 = activate<ACT>(fmaf(d[2 * j] * rstd, g[2 * j], b[2 * j]));
    const float a1 = activate<ACT>(fmaf(d[2 * j + 1] * rstd, g[2 * j + 1], b[2 * j + 1]));
    out.h[j] = __floats2bfloat162_rn(a0, a1);
  }
  store_stream(yr + static_cast<int64_t>(c) * kVec, out);
}

template <int VPT, Activation ACT>
__global__ void __launch_bounds__(512)
    row_in_registers(const bf16* __restrict__ x, const bf16* __restrict__ bias,
                     const bf16* __restrict__ gamma, const bf16* __restrict__ beta,
                     bf16* __restrict__ y, const Shape a) {
  __shared__ float scratch[32];
  kb::wait_for_previous_grid();
  kb::let_next_grid_launch();
  const int64_t row = blockIdx.x, D = a.D;
  const int nvec = static_cast<int>(D / kVec);
  const bf16* xr = x + row * D;
  bf16* yr = y + row * D;

  float v[VPT][kVec];
#pragma unroll
  for (int i = 0; i < VPT; ++i) load_row_vec(xr, threadIdx.x + i * blockDim.x, nvec, v[i]);
  if (bias)
#pragma unroll
    for (int i = 0; i < VPT; ++i) add_bias(bias, threadIdx.x + i * blockDim.x, nvec, v[i]);
  const float sum = sum_of(v);
  const float inv_d = 1.f / static_cast<float>(D);
  const float mean = block_sum(sum, scratch) * inv_d;

  float m2 = 0.f;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < nvec) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        v[i][j] -= mean;  // kept: normalize_store takes deviations
        m2 = fmaf(v[i][j], v[i][j], m2);
      }
    }
  }
  const float rstd = rsqrtf(block_sum(m2, scratch) * inv_d + a.eps);

#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c >= nvec) continue;
    normalize_store<ACT>(v[i], c, gamma, beta, rstd, yr);
  }
}

template <Activation ACT>
__global__ void __launch_bounds__(1024)
    row_streaming(const bf16* __restrict__ x, const bf16* __restrict__ bias,
                  const bf16* __restrict__ gamma, const bf16* __restrict__ beta,
                  bf16* __restrict__ y, const Shape a) {
  __shared__ float scratch[32];
  kb::wait_for_previous_grid();
  kb::let_next_grid_launch();
  const int64_t D = a.D;
  const bf16* xr = x + static_cast<int64_t>(blockIdx.x) * D;
  bf16* yr = y + static_cast<int64_t>(blockIdx.x) * D;
  auto at = [&](int64_t i) {
    return __bfloat162float(xr[i]) + (bias ? __bfloat162float(bias[i]) : 0.f);
  };
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) sum += at(i);
  const float mean = block_sum(sum, scratch) / static_cast<float>(D);
  float m2 = 0.f;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
    float d = at(i) - mean;
    m2 += d * d;
  }
  const float rstd = rsqrtf(block_sum(m2, scratch) / static_cast<float>(D) + a.eps);
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
    float g = gamma ? __bfloat162float(gamma[i]) : 1.f;
    float b = beta ? __bfloat162float(beta[i]) : 0.f;
    yr[i] = __float2bfloat16(activate<ACT>((at(i) - mean) * rstd * g + b));
  }
}

// D <= 2048: one warp per row, VPL vectors per lane, warp-shuffle
// reductions only (no __syncthreads). A block of 8 warps takes 8 rows, so
// BS=4096 is 512 blocks: every row of the tensor is in flight in a single
// wave, where one 128-thread block per row needed two waves of short-lived
// blocks, each paying the HBM latency.
template <int VPL, Activation ACT>
__global__ void __launch_bounds__(256)
    row_per_warp(const bf16* __restrict__ x, const bf16* __restrict__ bias,
                 const bf16* __restrict__ gamma, const bf16* __restrict__ beta,
                 bf16* __restrict__ y, const Shape a) {
  kb::wait_for_previous_grid();
  kb::let_next_grid_launch();
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int64_t D = a.D;
  if (row >= a.rows) return;
  const int nvec = static_cast<int>(D / kVec);
  const bf16* xr = x + row * D;
  bf16* yr = y + row * D;
  float v[VPL][kVec];
#pragma unroll
  for (int i = 0; i < VPL; ++i) load_row_vec(xr, lane + i * 32, nvec, v[i]);
  if (bias)
#pragma unroll
    for (int i = 0; i < VPL; ++i) add_bias(bias, lane + i * 32, nvec, v[i]);
  float sum = sum_of(v);
  sum = warp_sum(sum);
  const float inv_d = 1.f / static_cast<float>(D);
  const float mean = sum * inv_d;
  float m2 = 0.f;
#pragma unroll
  for (int i = 0; i < VPL; ++i) {
    if (lane + i * 32 < nvec) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        v[i][j] -= mean;  // kept: normalize_store takes deviations
        m2 = fmaf(v[i][j], v[i][j], m2);
      }
    }
  }
  m2 = warp_sum(m2);
  const float rstd = rsqrtf(m2 * inv_d + a.eps);
#pragma unroll
  for (int i = 0; i < VPL; ++i) {
    const int c = lane + i * 32;
    if (c >= nvec) continue;
    normalize_store<ACT>(v[i], c, gamma, beta, rstd, yr);
  }
}

template <int VPL, Activation ACT>
void launch_warp_rows(const Args& a, cudaStream_t s) {
  constexpr int kWarps = 8;
  const int64_t blocks = (a.shape.rows + kWarps - 1) / kWarps;
  kb::launch_maybe_pdl(a.pdl, row_per_warp<VPL, ACT>, dim3(static_cast<unsigned>(blocks)),
                       dim3(32 * kWarps), s, a.x, a.bias, a.gamma, a.beta, a.y, a.shape);
}

template <int VPT, Activation ACT>
void launch_registers(const Args& a, cudaStream_t s) {
  const int64_t nvec = a.shape.D / kVec;
  int threads = static_cast<int>((nvec + VPT - 1) / VPT);
  threads = (threads + 31) / 32 * 32;
  kb::launch_maybe_pdl(a.pdl, row_in_registers<VPT, ACT>, dim3(static_cast<unsigned>(a.shape.rows)),
                       dim3(threads), s, a.x, a.bias, a.gamma, a.beta, a.y, a.shape);
}

// The version for the row length, with the activation compiled in (a
// runtime switch per element cost instructions in the GELU pass).
template <Activation ACT>
void launch(const Args& a, cudaStream_t stream) {
  // Four 16-byte vectors per thread where the row allows (four loads in
  // flight per thread), blocks of 128..512 threads: small blocks keep many
  // rows resident per SM, so one block's reductions overlap another's loads.
  // Measured on H100 (docs/decisions/0044-gelu-without-erff.md): one vector per thread in
  // 512-thread blocks left D=4096 at 0.83 of the roofline.
  const int64_t nvec = a.shape.D / kVec;
  if (nvec <= 64) return launch_warp_rows<2, ACT>(a, stream);
  if (nvec <= 128) return launch_warp_rows<4, ACT>(a, stream);
  if (nvec <= 256) return launch_warp_rows<8, ACT>(a, stream);
  const int64_t threads = std::min<int64_t>(std::max<int64_t>(nvec / 4, 128), 512);
  const int64_t vpt = (nvec + threads - 1) / threads;
  if (vpt <= 1) return launch_registers<1, ACT>(a, stream);
  if (vpt <= 2) return launch_registers<2, ACT>(a, stream);
  if (vpt <= 4) return launch_registers<4, ACT>(a, stream);
  if (vpt <= 8) return launch_registers<8, ACT>(a, stream);
  kb::launch_maybe_pdl(a.pdl, row_streaming<ACT>, dim3(static_cast<unsigned>(a.shape.rows)),
                       dim3(1024), stream, a.x, a.bias, a.gamma, a.beta, a.y, a.shape);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

void layer_norm(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, int64_t rows,
                int64_t D, float eps, Activation act, cudaStream_t stream, const bf16* bias,
                bool pdl) {
  if (rows <= 0 || D <= 0)
    throw std::invalid_argument("layer_norm: rows and D must be > 0 (got rows=" +
                                std::to_string(rows) + ", D=" + std::to_string(D) + ")");
  if (D % kVec != 0)
    throw std::invalid_argument("layer_norm: D must be a multiple of 8 (16-byte vectors), got D=" +
                                std::to_string(D));
  if (rows > 0x7fffffff) throw std::invalid_argument("layer_norm: more than 2^31-1 rows");
  for (const void* p :
       {static_cast<const void*>(x), static_cast<const void*>(y), static_cast<const void*>(gamma),
        static_cast<const void*>(beta), static_cast<const void*>(bias)})
    if (p && !aligned16(p))
      throw std::invalid_argument("layer_norm: pointers must be 16-byte aligned");
  const Args a{x, bias, gamma, beta, y, Shape{rows, D, eps}, pdl};
  switch (act) {
    case Activation::none:
      return launch<Activation::none>(a, stream);
    case Activation::gelu_tanh:
      return launch<Activation::gelu_tanh>(a, stream);
    case Activation::gelu_erf:
      return launch<Activation::gelu_erf>(a, stream);
  }
  throw std::invalid_argument("layer_norm: unknown activation");
}

}  // namespace kb::layer_norm
