// Warp-level helpers shared by the kernels.
#pragma once

#include <cuda_runtime.h>

namespace kb {

// The sum of v over the 32 lanes of a warp (all lanes active), in every lane.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The largest v over the 32 lanes of a warp (all lanes active; NaN lanes
// lose to numbers, as fmaxf), in every lane.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace kb
