// A gather over tokens on the tensor cores (int8 weights, K a multiple of
// 64): a MoE prefill's experts, each read once (docs/decisions/0040).
//   - mma.sync m16n8k16 in bf16, fp32 sums: the 8 columns are the tokens;
//     int8 -> bf16 exactly (int8_at: a bf16 is the top half of that float);
//   - a warp owns 2 tiles of 16 rows (the SwiGLU: gate row i and up row i);
//     lane (g, q) loads 16 bytes of each of its rows a 64-byte chunk, and
//     the lane of token g takes x at the same 16 k, so A and B agree on k;
//   - K split over `ks` warps of a block; the block's expert is
//     blockIdx.x / blocks_per_expert, and it returns when no token chose it.
#include <stdexcept>

#include "kernels/gemv/families.h"
#include "kernels/gemv/mma.cuh"

namespace kb::gemv::detail {

namespace {

constexpr int kTmWarps = 4;  // a block's warps
constexpr int kTmTiles = 2;  // 16-row tiles a warp

__device__ __forceinline__ uint32_t top_halves(float lo, float hi) {
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}

// Four int8 (a word) -> two bf16x2, bytes 0,1 and bytes 2,3 (exact: |v| <= 128).
__device__ __forceinline__ void int8x4_to_bf16x2(uint32_t w, uint32_t& lo, uint32_t& hi) {
  const uint32_t b = w ^ 0x80808080u;
  lo = top_halves(int8_at<0>(b), int8_at<1>(b));
  hi = top_halves(int8_at<2>(b), int8_at<3>(b));
}

// Warp tiles an expert has: 32 rows each, or 16 gate/up pairs.
__host__ __device__ inline int tm_tiles(bool swiglu, int N) {
  return swiglu ? (N / 2 + 15) / 16 : (N + 31) / 32;
}

template <bool S>
__global__ void __launch_bounds__(kTmWarps * 32) tokens_mma_kernel(const KernelArgs a) {
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int N = a.N, K = a.K, tokens = a.tokens, ks = a.ks;
  const int half = N / 2;
  const int groups = kTmWarps / ks;
  const int tiles = tm_tiles(S, N);
  const int bpe = (tiles + groups - 1) / groups;
  const int e = blockIdx.x / bpe;
  const int tile = (blockIdx.x % bpe) * groups + wib / ks, kpart = wib % ks;
  const bool live = tile < tiles;  // a tail warp still meets the block's barrier
  wait_for_previous_grid();
  // The tokens that chose e: lane i holds choice i (token i / top).
  const int nch = tokens * a.top;
  const int id = lane < nch ? a.token_ids[lane] : -1;
  const unsigned chose = __ballot_sync(0xffffffffu, id == e);
  unsigned tmask = 0;
  for (int i = 0; i < nch; ++i)
    if (chose >> i & 1u) tmask |= 1u << (i / a.top);
  if (!tmask) return;  // the whole block (one expert)

  // Rows g and g + 8 of each tile (clamped for loads; writes check).
  const int8_t* W = static_cast<const int8_t*>(a.W) + static_cast<int64_t>(e) * N * K;
  const int4* rows[kTmTiles][2];
#pragma unroll
  for (int j = 0; j < kTmTiles; ++j) {
    int ra, rb;
    if constexpr (S) {
      const int i = min(tile * 16 + 8 * j + g, half - 1);
      ra = i;
      rb = half + i;
    } else {
      const int r = tile * 32 + 16 * j + g;
      ra = min(r, N - 1);
      rb = min(r + 8, N - 1);
    }
    rows[j][0] = reinterpret_cast<const int4*>(W + static_cast<int64_t>(ra) * K) + q;
    rows[j][1] = reinterpret_cast<const int4*>(W + static_cast<int64_t>(rb) * K) + q;
  }
  // This lane's token (g) and its x row: X [tokens, K] with the SwiGLU, else X [E, tokens, K].
  const bool has_x = g < tokens && (tmask >> g & 1u);
  const bf16* xrow = a.x + ((S ? 0 : static_cast<int64_t>(e) * tokens) + (has_x ? g : 0)) * K;
  const int4* x4 = reinterpret_cast<const int4*>(xrow) + 2 * q;

  float acc[kTmTiles][4];
#pragma unroll
  for (int j = 0; j < kTmTiles; ++j)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[j][c] = 0.f;
  float ss = 0.f;  // the SwiGLU: squares of this lane's x
  const int chunks = live ? K / 64 : 0;
  auto load = [&](int c, int4(&w)[kTmTiles][2], int4(&xv)[2]) {
#pragma unroll
    for (int j = 0; j < kTmTiles; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) w[j][h] = load16<kStream>(rows[j][h] + 4 * c);
    if (has_x) {
      xv[0] = load16<kCoherent>(x4 + 8 * c);
      xv[1] = load16<kCoherent>(x4 + 8 * c + 1);
    } else {
      xv[0] = xv[1] = make_int4(0, 0, 0, 0);
    }
  };
  auto use = [&](const int4(&w)[kTmTiles][2], const int4(&xv)[2]) {
    const uint32_t xw[8] = {uint32_t(xv[0].x), uint32_t(xv[0].y), uint32_t(xv[0].z),
                            uint32_t(xv[0].w), uint32_t(xv[1].x), uint32_t(xv[1].y),
                            uint32_t(xv[1].z), uint32_t(xv[1].w)};
    if constexpr (S) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float lo = bf16_lo(xw[i]), hi = bf16_hi(xw[i]);
        ss = fmaf(lo, lo, fmaf(hi, hi, ss));
      }
    }
#pragma unroll
    for (int j = 0; j < kTmTiles; ++j) {
      const uint32_t wa[4] = {uint32_t(w[j][0].x), uint32_t(w[j][0].y), uint32_t(w[j][0].z),
                              uint32_t(w[j][0].w)};
      const uint32_t wb[4] = {uint32_t(w[j][1].x), uint32_t(w[j][1].y), uint32_t(w[j][1].z),
                              uint32_t(w[j][1].w)};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        uint32_t a0, a1, a2, a3;
        int8x4_to_bf16x2(wa[i], a0, a2);
        int8x4_to_bf16x2(wb[i], a1, a3);
        mma_16816<true>(acc[j], a0, a1, a2, a3, xw[2 * i], xw[2 * i + 1]);
      }
    }
  };
  // Two chunks in flight: the next one's loads before this one's arithmetic.
  int c = kpart;
  if (c < chunks) {
    int4 w[kTmTiles][2], xv[2];
    load(c, w, xv);
    for (; c < chunks; c += ks) {
      int4 wn[kTmTiles][2] = {}, xn[2] = {};
      if (c + ks < chunks) load(c + ks, wn, xn);
      use(w, xv);
#pragma unroll
      for (int j = 0; j < kTmTiles; ++j) {
        w[j][0] = wn[j][0];
        w[j][1] = wn[j][1];
      }
      xv[0] = xn[0];
      xv[1] = xn[1];
    }
  }
  let_next_grid_launch();

  if (ks > 1) {  // the k split: warp kpart 0 of each group adds the others' sums
    __shared__ float red[kTmWarps][32][kTmTiles * 4 + 1];
#pragma unroll
    for (int j = 0; j < kTmTiles; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) red[wib][lane][j * 4 + v] = acc[j][v];
    red[wib][lane][kTmTiles * 4] = ss;
    __syncthreads();
    if (kpart != 0) return;
    for (int k = 1; k < ks; ++k) {
#pragma unroll
      for (int j = 0; j < kTmTiles; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[j][v] += red[wib + k][lane][j * 4 + v];
      ss += red[wib + k][lane][kTmTiles * 4];
    }
  }
  if (!live) return;
  // Outputs: acc[j][0..1] row g (tokens 2q, 2q + 1), acc[j][2..3] row g + 8.
  const int t0 = 2 * q;
  const bf16* scale = a.scale + static_cast<int64_t>(e) * N;
  if constexpr (S) {
    // RMSNorm factor of token t: the squares of lanes 4t..4t+3.
    ss += __shfl_xor_sync(0xffffffffu, ss, 1);
    ss += __shfl_xor_sync(0xffffffffu, ss, 2);
    const float ss0 = __shfl_sync(0xffffffffu, ss, 4 * t0);
    const float ss1 = __shfl_sync(0xffffffffu, ss, (4 * t0 + 4) & 31);
    const float r[2] = {rsqrtf(ss0 / K + a.eps), rsqrtf(ss1 / K + a.eps)};
#pragma unroll
    for (int j = 0; j < kTmTiles; ++j) {
      const int i = tile * 16 + 8 * j + g;
      if (i >= half) continue;
      const float sg = __bfloat162float(scale[i]), su = __bfloat162float(scale[half + i]);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int t = t0 + h;
        if (t >= tokens || !(tmask >> t & 1u)) continue;
        const float gg = r[h] * sg * acc[j][h], u = r[h] * su * acc[j][2 + h];
        a.y[(static_cast<int64_t>(e) * tokens + t) * half + i] =
            __float2bfloat16_rn(gg / (1.f + __expf(-gg)) * u);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < kTmTiles; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int row = tile * 32 + 16 * j + g + (v >= 2 ? 8 : 0), t = t0 + (v & 1);
        if (row >= N || t >= tokens || !(tmask >> t & 1u)) continue;
        a.y[(static_cast<int64_t>(e) * tokens + t) * N + row] =
            __float2bfloat16_rn(acc[j][v] * __bfloat162float(scale[row]));
      }
  }
}

}  // namespace

void launch_tokens_mma(bool swiglu, int ks, bool pdl, cudaStream_t s, const KernelArgs& a) {
  if ((ks != 1 && ks != 2 && ks != 4) || a.K % 64 != 0 || a.tokens < 1 || a.tokens > 8 ||
      a.tokens * a.top > 32 || (swiglu && a.N % 2 != 0))
    throw std::invalid_argument(
        "gather over tokens (mma): k split 1, 2 or 4, K a multiple of 64, 1..8 tokens of at most "
        "32 ids, the SwiGLU's 2·F rows");
  const int64_t bpe = (tm_tiles(swiglu, a.N) + kTmWarps / ks - 1) / (kTmWarps / ks);
  const dim3 grid(static_cast<unsigned>(bpe * a.E)), block(kTmWarps * 32);
  KernelArgs k = a;
  k.ks = ks;
  if (swiglu)
    launch_maybe_pdl(pdl, tokens_mma_kernel<true>, grid, block, s, k);
  else
    launch_maybe_pdl(pdl, tokens_mma_kernel<false>, grid, block, s, k);
}

}  // namespace kb::gemv::detail
