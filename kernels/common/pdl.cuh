// Programmatic dependent launch (compute capability 9.0+): a kernel launched
// with the attribute may start before the previous kernel on the stream has
// finished, once every block of that kernel has called
// let_next_grid_launch() or exited. It must call wait_for_previous_grid()
// before it reads anything the previous kernel writes (or writes anything
// it reads); that wait returns when the previous grid has completed and its
// writes are visible. Both are no-ops on older GPUs and in a grid launched
// without the attribute.
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

// Launches kernel<<<grid, block, smem, stream>>>(args...), as a
// programmatic dependent of the previous work on the stream when `pdl`
// (captured into a graph as such an edge), in thread-block clusters of
// shape `cluster` when cluster.x > 0 (compute capability 9.0). Checked.
template <typename... Params, typename... Args>
void launch_maybe_pdl_cluster(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block,
                              size_t smem, dim3 cluster, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster.x > 0) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = cluster.x;
    attr[n].val.clusterDim.y = cluster.y;
    attr[n++].val.clusterDim.z = cluster.z;
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  KB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

// The same without clusters.
template <typename... Params, typename... Args>
void launch_maybe_pdl_smem(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                           cudaStream_t stream, Args&&... args) {
  launch_maybe_pdl_cluster(pdl, kernel, grid, block, smem, dim3(0), stream,
                           std::forward<Args>(args)...);
}

// The same without dynamic shared memory.
template <typename... Params, typename... Args>
void launch_maybe_pdl(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block,
                      cudaStream_t stream, Args&&... args) {
  launch_maybe_pdl_smem(pdl, kernel, grid, block, 0, stream, std::forward<Args>(args)...);
}

}  // namespace kb
