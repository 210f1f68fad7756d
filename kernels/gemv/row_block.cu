// The row-block GEMV kernel, bf16 rows of at most 16384 weights, one token:
// a block per row (gather: blockIdx.y the slot), each of its K / (4 L)
// threads issuing its L 8-byte weight loads first thing (L = 4 or 8), with
// no predicate and no loop, then x at the same k, the products and one block
// reduction (docs/decisions/0061, 0062); the SwiGLU's form reduces a gate
// and an up row (0064). The block count is N, its threads the row's length:
// a 4096-row GEMV is 4096 short blocks that keep 64 KB of one row's loads in
// flight per SM at 4 blocks of 512 threads.
#include <cmath>
#include <stdexcept>

#include "kernels/gemv/families.h"

namespace kb::gemv::detail {

namespace {

// Eight bytes of weights (four bf16), streamed: read once, not kept in L1.
__device__ __forceinline__ uint2 load8_stream(const uint2* p) {
  uint2 v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.b32 {%0,%1}, [%2];"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p));
  return v;
}
// Eight bytes of x, coherent (load16's kCoherent: x may be the previous grid's output).
__device__ __forceinline__ uint2 load8_coherent(const uint2* p) {
  uint2 v;
  asm volatile("ld.global.v2.b32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}

// At most 16384 weights a row: 4096 / L threads. S, the SwiGLU (W holds
// 2·F rows, gate | up; block i reduces gate row i, up row i and x², and
// writes silu(r·g)·(r·u), r the RMSNorm factor, as the general kernel does).
template <int L, bool S>
__global__ void __launch_bounds__(4096 / L) gemv_row_block_kernel(const KernelArgs a) {
  constexpr int kRows = S ? 2 : 1, kSums = S ? 3 : 1;  // S: g, u and x²
  __shared__ float warp_sums[kSums][32];
  const int T = blockDim.x, row = blockIdx.x;
  const int N = a.N, K = a.K, out_n = S ? N / 2 : N;
  const bf16* W = static_cast<const bf16*>(a.W);
  bf16* y = a.y + static_cast<int64_t>(blockIdx.y) * out_n;
  if (a.experts) {
    // The ids may be written by the previous grid (a router): no prefetch.
    wait_for_previous_grid();
    const int e = a.experts[blockIdx.y];
    if (e < 0 || e >= a.E) {  // the whole block: blockIdx.y is the slot
      if (threadIdx.x == 0) y[row] = __float2bfloat16(NAN);
      return;
    }
    W += static_cast<int64_t>(e) * N * K;
  }
  uint2 w[kRows][L];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t wrow = row + static_cast<int64_t>(r) * out_n;
    const uint2* wr = reinterpret_cast<const uint2*>(W + wrow * K) + threadIdx.x;
#pragma unroll
    for (int i = 0; i < L; ++i) w[r][i] = load8_stream(wr + i * T);
  }
  if (!a.experts) wait_for_previous_grid();
  const uint2* xr = reinterpret_cast<const uint2*>(a.x) + threadIdx.x;
  uint2 xv[L];
#pragma unroll
  for (int i = 0; i < L; ++i) xv[i] = load8_coherent(xr + i * T);
  let_next_grid_launch();
  float sums[kSums];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int i = 0; i < L; ++i) {
      acc[0] = fmaf(bf16_lo(w[r][i].x), bf16_lo(xv[i].x), acc[0]);
      acc[1] = fmaf(bf16_hi(w[r][i].x), bf16_hi(xv[i].x), acc[1]);
      acc[2] = fmaf(bf16_lo(w[r][i].y), bf16_lo(xv[i].y), acc[2]);
      acc[3] = fmaf(bf16_hi(w[r][i].y), bf16_hi(xv[i].y), acc[3]);
    }
    sums[r] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }
  if constexpr (S) {
    float xx = 0.f;
#pragma unroll
    for (int i = 0; i < L; ++i) {
      const float v[4] = {bf16_lo(xv[i].x), bf16_hi(xv[i].x), bf16_lo(xv[i].y), bf16_hi(xv[i].y)};
#pragma unroll
      for (int j = 0; j < 4; ++j) xx = fmaf(v[j], v[j], xx);
    }
    sums[2] = xx;
  }
#pragma unroll
  for (int j = 0; j < kSums; ++j) {
    const float v = warp_sum(sums[j]);
    if ((threadIdx.x & 31) == 0) warp_sums[j][threadIdx.x >> 5] = v;
  }
  __syncthreads();
  if (threadIdx.x >= 32) return;
  float total[kSums];
#pragma unroll
  for (int j = 0; j < kSums; ++j)
    total[j] = warp_sum(threadIdx.x < (T >> 5) ? warp_sums[j][threadIdx.x] : 0.f);
  if (threadIdx.x != 0) return;
  if constexpr (S) {
    const float r = rsqrtf(total[2] / K + a.eps), g = r * total[0];
    y[row] = __float2bfloat16_rn(g / (1.f + __expf(-g)) * (r * total[1]));
  } else {
    // The residual is read last: read ahead of x it cost up to 4% (decision 0062).
    const float res = a.residual ? __bfloat162float(a.residual[row]) : 0.f;
    y[row] = __float2bfloat16_rn(total[0] + res);
  }
}

template <int L>
void launch_loads(bool swiglu, bool pdl, dim3 grid, dim3 block, cudaStream_t s,
                  const KernelArgs& a) {
  if (swiglu)
    launch_maybe_pdl(pdl, gemv_row_block_kernel<L, true>, grid, block, s, a);
  else
    launch_maybe_pdl(pdl, gemv_row_block_kernel<L, false>, grid, block, s, a);
}

}  // namespace

void launch_row_block(int loads, bool swiglu, bool pdl, dim3 grid, dim3 block, cudaStream_t s,
                      const KernelArgs& a) {
  if (loads == 4)
    launch_loads<4>(swiglu, pdl, grid, block, s, a);
  else if (loads == 8)
    launch_loads<8>(swiglu, pdl, grid, block, s, a);
  else
    throw std::invalid_argument("gemv: the row-block kernel is compiled for 4 or 8 loads");
}

}  // namespace kb::gemv::detail
