// The one-load GEMV kernel, for GEMVs up to 4 MB (rows of 32, 64 or 128
// 16-byte vectors), where the launch and the first HBM round trip are most
// of the time (docs/decisions/0026-gemv-one-load-kernel.md).
#include <cmath>
#include <stdexcept>

#include "kernels/gemv/families.h"

namespace kb::gemv::detail {

namespace {

// Lane l of warp part p of a row loads vector 32·p + l of it, first thing;
// KS warps cover the row (WARPS/KS rows a block); x, the scale and the
// residual are read while the weights are in flight. Nothing is decided at
// run time: the instructions before the first load are what is left above
// the launch floor.
template <bool INT8, int KS, int WARPS>
__global__ void __launch_bounds__(256) gemv_one_load_kernel(const KernelArgs a) {
  using Wt = typename Traits<INT8>::W;
  constexpr int kVec = Traits<INT8>::kVec;
  constexpr int kRows = WARPS / KS;  // rows per block
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int part = warp % KS;
  const int row = blockIdx.x * kRows + warp / KS;
  const int N = a.N, K = a.K;
  const bool live = row < N;
  const Wt* W = static_cast<const Wt*>(a.W);
  const bf16* scale = a.scale;
  bf16* y = a.y + static_cast<int64_t>(blockIdx.y) * N;
  int4 w = make_int4(0, 0, 0, 0);
  if (a.experts) {
    // The ids may be written by the previous grid (a router).
    wait_for_previous_grid();
    const int e = a.experts[blockIdx.y];
    if (e < 0 || e >= a.E) {  // the whole block: blockIdx.y is the slot
      if (part == 0 && lane == 0 && live) y[row] = __float2bfloat16(NAN);
      return;
    }
    W += static_cast<int64_t>(e) * N * K;
    if (scale) scale += static_cast<int64_t>(e) * N;
  }
  if (live)
    w = load16<kStream>(reinterpret_cast<const int4*>(W + static_cast<int64_t>(row) * K) +
                        part * 32 + lane);
  const bool writer = live && part == 0 && lane == 0;
  float sc = 1.f, res = 0.f;
  if (writer && scale) sc = __bfloat162float(scale[row]);
  if (!a.experts) wait_for_previous_grid();
  if (writer && a.residual) res = __bfloat162float(a.residual[row]);
  float xf[kVec];
  load_x<INT8>(reinterpret_cast<const int4*>(a.x), part * 32 + lane, xf);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  dot<INT8>(w, xf, acc);
  let_next_grid_launch();
  float sum = warp_sum((acc[0] + acc[1]) + (acc[2] + acc[3]));
  if constexpr (KS > 1) {
    __shared__ float red[WARPS];
    if (lane == 0) red[warp] = sum;
    __syncthreads();
    if (!writer) return;
#pragma unroll
    for (int k = 1; k < KS; ++k) sum += red[warp + k];
  }
  if (writer) y[row] = __float2bfloat16_rn(sum * sc + res);
}

template <bool INT8, int WARPS>
void launch_one_load_t(int ks, bool pdl, dim3 grid, cudaStream_t s, const KernelArgs& a) {
  const dim3 block(32 * WARPS);
  switch (ks) {
    case 1:
      return launch_maybe_pdl(pdl, gemv_one_load_kernel<INT8, 1, WARPS>, grid, block, s, a);
    case 2:
      return launch_maybe_pdl(pdl, gemv_one_load_kernel<INT8, 2, WARPS>, grid, block, s, a);
    case 4:
      return launch_maybe_pdl(pdl, gemv_one_load_kernel<INT8, 4, WARPS>, grid, block, s, a);
  }
  throw std::invalid_argument("gemv: the one-load kernel covers a row with 1, 2 or 4 warps");
}

}  // namespace

void launch_one_load(bool int8, int warps, int ks, bool pdl, dim3 grid, cudaStream_t s,
                     const KernelArgs& a) {
  if (int8)
    return warps == 8 ? launch_one_load_t<true, 8>(ks, pdl, grid, s, a)
                      : launch_one_load_t<true, 4>(ks, pdl, grid, s, a);
  return warps == 8 ? launch_one_load_t<false, 8>(ks, pdl, grid, s, a)
                    : launch_one_load_t<false, 4>(ks, pdl, grid, s, a);
}

}  // namespace kb::gemv::detail
