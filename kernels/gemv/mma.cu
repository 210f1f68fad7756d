// The tensor-core int8 GEMV kernel and its diagonal variant (compute
// capability 8.0), for int8 rows of 1-4 KB where the general kernel is bound
// by its instructions per weight (docs/decisions/0028): four int8 become two
// f16x2 exactly, mma.sync.m16n8k16 multiplies 16 rows by 16 k, x is staged
// once per block in f16, scaled by 2^e.
//   - A warp owns a tile of 16 rows; KS warps of a block split its K
//     (batch b to warp b % KS). Lane (g, t) loads vector 4u + t of rows g
//     and g + 8 for each 64-byte unit u, U units a batch, DEPTH batches in
//     flight.
//   - The MMA's k order is free as long as x follows it: each lane's A
//     fragment is its own loaded bytes and its B fragment x at the same k.
#include <cmath>
#include <stdexcept>

#include "kernels/gemv/families.h"
#include "kernels/gemv/mma.cuh"

namespace kb::gemv::detail {

namespace {

// DIAG: a warp group owns 2 rows; lane (g, t) loads bytes 64g + 16t of each
// 512-byte unit of both (the general kernel's loads), the MMA's row m is
// segment m of a row against x's segment n: the diagonal holds the dot
// products, summed across the warp.
template <int U, int DEPTH, bool DIAG>
__global__ void __launch_bounds__(256) gemv_mma_kernel(const KernelArgs a) {
  constexpr int kUnitVec = DIAG ? 32 : 4;  // 16-byte vectors per unit of a row
  extern __shared__ __align__(16) unsigned char mma_smem[];
  int4* xs = reinterpret_cast<int4*>(mma_smem);  // x in f16, zero past K to whole units
  __shared__ float s_max[8];
  __shared__ float s_red[8][16];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int ks = a.ks, kpart = warp % ks;
  const int row0 = (blockIdx.x * (warps / ks) + warp / ks) * (DIAG ? 2 : 16);
  const int g = lane >> 2, t = lane & 3;
  const int N = a.N, K = a.K;
  const bool live = row0 < N;
  const int rA = DIAG ? row0 : row0 + g, rB = DIAG ? row0 + 1 : row0 + g + 8;
  const int lane_vec = DIAG ? 4 * g + t : t;  // the lane's vector within a unit
  const int8_t* W = static_cast<const int8_t*>(a.W);
  const bf16* scale = a.scale;
  bf16* y = a.y + static_cast<int64_t>(blockIdx.y) * N;
  const bool writer = live && kpart == 0 && (DIAG ? lane == 0 : t == 0);
  if (a.experts) {
    // The ids may be written by the previous grid (a router): no prefetch.
    wait_for_previous_grid();
    const int e = a.experts[blockIdx.y];
    if (e < 0 || e >= a.E) {  // the whole block: blockIdx.y is the slot
      if (writer && rA < N) y[rA] = __float2bfloat16(NAN);
      if (writer && rB < N) y[rB] = __float2bfloat16(NAN);
      return;
    }
    W += static_cast<int64_t>(e) * N * K;
    scale += static_cast<int64_t>(e) * N;
  }
  const int nvec = K / 16, units = mma_units(K, kUnitVec);
  const int batches = live ? (units + U - 1) / U : 0;
  const int4* pA =
      reinterpret_cast<const int4*>(W + static_cast<int64_t>(min(rA, N - 1)) * K) + lane_vec;
  const int4* pB =
      reinterpret_cast<const int4*>(W + static_cast<int64_t>(min(rB, N - 1)) * K) + lane_vec;
  auto load_batch = [&](int b, int4(&wa)[U], int4(&wb)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = kUnitVec * (b * U + u);  // the lane's vector: v + lane_vec
      const bool ok = b < batches && v + lane_vec < nvec;
      wa[u] = ok ? load16<kStream>(pA + v) : make_int4(0, 0, 0, 0);
      wb[u] = ok ? load16<kStream>(pB + v) : make_int4(0, 0, 0, 0);
    }
  };
  // DEPTH batches in flight: the first DEPTH - 1 are requested before the
  // wait and the x staging below, which then hides under their latency.
  int4 w[DEPTH][2][U];
#pragma unroll
  for (int d = 0; d + 1 < DEPTH; ++d) load_batch(kpart + d * ks, w[d][0], w[d][1]);
  float scA = 1.f, scB = 1.f, resA = 0.f, resB = 0.f;
  if (writer && rA < N) scA = __bfloat162float(scale[rA]);
  if (writer && rB < N) scB = __bfloat162float(scale[rB]);
  if (!a.experts) wait_for_previous_grid();
  if (writer && a.residual) {
    if (rA < N) resA = __bfloat162float(a.residual[rA]);
    if (rB < N) resB = __bfloat162float(a.residual[rB]);
  }

  const int e = stage_x_f16(a.x, K, units * kUnitVec * 2, xs, s_max);  // every warp: two barriers

  float c0[4] = {0.f, 0.f, 0.f, 0.f}, c1[4] = {0.f, 0.f, 0.f, 0.f};  // two MMA chains
  for (int b = kpart; b < batches; b += ks) {
    load_batch(b + (DEPTH - 1) * ks, w[DEPTH - 1][0], w[DEPTH - 1][1]);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int un = b * U + u;
      if (un >= units) break;  // warp-uniform
      mma_unit(w[0][0][u], w[0][1][u], xs + 2 * (un * kUnitVec + lane_vec), c0, c1);
    }
#pragma unroll
    for (int d = 0; d + 1 < DEPTH; ++d)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        w[d][0][u] = w[d + 1][0][u];
        w[d][1][u] = w[d + 1][1][u];
      }
  }
  let_next_grid_launch();
  float sumA = c0[0] + c1[0], sumB = c0[2] + c1[2];  // C[g][2t], C[g+8][2t]: rows g, g + 8
  if constexpr (DIAG) diag_sums(c0, c1, g, t, sumA, sumB);
  if (ks > 1) {
    if (t == 0) {
      s_red[warp][g] = sumA;
      s_red[warp][g + 8] = sumB;
    }
    __syncthreads();
    if (kpart != 0) return;
    sumA = 0.f;
    sumB = 0.f;
    for (int k = 0; k < ks; ++k) {
      sumA += s_red[warp + k][g];
      sumB += s_red[warp + k][g + 8];
    }
  }
  if (writer) {
    if (rA < N) y[rA] = __float2bfloat16_rn(times_pow2(sumA, -e) * scA + resA);
    if (rB < N) y[rB] = __float2bfloat16_rn(times_pow2(sumB, -e) * scB + resB);
  }
}

}  // namespace

// U units per batch (shared memory over the default 48 KB: allow_smem).
void launch_mma(int U, int depth, bool diag, bool pdl, dim3 grid, dim3 block, size_t smem,
                cudaStream_t s, const KernelArgs& a) {
  auto go = [&](auto kernel) {
    allow_smem(kernel, smem);
    launch_maybe_pdl_smem(pdl, kernel, grid, block, smem, s, a);
  };
  switch (U) {
    case 1:  // the 16-row kernel at one unit per batch: no default, no tuning candidate
      if (diag) return go(gemv_mma_kernel<1, 2, true>);
      break;
    case 2:
      if (diag)
        return depth == 3 ? go(gemv_mma_kernel<2, 3, true>) : go(gemv_mma_kernel<2, 2, true>);
      return depth == 3 ? go(gemv_mma_kernel<2, 3, false>) : go(gemv_mma_kernel<2, 2, false>);
    case 4:
      if (diag) return go(gemv_mma_kernel<4, 2, true>);
      return depth == 3 ? go(gemv_mma_kernel<4, 3, false>) : go(gemv_mma_kernel<4, 2, false>);
    case 8:
      return go(gemv_mma_kernel<8, 2, false>);
  }
  throw std::invalid_argument(
      "gemv: the mma kernel's unroll must be 2, 4 or 8 (the diagonal variant's 1, 2 or 4)");
}

}  // namespace kb::gemv::detail
