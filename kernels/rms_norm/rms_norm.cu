// RMSNorm over rows of bf16, fp32 math, each thread's V 16-byte vectors of
// a row in registers (x read once, y written once). Two layouts of one body,
// chosen by D as layer_norm chooses: warp rows (D <= 2048, one warp a row)
// and block rows (D <= 32768, a block of 128..512 threads a row).
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "kernels/common/bf16x8.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/cuda_check.h"
#include "kernels/common/warp.cuh"
#include "kernels/rms_norm/rms_norm.h"

namespace kb::rms_norm {

namespace {

constexpr int kVec = kBf16x8;
constexpr int kWarpsPerBlock = 8;          // warp rows: rows per block
constexpr int64_t kMaxD = 512 * 8 * kVec;  // block rows: 512 threads of 8 vectors

struct Shape {
  int64_t rows, D;
  float eps;
};

// One row per warp (WARP_ROWS: blocks of 256 threads) or per block (of up
// to 512), V vectors per thread. One bound for both: 256 for the warp rows
// made ptxas spill at V = 8.
template <int V, bool WARP_ROWS>
__global__ void __launch_bounds__(512)
    rms_norm_rows(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                  const Shape a) {
  int64_t row;
  int first, stride;
  if constexpr (WARP_ROWS) {
    row = static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
    first = threadIdx.x & 31;
    stride = 32;
    if (row >= a.rows) return;  // the whole warp: no shuffle is left waiting
  } else {
    row = blockIdx.x;
    first = threadIdx.x;
    stride = blockDim.x;
  }
  const int nvec = static_cast<int>(a.D / kVec);
  const bf16* xr = x + row * a.D;
  bf16* yr = y + row * a.D;

  float v[V][kVec];
#pragma unroll
  for (int i = 0; i < V; ++i) load_row_vec(xr, first + i * stride, nvec, v[i]);
  float ss = 0.f;  // zeros past the row add nothing
#pragma unroll
  for (int i = 0; i < V; ++i)
#pragma unroll
    for (int j = 0; j < kVec; ++j) ss = fmaf(v[i][j], v[i][j], ss);
  if constexpr (WARP_ROWS) {
    ss = warp_sum(ss);
  } else {
    __shared__ float scratch[32];
    ss = block_sum(ss, scratch);
  }
  const float rstd = rsqrtf(ss / static_cast<float>(a.D) + a.eps);

#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int c = first + i * stride;
    if (c >= nvec) continue;
    float g[kVec];
    load_param(w, c, g);
#pragma unroll
    for (int j = 0; j < kVec; ++j) g[j] *= v[i][j] * rstd;
    store_stream(yr + static_cast<int64_t>(c) * kVec, from_floats(g));
  }
}

// Warp rows: kWarpsPerBlock rows a block. Block rows: as many whole warps
// as V vectors per thread need (<= 512: launch() picks V).
template <int V, bool WARP_ROWS>
void launch_rows(const bf16* x, const bf16* w, bf16* y, const Shape& a, cudaStream_t s) {
  const int64_t blocks = WARP_ROWS ? (a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock : a.rows;
  const int64_t threads =
      WARP_ROWS ? 32 * kWarpsPerBlock : ((a.D / kVec + V - 1) / V + 31) / 32 * 32;
  rms_norm_rows<V, WARP_ROWS>
      <<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0, s>>>(x, w, y, a);
  KB_CHECK_LAUNCH();
}

void launch(const bf16* x, const bf16* w, bf16* y, const Shape& a, cudaStream_t s) {
  const int64_t nvec = a.D / kVec;
  if (nvec <= 64) return launch_rows<2, true>(x, w, y, a, s);
  if (nvec <= 128) return launch_rows<4, true>(x, w, y, a, s);
  if (nvec <= 256) return launch_rows<8, true>(x, w, y, a, s);
  // Blocks of 128..512 threads: small blocks keep several rows resident per
  // SM, so one block's reduction overlaps another's loads. Past 256 vectors
  // a thread has 3 or more: V = 4, or 8.
  const int64_t threads = std::min<int64_t>(std::max<int64_t>(nvec / 4, 128), 512);
  const int64_t v = (nvec + threads - 1) / threads;
  if (v <= 4) return launch_rows<4, false>(x, w, y, a, s);
  launch_rows<8, false>(x, w, y, a, s);  // v <= 8: D <= kMaxD
}

}  // namespace

void rms_norm(const bf16* x, const bf16* w, bf16* y, int64_t rows, int64_t D, float eps,
              cudaStream_t stream) {
  check_rows("rms_norm", rows, D, kMaxD);
  if (!x || !w || !y || !aligned16(x) || !aligned16(w) || !aligned16(y))
    throw std::invalid_argument("rms_norm: x, w and y must be non-null and 16-byte aligned");
  launch(x, w, y, Shape{rows, D, eps}, stream);
}

}  // namespace kb::rms_norm
