// The dp4a int8 GEMV ("DP<R>U<U>K<ks>W<w>"), one token. The block first
// converts x into shared memory as 16-bit fixed point, one power of two for
// each 16 values: x_i = s (256 h_i + l_i), h a signed and l an unsigned
// byte, s = 2^(E - 14) with 2^E <= amax < 2^(E + 1) of the 16 (exact for
// every x_i >= amax / 128, else within s / 2; values under 2^-112 read 0, a
// NaN or infinity makes the rows NaN). A row's 16-byte weight vector is then
// 4 dp4a with h and 4 with l, an IMAD, an I2F and an FMA: 11 instructions
// for 16 weights where the float path (common.cuh) takes about 50, the
// reason it exists (docs/decisions/0065). Warps of ks split K; a warp owns
// R rows, a lane U vectors of each per batch, the next batch's loads issued
// before this one's math; the first batch goes out before the wait and the
// conversion. Gathers: blockIdx.y the slot, an id outside [0, E) writes NaN
// rows and reads nothing. The SwiGLU (W holds 2·F rows, gate | up) reduces
// gate and up rows at once and writes silu(r·g)·(r·u) with r the RMSNorm
// factor of x, as the general kernel does.
#include <cmath>
#include <stdexcept>

#include "kernels/gemv/families.h"

namespace kb::gemv::detail {

namespace {

__device__ __forceinline__ int dp4a_su(int w, uint32_t x, int c) {  // signed w, unsigned x
  int d;
  asm("dp4a.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(w), "r"(x), "r"(c));
  return d;
}

// The 16-byte vector v of x (16 bf16) into h[v], l[v], s[v]; returns the
// sum of its squares (the SwiGLU's RMSNorm).
__device__ __forceinline__ float fix16(const bf16* x, int v, int4* h, int4* l, float* s) {
  const int4* p = reinterpret_cast<const int4*>(x) + 2 * v;
  const int4 a = load16<kCoherent>(p), b = load16<kCoherent>(p + 1);
  const uint32_t u[8] = {uint32_t(a.x), uint32_t(a.y), uint32_t(a.z), uint32_t(a.w),
                         uint32_t(b.x), uint32_t(b.y), uint32_t(b.z), uint32_t(b.w)};
  float f[16], m = 0.f, xx = 0.f, z = 0.f;  // z: 0 unless a value is NaN or infinite
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    f[2 * j] = bf16_lo(u[j]);
    f[2 * j + 1] = bf16_hi(u[j]);
    m = fmaxf(m, fmaxf(fabsf(f[2 * j]), fabsf(f[2 * j + 1])));  // fmaxf skips a NaN
    xx = fmaf(f[2 * j], f[2 * j], fmaf(f[2 * j + 1], f[2 * j + 1], xx));
    z = fmaf(f[2 * j], 0.f, fmaf(f[2 * j + 1], 0.f, z));
  }
  const int E = max(int(__float_as_uint(m) >> 23) - 127, -112);
  const float up = __uint_as_float(uint32_t(127 + 14 - E) << 23);
  uint32_t hw[4], lw[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    uint32_t n[4];  // round(f · up) in the low 16 bits: 1.5 · 2^23 + n
#pragma unroll
    for (int i = 0; i < 4; ++i) n[i] = __float_as_uint(fmaf(f[4 * q + i], up, 12582912.f));
    const uint32_t n01 = __byte_perm(n[0], n[1], 0x5410), n23 = __byte_perm(n[2], n[3], 0x5410);
    lw[q] = __byte_perm(n01, n23, 0x6420);
    hw[q] = __byte_perm(n01, n23, 0x7531);
  }
  h[v] = make_int4(int(hw[0]), int(hw[1]), int(hw[2]), int(hw[3]));
  l[v] = make_int4(int(lw[0]), int(lw[1]), int(lw[2]), int(lw[3]));
  s[v] = z == 0.f ? __uint_as_float(uint32_t(127 + E - 14) << 23) : NAN;
  return xx;
}

__device__ __forceinline__ float dot16(const int4& w, const int4& h, const int4& l, float s,
                                       float acc) {
  int ih = __dp4a(w.x, h.x, 0);
  ih = __dp4a(w.y, h.y, ih);
  ih = __dp4a(w.z, h.z, ih);
  ih = __dp4a(w.w, h.w, ih);
  int il = dp4a_su(w.x, uint32_t(l.x), 0);
  il = dp4a_su(w.y, uint32_t(l.y), il);
  il = dp4a_su(w.z, uint32_t(l.z), il);
  il = dp4a_su(w.w, uint32_t(l.w), il);
  return fmaf(s, float(ih * 256 + il), acc);
}

template <int R, int U, int KS, int NW, bool S>
__global__ void __launch_bounds__(32 * NW) gemv_dp4a_kernel(const KernelArgs a) {
  constexpr int kSets = S ? 2 : 1, kRows = kSets * R;  // S: R gate rows, then R up rows
  extern __shared__ int4 smem[];
  __shared__ float red[NW][kRows];
  __shared__ float red_xx[NW];
  const int N = a.N, K = a.K, out_n = S ? N / 2 : N, nvec = K / 16;
  int4* xh = smem;
  int4* xl = smem + nvec;
  float* xs = reinterpret_cast<float*>(smem + 2 * nvec);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, kpart = warp % KS;
  const int row0 = (blockIdx.x * (NW / KS) + warp / KS) * R;
  const int per = (nvec + KS - 1) / KS, vb = kpart * per, ve = min(nvec, vb + per);
  const int8_t* W = static_cast<const int8_t*>(a.W);
  const bf16* scale = a.scale;
  bf16* y = a.y + static_cast<int64_t>(blockIdx.y) * out_n;
  if (a.experts) {
    // The ids may be written by the previous grid (a router): no prefetch.
    wait_for_previous_grid();
    const int e = a.experts[blockIdx.y];
    if (e < 0 || e >= a.E) {  // the whole block: blockIdx.y is the slot
      if (lane < R && kpart == 0 && row0 + lane < out_n) y[row0 + lane] = __float2bfloat16(NAN);
      return;
    }
    W += static_cast<int64_t>(e) * N * K;
    scale += static_cast<int64_t>(e) * N;
  }
  const int4* rows[kRows];  // rows past the end read the last row; not written
#pragma unroll
  for (int i = 0; i < kRows; ++i)
    rows[i] = reinterpret_cast<const int4*>(
        W + static_cast<int64_t>((i / R) * out_n + min(row0 + i % R, out_n - 1)) * K);
  int4 w[kRows][U];
  auto load = [&](int base) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = base + 32 * u + lane;
#pragma unroll
      for (int i = 0; i < kRows; ++i)
        w[i][u] = v < ve ? load16<kStream>(rows[i] + v) : make_int4(0, 0, 0, 0);
    }
  };
  load(vb);
  if (!a.experts) wait_for_previous_grid();
  float xx = 0.f;
  for (int v = threadIdx.x; v < nvec; v += 32 * NW) xx += fix16(a.x, v, xh, xl, xs);
  if constexpr (S) {
    xx = warp_sum(xx);
    if (lane == 0) red_xx[warp] = xx;
  }
  __syncthreads();
  let_next_grid_launch();
  float acc[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) acc[i] = 0.f;
  for (int base = vb; base < ve; base += 32 * U) {
    int4 c[kRows][U];
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int u = 0; u < U; ++u) c[i][u] = w[i][u];
    if (base + 32 * U < ve) load(base + 32 * U);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = base + 32 * u + lane;
      if (v < ve) {
        const int4 h = xh[v], l = xl[v];
        const float s = xs[v];
#pragma unroll
        for (int i = 0; i < kRows; ++i) acc[i] = dot16(c[i][u], h, l, s, acc[i]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kRows; ++i) acc[i] = warp_sum(acc[i]);
  if constexpr (KS > 1) {
    if (lane == 0)
#pragma unroll
      for (int i = 0; i < kRows; ++i) red[warp][i] = acc[i];
    __syncthreads();
    if (kpart != 0) return;
#pragma unroll
    for (int p = 1; p < KS; ++p)
#pragma unroll
      for (int i = 0; i < kRows; ++i) acc[i] += red[warp + p][i];
  }
  const int row = row0 + lane;
  if (lane >= R || row >= out_n) return;
  float v[kSets];
#pragma unroll
  for (int m = 0; m < kSets; ++m) {
    v[m] = acc[m * R];
#pragma unroll
    for (int r = 1; r < R; ++r)
      if (lane == r) v[m] = acc[m * R + r];
    v[m] *= __bfloat162float(scale[m * out_n + row]);
  }
  if constexpr (S) {
    float sum_xx = 0.f;
#pragma unroll
    for (int k = 0; k < NW; ++k) sum_xx += red_xx[k];
    const float r = rsqrtf(sum_xx / K + a.eps), g = r * v[0];
    y[row] = __float2bfloat16_rn(g / (1.f + __expf(-g)) * (r * v[1]));
  } else {
    if (a.residual) v[0] += __bfloat162float(a.residual[row]);  // read last, as the row block's
    y[row] = __float2bfloat16_rn(v[0]);
  }
}

template <int R, int U, int KS, int NW>
void launch_config(bool swiglu, bool pdl, dim3 grid, cudaStream_t s, const KernelArgs& a) {
  const size_t smem = size_t(a.K / 16) * (2 * 16 + 4);  // h, l, s: at most 36 KB (K <= 16384)
  if (swiglu) {
    if constexpr (R <= 2)
      return launch_maybe_pdl_smem(pdl, gemv_dp4a_kernel<R, U, KS, NW, true>, grid, dim3(32 * NW),
                                   smem, s, a);
    throw std::invalid_argument("gemv: the dp4a SwiGLU has 1 or 2 rows a warp");
  }
  launch_maybe_pdl_smem(pdl, gemv_dp4a_kernel<R, U, KS, NW, false>, grid, dim3(32 * NW), smem, s,
                        a);
}

}  // namespace

void launch_dp4a(const Dp4a& c, bool swiglu, bool pdl, dim3 grid, cudaStream_t s,
                 const KernelArgs& a) {
  // kDp4aCompiled (gemv_config.h), one by one.
  if (c == Dp4a{1, 4, 1, 8}) return launch_config<1, 4, 1, 8>(swiglu, pdl, grid, s, a);
  if (c == Dp4a{2, 1, 1, 8}) return launch_config<2, 1, 1, 8>(swiglu, pdl, grid, s, a);
  if (c == Dp4a{2, 2, 1, 8}) return launch_config<2, 2, 1, 8>(swiglu, pdl, grid, s, a);
  if (c == Dp4a{2, 2, 2, 8}) return launch_config<2, 2, 2, 8>(swiglu, pdl, grid, s, a);
  if (c == Dp4a{4, 1, 2, 8}) return launch_config<4, 1, 2, 8>(swiglu, pdl, grid, s, a);
  if (c == Dp4a{4, 2, 1, 8}) return launch_config<4, 2, 1, 8>(swiglu, pdl, grid, s, a);
  throw std::invalid_argument("gemv: not a compiled configuration of the dp4a kernel");
}

}  // namespace kb::gemv::detail
