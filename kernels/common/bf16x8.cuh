// 16-byte packs of eight bf16, the vector loads and stores of the row
// kernels (layer_norm, rms_norm, swiglu): a row's data read once and
// written once (load_stream, store_stream), a per-column parameter through
// L1 (load_param). Pointers must be 16-byte aligned (checked on the host).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kb {

constexpr int kBf16x8 = 8;  // bf16 per 16-byte vector

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// The row kernels' shape limits: std::invalid_argument naming `op` unless
// 0 < rows < 2^31 and D is a multiple of 8 in (0, max_d].
inline void check_rows(const std::string& op, int64_t rows, int64_t D, int64_t max_d) {
  const std::string got = " (got rows=" + std::to_string(rows) + ", D=" + std::to_string(D) + ")";
  if (rows <= 0 || D <= 0) throw std::invalid_argument(op + ": rows and D must be > 0" + got);
  if (D % kBf16x8 != 0)
    throw std::invalid_argument(op + ": D must be a multiple of 8 (16-byte vectors)" + got);
  if (D > max_d)
    throw std::invalid_argument(op + ": D must be <= " + std::to_string(max_d) +
                                " (a row held in one block's registers)" + got);
  if (rows > 0x7fffffff) throw std::invalid_argument(op + ": more than 2^31-1 rows");
}

struct alignas(16) Bf16x8 {
  __nv_bfloat162 h[4];
};

// Read-only, no L1 allocation: every byte is used once.
__device__ __forceinline__ Bf16x8 load_stream(const __nv_bfloat16* p) {
  int4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return *reinterpret_cast<Bf16x8*>(&v);
}

// Streaming store (evict first): the output is not read again by this kernel.
__device__ __forceinline__ void store_stream(__nv_bfloat16* p, const Bf16x8& v) {
  const int4 w = *reinterpret_cast<const int4*>(&v);
  asm volatile("st.global.cs.v4.s32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(w.x), "r"(w.y), "r"(w.z),
               "r"(w.w)
               : "memory");
}

// Eight bf16 as floats.
__device__ __forceinline__ void to_floats(const Bf16x8& in, float (&v)[kBf16x8]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 f = __bfloat1622float2(in.h[j]);
    v[2 * j] = f.x;
    v[2 * j + 1] = f.y;
  }
}

// Eight floats as bf16, each rounded to nearest even.
__device__ __forceinline__ Bf16x8 from_floats(const float (&v)[kBf16x8]) {
  Bf16x8 out;
#pragma unroll
  for (int j = 0; j < 4; ++j) out.h[j] = __floats2bfloat162_rn(v[2 * j], v[2 * j + 1]);
  return out;
}

// Vector c of a parameter as floats, read through L1 in one 128-bit load
// (through the Bf16x8 struct it became four 32-bit loads).
__device__ __forceinline__ void load_param(const __nv_bfloat16* __restrict__ p, int c,
                                           float (&v)[kBf16x8]) {
  const int4 raw = __ldg(reinterpret_cast<const int4*>(p) + c);
  to_floats(*reinterpret_cast<const Bf16x8*>(&raw), v);
}

// Vector c of a row as floats, streamed; zeros past the row's nvec vectors.
__device__ __forceinline__ void load_row_vec(const __nv_bfloat16* row, int c, int nvec,
                                             float (&v)[kBf16x8]) {
  if (c < nvec) {
    to_floats(load_stream(row + static_cast<int64_t>(c) * kBf16x8), v);
  } else {
#pragma unroll
    for (int j = 0; j < kBf16x8; ++j) v[j] = 0.f;
  }
}

}  // namespace kb
