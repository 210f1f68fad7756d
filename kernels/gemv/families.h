// The kernel families' launchers (one .cu file each) for gemv.cu; each
// throws std::invalid_argument for a configuration it does not build.
#pragma once

#include <cuda_runtime.h>

#include "kernels/gemv/common.cuh"

namespace kb::gemv::detail {

// Lets `kernel` use `smem` bytes of dynamic shared memory.
void allow_smem(void (*kernel)(KernelArgs), size_t smem);

// general.cu: g's kernel in blocks of g.warps warps. `swiglu`: gemv_swiglu's
// mode; a.weights: gather_gemv_combine; a.tokens > 1: several tokens.
void launch_general(bool int8, const General& g, bool pdl, bool swiglu, dim3 grid, cudaStream_t s,
                    const KernelArgs& a);
// one_load.cu: a row of 32·ks vectors, blocks of `warps` (4 or 8) warps.
void launch_one_load(bool int8, int warps, int ks, bool pdl, dim3 grid, cudaStream_t s,
                     const KernelArgs& a);
// mma.cu: U units per batch, `depth` batches in flight, the diagonal variant or not.
void launch_mma(int U, int depth, bool diag, bool pdl, dim3 grid, dim3 block, size_t smem,
                cudaStream_t s, const KernelArgs& a);
// tile.cu: blocks of 4 or 8 warps.
void launch_tile(int warps, bool pdl, dim3 grid, size_t smem, cudaStream_t s, const KernelArgs& a);
// bulk.cu: `warps` (8 or 16) consumer warps, J vectors per thread and row,
// a.stages buffers; `mma`: tensor-core consumers (int8).
void launch_bulk(bool int8, bool mma, int warps, int J, bool pdl, dim3 grid, size_t smem,
                 cudaStream_t s, const KernelArgs& a);
// row_block.cu: one bf16 row a block of `block` (K / (4·loads)) threads, `loads` 8-byte loads each
// (swiglu: a gate and an up row, grid.x = F).
void launch_row_block(int loads, bool swiglu, bool pdl, dim3 grid, dim3 block, cudaStream_t s,
                      const KernelArgs& a);
// dp4a.cu: int8 on dp4a (gemv_config.h's Dp4a; grid.x: row groups, grid.y: slots; swiglu: of
// outputs).
void launch_dp4a(const Dp4a& c, bool swiglu, bool pdl, dim3 grid, cudaStream_t s,
                 const KernelArgs& a);
// tokens_mma.cu: a gather over tokens of int8 weights (a.token_ids, K a
// multiple of 64) on the tensor cores, K split over `ks` (1, 2, 4) warps.
void launch_tokens_mma(bool swiglu, int ks, bool pdl, cudaStream_t s, const KernelArgs& a);
// bulk.cu: the next of the dynamic row counters (round robin over 1024).
unsigned int* next_bulk_counter();

}  // namespace kb::gemv::detail
