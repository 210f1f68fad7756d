// Programmatic dependent launch (9.0+): a kernel so launched may start once
// every block of the previous one called let_next_grid_launch() or exited,
// and must wait_for_previous_grid() before touching what that one reads or
// writes. Both are no-ops without the attribute or on older GPUs.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "kernels/common/cuda_check.h"

namespace kb {

__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void let_next_grid_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, smem, stream>>>(args...), checked; a programmatic dependent when `pdl`.
template <typename... Params, typename... Args>
void launch_maybe_pdl_smem(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                           cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  KB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

// The same without dynamic shared memory.
template <typename... Params, typename... Args>
void launch_maybe_pdl(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block,
                      cudaStream_t stream, Args&&... args) {
  launch_maybe_pdl_smem(pdl, kernel, grid, block, 0, stream, std::forward<Args>(args)...);
}

}  // namespace kb
