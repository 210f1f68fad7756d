// Reductions over a thread block for the row kernels (layer_norm, rms_norm).
#pragma once

#include <cuda_runtime.h>

#include "kernels/common/warp.cuh"

namespace kb {

// The sum of v over the block, in every thread; every thread must call it.
// `scratch`: shared memory of one float per warp, reusable by the next call.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  v = warp_sum(v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int warps = (blockDim.x + 31) >> 5;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float t = lane < warps ? scratch[lane] : 0.f;
  return warp_sum(t);
}

}  // namespace kb
