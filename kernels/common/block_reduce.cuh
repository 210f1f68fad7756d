// Reductions over a thread block, for the row kernels that keep one row per
// block (layer_norm, rms_norm): warp shuffles, then one float per warp
// through shared memory, then a shuffle over those.
#pragma once

#include <cuda_runtime.h>

#include "kernels/common/warp.cuh"

namespace kb {

// The sum of v over the block, in every thread. `scratch` is shared memory
// of one float per warp (<= 32 warps); every thread of the block must call
// it. It may be reused by the next call: the first barrier waits for the
// previous call's reads.
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
