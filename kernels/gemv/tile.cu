// The whole-tile int8 GEMV kernel (compute capability 9.0), for int8 rows
// of 1-4 KB in matrices up to 32 MB: every block copies its 16 rows at once
// (docs/notes/gemv.md, docs/decisions/0028-gemv-tensor-core-int8.md).
#include <cmath>
#include <stdexcept>

#include "kernels/common/tma.cuh"
#include "kernels/gemv/families.h"
#include "kernels/gemv/mma.cuh"

namespace kb::gemv::detail {

namespace {

// A block per tile of 16 rows: lanes 0-15 of warp 0 copy the rows into
// shared memory with cp.async.bulk first thing (rows 64 bytes apart beyond
// their length: no bank conflicts), while the block stages x as f16 and
// reads the scales and residuals; then warp w multiplies units w, w +
// WARPS, ... and the warps' sums meet in shared memory. Nothing is
// pipelined within a block: co-resident blocks overlap each other.
template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32) gemv_tile_kernel(const KernelArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char tile_smem[];
  __shared__ __align__(8) uint64_t full;
  __shared__ float s_max[WARPS];
  __shared__ float s_red[WARPS][16];
  const int N = a.N, K = a.K;
  const int units = mma_units(K, 4),
            stride = tile_row_stride(units);                    // bytes per row in shared memory
  unsigned char* wt = tile_smem;                                // 16 rows
  int4* xs = reinterpret_cast<int4*>(tile_smem + 16 * stride);  // x in f16
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  const int row0 = blockIdx.x * 16;
  const int8_t* W = static_cast<const int8_t*>(a.W);
  const bf16* scale = a.scale;
  bf16* y = a.y + static_cast<int64_t>(blockIdx.y) * N;
  const bool writer = tid < 16 && row0 + tid < N;
  if (a.experts) {
    // The ids may be written by the previous grid (a router): no prefetch.
    wait_for_previous_grid();
    const int e = a.experts[blockIdx.y];
    if (e < 0 || e >= a.E) {  // the whole block: blockIdx.y is the slot
      if (writer) y[row0 + tid] = __float2bfloat16(NAN);
      return;
    }
    W += static_cast<int64_t>(e) * N * K;
    scale += static_cast<int64_t>(e) * N;
  }
  const uint32_t bar = smem_u32(&full);
  if (tid == 0) {
    mbar_init<1>(bar);
    mbar_init_fence();
  }
  __syncthreads();
  if (warp == 0) {  // rows past N: the last row again (its sums are never written)
    if (lane == 0) mbar_arrive_expect_tx(bar, 16 * K);
    __syncwarp();
    if (lane < 16)
      bulk_copy_to_shared(smem_u32(wt + lane * stride),
                          W + static_cast<int64_t>(min(row0 + lane, N - 1)) * K, K, bar);
  }
  float sc = 1.f, res = 0.f;
  if (writer) sc = __bfloat162float(scale[row0 + tid]);
  if (!a.experts) wait_for_previous_grid();
  if (writer && a.residual) res = __bfloat162float(a.residual[row0 + tid]);
  const int e = stage_x_f16(a.x, K, units * 8, xs, s_max);  // every warp: two barriers
  mbar_wait(bar, 0);
  let_next_grid_launch();
  // Bytes of a row past K (to the unit's end) were never copied: whatever
  // they hold converts to a finite value, and x is zero there.
  float c0[4] = {0.f, 0.f, 0.f, 0.f}, c1[4] = {0.f, 0.f, 0.f, 0.f};
  const unsigned char* ra = wt + g * stride + 16 * t;
  const unsigned char* rb = ra + 8 * stride;
#pragma unroll 2
  for (int un = warp; un < units; un += WARPS)
    mma_unit(*reinterpret_cast<const int4*>(ra + un * 64),
             *reinterpret_cast<const int4*>(rb + un * 64), xs + un * 8 + t * 2, c0, c1);
  if (t == 0) {
    s_red[warp][g] = c0[0] + c1[0];
    s_red[warp][g + 8] = c0[2] + c1[2];
  }
  __syncthreads();
  if (writer) {
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) sum += s_red[w][tid];
    y[row0 + tid] = __float2bfloat16_rn(times_pow2(sum, -e) * sc + res);
  }
#else
  __trap();  // launched only on compute capability 9.0+ (launch_impl)
#endif
}

}  // namespace

// The whole-tile kernel in blocks of 4 or 8 warps.
void launch_tile(int warps, bool pdl, dim3 grid, size_t smem, cudaStream_t s, const KernelArgs& a) {
  auto go = [&](auto kernel, int threads) {
    allow_smem(kernel, smem);
    launch_maybe_pdl_smem(pdl, kernel, grid, dim3(threads), smem, s, a);
  };
  if (warps == 8) return go(gemv_tile_kernel<8>, 256);
  if (warps == 4) return go(gemv_tile_kernel<4>, 128);
  throw std::invalid_argument("gemv: the tile kernel has blocks of 4 or 8 warps");
}

}  // namespace kb::gemv::detail
