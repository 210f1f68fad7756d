// Device helpers the decode step's kernels share: bf16 packing, the block's
// RMS factor, grid sizes and argument checks.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "kernels/common/warp.cuh"

namespace kb::decode::detail {

using bf16 = __nv_bfloat16;

// ---- bf16 packing: 8 bf16 in a uint4, element 0 in the low half of .x ----
__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
__device__ __forceinline__ void unpack8(const uint4& u, float f[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    f[2 * k] = bf16_lo(w[k]);
    f[2 * k + 1] = bf16_hi(w[k]);
  }
}
__device__ __forceinline__ uint4 pack8(const float f[8]) {
  return make_uint4(pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3]), pack_bf16x2(f[4], f[5]),
                    pack_bf16x2(f[6], f[7]));
}

// r = rsqrt(mean(x²) + eps) over `dim` bf16 (dim % 8 == 0), by the whole
// block (every thread calls; `red`: 32 floats of shared memory). `cg`: x
// through L2 only (read before the wait for the previous grid).
template <bool cg = false>
__device__ __forceinline__ float block_rms_scale(const bf16* x, int dim, float eps, float* red) {
  float ss = 0.f;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
#pragma unroll 4
  for (int i = threadIdx.x; i < dim / 8; i += blockDim.x) {
    float f[8];
    unpack8(cg ? __ldcg(xv + i) : xv[i], f);
#pragma unroll
    for (int k = 0; k < 8; ++k) ss = fmaf(f[k], f[k], ss);
  }
  ss = warp_sum(ss);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) red[warp] = ss;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < int(blockDim.x / 32); ++w) total += red[w];
  __syncthreads();  // `red` may be reused by the caller
  return rsqrtf(total / dim + eps);
}

inline int grid_for(int64_t items, int threads, int max_blocks = 4096) {
  const int64_t b = (items + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(b, max_blocks)));
}

inline void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace kb::decode::detail
