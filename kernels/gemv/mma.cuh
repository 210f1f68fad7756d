// The tensor-core helpers the mma, tile and bulk-mma kernels share: int8
// to f16, the m16n8k16 MMA, x staged in f16 scaled by a power of two, one
// 64-byte unit of a 16-row tile, and the diagonal variant's sums.
#pragma once

#include "kernels/gemv/common.cuh"

namespace kb::gemv::detail {

// error; they are not the general kernel's bits.
__device__ __forceinline__ float pow2(int k) {
  return __int_as_float((127 + k) << 23);
}  // |k| <= 126

// v · 2^e for |e| <= 252, as two exact power-of-two products (each factor
// within a float's exponent): the sums' unscaling by 2^-e (stage_x_f16).
__device__ __forceinline__ float times_pow2(float v, int e) {
  return v * pow2(e / 2) * pow2(e - e / 2);
}

// The 64-byte units (unit_vec 16-byte vectors each: 4, or 32 for the
// diagonal mma variant) that a row of K int8 spans, the last one partial.
__host__ __device__ inline int mma_units(int64_t K, int unit_vec) {
  return static_cast<int>((K / 16 + unit_vec - 1) / unit_vec);
}
// The tile kernel's row stride in shared memory: its units, plus 64 bytes
// so that rows g and g + 1 fall into the two halves of the banks.
__host__ __device__ inline int tile_row_stride(int units) { return units * 64 + 64; }

// Four int8 (a word) -> two f16x2: bytes 0, 1 and bytes 2, 3.
__device__ __forceinline__ void int8x4_to_f16x2(uint32_t w, uint32_t& lo, uint32_t& hi) {
  const uint32_t b = w ^ 0x80808080u;         // b + 128, unsigned
  lo = __byte_perm(b, 0x64646464u, 0x4140u);  // 0x64bb: 1024 + byte
  hi = __byte_perm(b, 0x64646464u, 0x4342u);
  asm("sub.f16x2 %0, %0, %1;" : "+r"(lo) : "r"(0x64806480u));  // - 1152
  asm("sub.f16x2 %0, %0, %1;" : "+r"(hi) : "r"(0x64806480u));
}

// The m16n8k16 MMA, fp32 sums; A and B in f16, or in bf16 (BF16: the
// gather over tokens, tokens_mma.cu).
template <bool BF16 = false>
__device__ __forceinline__ void mma_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                          uint32_t a3, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (BF16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  __trap();  // launched only on compute capability 8.0+ (launch_impl)
#endif
}

// Two bf16 (a word) times 2^e1·2^e2 (exact) -> f16x2 (round to nearest).
__device__ __forceinline__ uint32_t bf16x2_to_f16x2(uint32_t u, float f1, float f2) {
  const __half2 h = __floats2half2_rn(bf16_lo(u) * f1 * f2, bf16_hi(u) * f1 * f2);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// The largest of m and the magnitudes of 8 bf16 (an int4).
__device__ __forceinline__ float max_abs_bf16x8(const int4& v, float m) {
  const uint32_t u[4] = {uint32_t(v.x), uint32_t(v.y), uint32_t(v.z), uint32_t(v.w)};
#pragma unroll
  for (int j = 0; j < 4; ++j) m = fmaxf(m, fmaxf(fabsf(bf16_lo(u[j])), fabsf(bf16_hi(u[j]))));
  return m;
}

// 8 bf16 (an int4) times 2^e1·2^e2 (exact) -> 8 f16 (an int4, round to nearest).
__device__ __forceinline__ int4 bf16x8_to_f16x8(const int4& v, float f1, float f2) {
  return make_int4(
      int(bf16x2_to_f16x2(uint32_t(v.x), f1, f2)), int(bf16x2_to_f16x2(uint32_t(v.y), f1, f2)),
      int(bf16x2_to_f16x2(uint32_t(v.z), f1, f2)), int(bf16x2_to_f16x2(uint32_t(v.w), f1, f2)));
}

// The power of two e that x is staged in f16 with, from m = max|x|: the
// largest magnitude lands in [2^14, 2^15). 0 for x all zero, or with an
// infinity (which then stays one).
__device__ __forceinline__ int x_exponent(float m) {
  int e = 0;
  if (m > 0.f && m <= 3.4028235e38f) {
    int p;
    frexpf(m, &p);  // m in [2^(p-1), 2^p)
    e = 15 - p;     // in [-113, 147] for bf16: each half within a float's exponent
  }
  return e;
}

// x (K bf16) -> f16 in xs (spad int4 of them, zero past K), scaled by 2^e,
// e chosen so that the largest magnitude lands in [2^14, 2^15); returns e.
// The whole block calls it (two barriers); s_max: one float per warp.
// Up to kXr vectors per thread are held in registers between the two
// passes; a longer x is read again (from L1).
static __device__ int stage_x_f16(const bf16* x, int K, int spad, int4* xs, float* s_max) {
  constexpr int kXr = 4;
  const int4* x4 = reinterpret_cast<const int4*>(x);
  const int xvec = K / 8;  // int4 of x (8 bf16); spad: int4 of the f16 copy (>= xvec)
  const int bd = blockDim.x, lane = threadIdx.x & 31, warps = bd >> 5;
  float m = 0.f;
  int4 xr[kXr];
#pragma unroll
  for (int j = 0; j < kXr; ++j) {
    const int i = threadIdx.x + j * bd;
    xr[j] = i < xvec ? load16<kCoherent>(x4 + i) : make_int4(0, 0, 0, 0);
  }
  for (int i = threadIdx.x + kXr * bd; i < xvec; i += bd)
    m = max_abs_bf16x8(load16<kCoherent>(x4 + i), m);
#pragma unroll
  for (int j = 0; j < kXr; ++j) m = max_abs_bf16x8(xr[j], m);
  m = warp_max(m);
  if (lane == 0) s_max[threadIdx.x >> 5] = m;
  __syncthreads();
  m = s_max[0];
  for (int i = 1; i < warps; ++i) m = fmaxf(m, s_max[i]);
  const int e = x_exponent(m);
  const float up1 = pow2(e / 2), up2 = pow2(e - e / 2);
#pragma unroll
  for (int j = 0; j < kXr; ++j) {
    const int i = threadIdx.x + j * bd;
    if (i < spad) xs[i] = bf16x8_to_f16x8(xr[j], up1, up2);  // zero past K
  }
  for (int i = threadIdx.x + kXr * bd; i < spad; i += bd)
    xs[i] = i < xvec ? bf16x8_to_f16x8(load16<kCoherent>(x4 + i), up1, up2) : make_int4(0, 0, 0, 0);
  __syncthreads();
  return e;
}

// One 64-byte unit of a 16-row tile: lane (g, t)'s 16 bytes of rows g (va)
// and g + 8 (vb), and x at the same k (xw: its 16 f16, in pairs), into the
// two MMA chains c0 / c1. The second form reads x from xp (lane t's two
// int4 of f16, in shared memory).
__device__ __forceinline__ void mma_unit(const int4& va, const int4& vb, const uint32_t (&xw)[8],
                                         float (&c0)[4], float (&c1)[4]) {
  const uint32_t A[4] = {uint32_t(va.x), uint32_t(va.y), uint32_t(va.z), uint32_t(va.w)};
  const uint32_t B[4] = {uint32_t(vb.x), uint32_t(vb.y), uint32_t(vb.z), uint32_t(vb.w)};
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    uint32_t alo, ahi, blo, bhi;
    int8x4_to_f16x2(A[q], alo, ahi);
    int8x4_to_f16x2(B[q], blo, bhi);
    mma_16816(q & 1 ? c1 : c0, alo, blo, ahi, bhi, xw[2 * q], xw[2 * q + 1]);
  }
}
__device__ __forceinline__ void mma_unit(const int4& va, const int4& vb, const int4* xp,
                                         float (&c0)[4], float (&c1)[4]) {
  const int4 x0 = xp[0], x1 = xp[1];
  const uint32_t xw[8] = {uint32_t(x0.x), uint32_t(x0.y), uint32_t(x0.z), uint32_t(x0.w),
                          uint32_t(x1.x), uint32_t(x1.y), uint32_t(x1.z), uint32_t(x1.w)};
  mma_unit(va, vb, xw, c0, c1);
}

// The diagonal variant's dot products of rows A and B (mma_unit's chains
// c0, c1 over a warp's units), in every lane: C[g][g] and C[8 + g][g] sit
// in lane (g, g / 2), element g % 2 (and 2 + g % 2).
__device__ __forceinline__ void diag_sums(const float (&c0)[4], const float (&c1)[4], int g, int t,
                                          float& sumA, float& sumB) {
  const bool diag = t == (g >> 1), odd = g & 1;
  sumA = warp_sum(diag ? (odd ? c0[1] + c1[1] : c0[0] + c1[0]) : 0.f);
  sumB = warp_sum(diag ? (odd ? c0[3] + c1[3] : c0[2] + c1[2]) : 0.f);
}

}  // namespace kb::gemv::detail
