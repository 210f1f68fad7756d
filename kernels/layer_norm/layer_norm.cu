// LayerNorm (+ optional GELU), each row held in registers so that it is
// read once and written once, with two-pass statistics (mean, then squared
// deviations): one warp a row to D = 2048, else one block a row. The plain
// row (gamma and beta, no input bias, no activation, no programmatic
// dependence) of D <= 2048 has a kernel of its own whose statistics are one
// butterfly of two sums (docs/decisions/0060); of 2048 < D <= 16384, one
// block a row holding the row as packed bf16, 3 blocks of 512 threads an SM
// (docs/decisions/0066).
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/common/bf16x8.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/cuda_check.h"
#include "kernels/common/pdl.cuh"
#include "kernels/common/warp.cuh"
#include "kernels/layer_norm/layer_norm.h"

namespace kb::layer_norm {

namespace {

constexpr int kVec = kBf16x8;
constexpr int64_t kMaxD = 512 * 8 * kVec;  // 512 threads of 8 vectors

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
// from Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), Φ(v) = v >= 0 ? 1 - q
// : q: one reciprocal, one exponential, no branch; within 2e-3 relative down
// to v = -5, where erff's form is off by 5e-2 (docs/decisions/0044).
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
  } else {
    return v;
  }
}

// The scalars every version takes; the pointers go as __restrict__
// parameters (in a struct, the gamma and beta loads were not hoisted).
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

// The input bias of vector c, added after all of a thread's loads are issued.
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
// beta, activated, stored as bf16 (gamma/beta nullptr: 1 and 0).
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

// One row: the thread's N vectors first, first + stride, ... in registers,
// two-pass statistics over the warp (WARP) or the block,
// the normalized row stored.
template <int N, Activation ACT, bool WARP>
__device__ __forceinline__ void normalize_row(const bf16* __restrict__ x,
                                              const bf16* __restrict__ bias,
                                              const bf16* __restrict__ gamma,
                                              const bf16* __restrict__ beta, bf16* __restrict__ y,
                                              const Shape& a, int64_t row, int first, int stride) {
  auto reduce = [](float v) {
    if constexpr (WARP) {
      return warp_sum(v);
    } else {
      __shared__ float scratch[32];
      return block_sum(v, scratch);
    }
  };
  const int64_t D = a.D;
  const int nvec = static_cast<int>(D / kVec);
  const bf16* xr = x + row * D;
  bf16* yr = y + row * D;
  float v[N][kVec];
#pragma unroll
  for (int i = 0; i < N; ++i) load_row_vec(xr, first + i * stride, nvec, v[i]);
  if (bias)
#pragma unroll
    for (int i = 0; i < N; ++i) add_bias(bias, first + i * stride, nvec, v[i]);
  const float sum = sum_of(v);
  const float inv_d = 1.f / static_cast<float>(D);
  const float mean = reduce(sum) * inv_d;
  float m2 = 0.f;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int c = first + i * stride;
    if (c < nvec) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        v[i][j] -= mean;  // kept: normalize_store takes deviations
        m2 = fmaf(v[i][j], v[i][j], m2);
      }
    }
  }
  const float rstd = rsqrtf(reduce(m2) * inv_d + a.eps);
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int c = first + i * stride;
    if (c >= nvec) continue;
    normalize_store<ACT>(v[i], c, gamma, beta, rstd, yr);
  }
}

// D <= 32768: one block per row, VPT vectors a thread.
template <int VPT, Activation ACT>
__global__ void __launch_bounds__(512)
    row_in_registers(const bf16* __restrict__ x, const bf16* __restrict__ bias,
                     const bf16* __restrict__ gamma, const bf16* __restrict__ beta,
                     bf16* __restrict__ y, const Shape a) {
  kb::wait_for_previous_grid();
  kb::let_next_grid_launch();
  normalize_row<VPT, ACT, false>(x, bias, gamma, beta, y, a, blockIdx.x, threadIdx.x, blockDim.x);
}

// D <= 2048: one warp per row, 8 rows a block: BS=4096 is in flight in one
// wave, where a block per row needed two waves of short-lived blocks.
template <int VPL, Activation ACT>
__global__ void __launch_bounds__(256)
    row_per_warp(const bf16* __restrict__ x, const bf16* __restrict__ bias,
                 const bf16* __restrict__ gamma, const bf16* __restrict__ beta,
                 bf16* __restrict__ y, const Shape a) {
  kb::wait_for_previous_grid();
  kb::let_next_grid_launch();
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= a.rows) return;
  normalize_row<VPL, ACT, true>(x, bias, gamma, beta, y, a, row, lane, 32);
}

// (v - mean) · rstd · gamma + beta for vector c of a plain row, stored
// (the plain kernels': gamma and beta given, no activation).
__device__ __forceinline__ void affine_store(const float (&v)[kVec], float mean, float rstd,
                                             const bf16* __restrict__ gamma,
                                             const bf16* __restrict__ beta, int c, bf16* yr) {
  float g[kVec], b[kVec];
  load_param(gamma, c, g);
  load_param(beta, c, b);
  Bf16x8 out;
#pragma unroll
  for (int j = 0; j < 4; ++j)
    out.h[j] =
        __floats2bfloat162_rn(fmaf((v[2 * j] - mean) * rstd, g[2 * j], b[2 * j]),
                              fmaf((v[2 * j + 1] - mean) * rstd, g[2 * j + 1], b[2 * j + 1]));
  store_stream(yr + int64_t(c) * kVec, out);
}

// The plain row of D <= 2048, one warp a row: the sums of v - k and
// (v - k)², k = x[0], in one butterfly (no lane waits for the mean before a
// second reduction; k is one of the row's values, so the variance loses at
// most log2(D) bits to cancellation). Lanes past the last row redo it
// without storing: the shuffles take the whole warp.
template <int VPL>
__global__ void __launch_bounds__(256)
    row_per_warp_plain(const bf16* __restrict__ x, const bf16* __restrict__ gamma,
                       const bf16* __restrict__ beta, bf16* __restrict__ y, int64_t rows, int D,
                       float eps) {
  const int lane = threadIdx.x % 32;
  int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const bool active = row < rows;
  if (!active) row = rows - 1;
  const int nvec = D / kVec;
  const bf16* xr = x + row * D;
  float v[VPL][kVec];
#pragma unroll
  for (int i = 0; i < VPL; ++i) load_row_vec(xr, lane + i * 32, nvec, v[i]);
  const float k = __bfloat162float(xr[0]);
  float s1 = 0.f, s2 = 0.f;
#pragma unroll
  for (int i = 0; i < VPL; ++i)
    if (lane + i * 32 < nvec)
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float d = v[i][j] - k;
        s1 += d;
        s2 = fmaf(d, d, s2);
      }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    s1 += __shfl_xor_sync(0xffffffffu, s1, o);
    s2 += __shfl_xor_sync(0xffffffffu, s2, o);
  }
  const float inv_d = 1.f / static_cast<float>(D);
  const float dm = s1 * inv_d;
  const float mean = k + dm;
  const float rstd = rsqrtf(fmaxf(fmaf(s2, inv_d, -dm * dm), 0.f) + eps);
  bf16* yr = y + row * D;
#pragma unroll
  for (int i = 0; i < VPL; ++i) {
    const int c = lane + i * 32;
    if (c >= nvec || !active) continue;
    affine_store(v[i], mean, rstd, gamma, beta, c, yr);
  }
}

// The plain row of 2048 < D <= 16384, one block a row, held as packed bf16
// (4 registers a vector where floats take 8) and unpacked at each of its
// three uses (sum, squared deviations, output): 40 registers, so 3 blocks of
// 512 threads fit an SM where the float row's 56 fit 2 (D = 16384: +7%,
// D = 4096 and 8192: +5%; docs/decisions/0066). Two-pass statistics, as
// normalize_row's.
constexpr int kPackedVpt = 4;
constexpr int kPackedBlocksPerSm = 3;

// Eight bf16 as floats; volatile so that each use unpacks again rather than
// the compiler keeping the 8 floats live (which took it back to 48 registers).
__device__ __forceinline__ void unpack(const int4& r, float (&f)[kVec]) {
  const uint32_t w[4] = {uint32_t(r.x), uint32_t(r.y), uint32_t(r.z), uint32_t(r.w)};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint32_t lo, hi;
    asm volatile("{shl.b32 %0, %2, 16;\n\tand.b32 %1, %2, 0xffff0000;}"
                 : "=r"(lo), "=r"(hi)
                 : "r"(w[j]));
    f[2 * j] = __uint_as_float(lo);
    f[2 * j + 1] = __uint_as_float(hi);
  }
}

__global__ void __launch_bounds__(512, kPackedBlocksPerSm)
    row_packed_plain(const bf16* __restrict__ x, const bf16* __restrict__ gamma,
                     const bf16* __restrict__ beta, bf16* __restrict__ y, int D, float eps) {
  __shared__ float scratch[32];
  const int nvec = D / kVec;
  const bf16* xr = x + int64_t(blockIdx.x) * D;
  int4 raw[kPackedVpt];
#pragma unroll
  for (int i = 0; i < kPackedVpt; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    const Bf16x8 v = c < nvec ? load_stream(xr + int64_t(c) * kVec) : Bf16x8{};
    raw[i] = *reinterpret_cast<const int4*>(&v);  // zeros past the row add nothing to the sum
  }
  float s = 0.f, f[kVec];
#pragma unroll
  for (int i = 0; i < kPackedVpt; ++i) {
    unpack(raw[i], f);
#pragma unroll
    for (int j = 0; j < kVec; ++j) s += f[j];
  }
  const float inv_d = 1.f / static_cast<float>(D);
  const float mean = block_sum(s, scratch) * inv_d;
  float m2 = 0.f;
#pragma unroll
  for (int i = 0; i < kPackedVpt; ++i) {
    if (threadIdx.x + i * blockDim.x >= nvec) continue;
    unpack(raw[i], f);
#pragma unroll
    for (int j = 0; j < kVec; ++j) m2 = fmaf(f[j] - mean, f[j] - mean, m2);
  }
  const float rstd = rsqrtf(block_sum(m2, scratch) * inv_d + eps);
  bf16* yr = y + int64_t(blockIdx.x) * D;
#pragma unroll
  for (int i = 0; i < kPackedVpt; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c >= nvec) continue;
    unpack(raw[i], f);
    affine_store(f, mean, rstd, gamma, beta, c, yr);
  }
}

template <int VPL, Activation ACT>
void launch_warp_rows(const Args& a, cudaStream_t s) {
  constexpr int kWarps = 8;
  const int64_t blocks = (a.shape.rows + kWarps - 1) / kWarps;
  if (ACT == Activation::none && !a.bias && a.gamma && a.beta && !a.pdl) {
    // The general kernel's statistics, ported as one butterfly, measured
    // 1% slower than two reductions; this kernel 7% faster (0060).
    row_per_warp_plain<VPL><<<static_cast<unsigned>(blocks), 32 * kWarps, 0, s>>>(
        a.x, a.gamma, a.beta, a.y, a.shape.rows, static_cast<int>(a.shape.D), a.shape.eps);
    KB_CHECK_LAUNCH();
    return;
  }
  kb::launch_maybe_pdl(a.pdl, row_per_warp<VPL, ACT>, dim3(static_cast<unsigned>(blocks)),
                       dim3(32 * kWarps), s, a.x, a.bias, a.gamma, a.beta, a.y, a.shape);
}

template <int VPT, Activation ACT>
void launch_registers(const Args& a, cudaStream_t s) {
  const int64_t nvec = a.shape.D / kVec;
  int threads = static_cast<int>((nvec + VPT - 1) / VPT);
  threads = (threads + 31) / 32 * 32;
  if (ACT == Activation::none && VPT <= kPackedVpt && !a.bias && a.gamma && a.beta && !a.pdl) {
    row_packed_plain<<<static_cast<unsigned>(a.shape.rows), threads, 0, s>>>(
        a.x, a.gamma, a.beta, a.y, static_cast<int>(a.shape.D), a.shape.eps);
    KB_CHECK_LAUNCH();
    return;
  }
  kb::launch_maybe_pdl(a.pdl, row_in_registers<VPT, ACT>, dim3(static_cast<unsigned>(a.shape.rows)),
                       dim3(threads), s, a.x, a.bias, a.gamma, a.beta, a.y, a.shape);
}

// The version for the row length, with the activation compiled in.
template <Activation ACT>
void launch(const Args& a, cudaStream_t stream) {
  // Four 16-byte vectors per thread where the row allows, blocks of
  // 128..512 threads: many rows resident per SM overlap one block's
  // reductions with another's loads (docs/decisions/0044).
  const int64_t nvec = a.shape.D / kVec;
  if (nvec <= 64) return launch_warp_rows<2, ACT>(a, stream);
  if (nvec <= 128) return launch_warp_rows<4, ACT>(a, stream);
  if (nvec <= 256) return launch_warp_rows<8, ACT>(a, stream);
  const int64_t threads = std::min<int64_t>(std::max<int64_t>(nvec / 4, 128), 512);
  const int64_t vpt = (nvec + threads - 1) / threads;  // 3..8, as nvec > 256
  if (vpt <= 4) return launch_registers<4, ACT>(a, stream);
  launch_registers<8, ACT>(a, stream);  // vpt <= 8: D <= kMaxD
}

}  // namespace

int packed_row_blocks_per_sm() {
  int blocks = 0;
  KB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, row_packed_plain, 512, 0));
  cudaFuncAttributes attr{};
  KB_CUDA_CHECK(cudaFuncGetAttributes(&attr, row_packed_plain));
  return attr.localSizeBytes == 0 ? blocks : 0;
}

void layer_norm(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, int64_t rows,
                int64_t D, float eps, Activation act, cudaStream_t stream, const bf16* bias,
                bool pdl) {
  check_rows("layer_norm", rows, D, kMaxD);
  for (const void* p :
       {static_cast<const void*>(x), static_cast<const void*>(y), static_cast<const void*>(gamma),
        static_cast<const void*>(beta), static_cast<const void*>(bias)})
    if (p && !aligned16(p))
      throw std::invalid_argument("layer_norm: pointers must be 16-byte aligned");
  const Args a{x, bias, gamma, beta, y, Shape{rows, D, eps}, pdl};
  switch (act) {
    case Activation::none:
      return launch<Activation::none>(a, stream);
    case Activation::gelu_erf:
      return launch<Activation::gelu_erf>(a, stream);
  }
  throw std::invalid_argument("layer_norm: unknown activation");
}

}  // namespace kb::layer_norm
