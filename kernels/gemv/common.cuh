// What every GEMV kernel shares (device side): the 16-byte loads, the
// weight conversions and dot products, the launch arguments.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/pdl.cuh"
#include "kernels/common/warp.cuh"
#include "kernels/gemv/gemv.h"

namespace kb::gemv::detail {

// One 16-byte load. Weights (kStream): ld.global.nc.L1::no_allocate with an
// L2 256-byte prefetch hint. x (kCoherent): a plain ld.global, not
// ld.global.nc: under programmatic dependent launch the non-coherent path
// may serve a line cached before the previous grid wrote x (the wait makes
// its writes visible to coherent loads only; __ldg read stale x).
enum LoadKind { kStream, kCoherent };
template <LoadKind L>
__device__ __forceinline__ int4 load16(const int4* p) {
  int4 v;
  if constexpr (L == kStream)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  else
    asm volatile("ld.global.v4.s32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  return v;
}

// Two bf16 packed in a 32-bit word -> two floats (a bf16 is the top half of an fp32).
__device__ __forceinline__ float bf16_lo(uint32_t u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t u) { return __uint_as_float(u & 0xffff0000u); }

// Byte i of a word of four int8 -> float, exactly: (b + 128) goes into the
// low mantissa bits of 2^23 (0x4B000000), then 2^23 + 128 is subtracted.
template <int I>
__device__ __forceinline__ float int8_at(uint32_t biased) {
  return __uint_as_float(__byte_perm(biased, 0x4B000000u, 0x7540u + I)) - 8388736.f;
}

template <bool INT8>
struct Traits;
template <>
struct Traits<false> {
  using W = bf16;
  static constexpr int kVec = 8;  // elements per 16-byte weight vector
};
template <>
struct Traits<true> {
  using W = int8_t;
  static constexpr int kVec = 16;
};

// x[k .. k+kVec) as floats.
template <bool INT8>
__device__ __forceinline__ void load_x(const int4* x4, int vec, float (&xf)[Traits<INT8>::kVec]) {
  constexpr int kWords = Traits<INT8>::kVec / 2;  // bf16 pairs
  uint32_t u[kWords];
#pragma unroll
  for (int h = 0; h < kWords / 4; ++h) {
    const int4 v = load16<kCoherent>(x4 + vec * (kWords / 4) + h);
    u[4 * h + 0] = v.x;
    u[4 * h + 1] = v.y;
    u[4 * h + 2] = v.z;
    u[4 * h + 3] = v.w;
  }
#pragma unroll
  for (int j = 0; j < kWords; ++j) {
    xf[2 * j] = bf16_lo(u[j]);
    xf[2 * j + 1] = bf16_hi(u[j]);
  }
}

// The 16-byte weight vector as floats (int8 exactly, via int8_at).
template <bool INT8>
__device__ __forceinline__ void convert(const int4& w, float (&wf)[Traits<INT8>::kVec]) {
  const uint32_t words[4] = {static_cast<uint32_t>(w.x), static_cast<uint32_t>(w.y),
                             static_cast<uint32_t>(w.z), static_cast<uint32_t>(w.w)};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (INT8) {
      const uint32_t b = words[j] ^ 0x80808080u;
      wf[4 * j + 0] = int8_at<0>(b);
      wf[4 * j + 1] = int8_at<1>(b);
      wf[4 * j + 2] = int8_at<2>(b);
      wf[4 * j + 3] = int8_at<3>(b);
    } else {
      wf[2 * j] = bf16_lo(words[j]);
      wf[2 * j + 1] = bf16_hi(words[j]);
    }
  }
}

// acc[j] += the products of word j: four independent FMA chains, so a
// vector's dot product is 4 (bf16: 2) FMAs deep rather than 16 (8); several
// tokens convert once and sum in the same order as one token.
template <bool INT8>
__device__ __forceinline__ void dot_converted(const float (&wf)[Traits<INT8>::kVec],
                                              const float (&xf)[Traits<INT8>::kVec],
                                              float (&acc)[4]) {
  constexpr int Q = Traits<INT8>::kVec / 4;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int i = 0; i < Q; ++i) acc[j] = fmaf(wf[Q * j + i], xf[Q * j + i], acc[j]);
}

template <bool INT8>
__device__ __forceinline__ void dot(const int4& w, const float (&xf)[Traits<INT8>::kVec],
                                    float (&acc)[4]) {
  float wf[Traits<INT8>::kVec];
  convert<INT8>(w, wf);
  dot_converted<INT8>(wf, xf, acc);
}

struct KernelArgs {
  const void* W;
  const bf16* scale;       // int8: per-row scales; bf16: nullptr
  const int32_t* experts;  // gather: the n_sel ids (blockIdx.y = slot); else nullptr
  int E;
  const bf16* x;         // [tokens, K]
  bf16* y;               // [tokens or n_sel, N]
  const bf16* residual;  // [tokens, N] or nullptr
  int N, K;
  int ks;                    // warps splitting K (General::k_split, Mma::k_split)
  int tokens;                // x rows, <= the instantiation's T
  float eps;                 // SwiGLU: the RMSNorm epsilon
  int n_sel;                 // gather: the selected experts (bulk kernel: its rows are n_sel·N)
  int stages;                // bulk kernel: the buffers of its shared-memory ring
  int bulk_rows;             // bulk kernel: Bulk::rows
  int rows_per_buffer;       // bulk kernel: rows per ring buffer, 1 or 2
  unsigned int* counter;     // bulk kernel, dynamic rows: [next unit, tickets], zero
  const float* weights;      // combine (gather_gemv_combine): the n_sel slot weights; else nullptr
  bool experts_ready;        // combine: read the ids before the wait (gemv.h)
  RouteBlocks route;         // router blocks: the grid's first `route_blocks` blocks
  int route_blocks;          // run route_block (route_blocks.cuh); 0: none
  const int32_t* token_ids;  // a gather over tokens: the ids [tokens][top]; blockIdx.y = e
  int top;
};

// gather_gemv_combine: the most slots one launch sums (top-2 routing).
constexpr int kMaxCombine = 2;

}  // namespace kb::gemv::detail
