// GEMV and gather-GEMV for batch-1 decode (see gemv.h).
//
// One kernel, templated on the weight type (bf16 / int8), rows per warp R
// and unroll U:
//   - a warp owns R consecutive output rows; its 32 lanes walk K in 16-byte
//     weight vectors (8 bf16 or 16 int8), lane l taking vectors l, l+32, ...,
//     so each warp-wide load reads 512 contiguous bytes of one row;
//   - U vectors per row are loaded before any is used: R·U 16-byte loads in
//     flight per thread, enough to cover HBM latency at full occupancy;
//   - weights are read with ld.global.nc.L1::no_allocate (every byte is
//     used once; keeping them out of L1 leaves L1 to x, which every warp
//     reads) and an L2 256-byte prefetch hint;
//   - x is read through L1 with coherent loads (load16) and converted once
//     per vector for all R rows;
//   - int8 -> fp32 without the quarter-rate I2F: the byte is placed in the
//     mantissa of 2^23 (one PRMT) and the bias subtracted (one FADD), exact;
//   - k-split: ks warps of a block share R rows and split K, reducing
//     through shared memory;
//   - fp32 accumulation, a warp-shuffle reduction, then scale, residual and
//     one bf16 store per row (scale and residual read early);
//   - programmatic dependent launch: the first two batches of weights are
//     read before griddepcontrol.wait, the next grid is let launch once the
//     weights are streamed;
//   - several tokens (T, a prefill): each weight vector converted once and
//     multiplied with every token's x;
//   - SwiGLU (S): a warp group reduces gate row i and up row i and writes
//     silu(r·g)·(r·u), r the RMSNorm factor of x from the squares it reads.
// gather_gemv is the same kernel with blockIdx.y = the selected slot: the
// block reads its expert id from device memory, and an id outside [0, E)
// makes the block write NaN rows and read nothing.
// Small GEMVs (up to 4 MB, rows of 32-128 vectors: the seed's D = 1024) go
// to a second kernel, gemv_one_load_kernel: one 16-byte load per lane,
// nothing decided at run time (see there). Three more, each where it
// measured faster (default_config): gemv_bulk_kernel (bf16 rows streamed
// into shared memory by the TMA engine), and for int8 two tensor-core
// kernels that convert int8 to f16 and multiply 16-row tiles with
// mma.sync: gemv_tile_kernel (a tile copied whole, rows up to 4 KB and
// matrices up to 32 MB) and gemv_mma_kernel (tiles streamed through
// registers, larger matrices of such rows).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/common/pdl.cuh"
#include "kernels/common/warp.cuh"
#include "kernels/gemv/gemv.h"

namespace kb::gemv {

namespace {

// One 16-byte load. Weights (kStream): ld.global.nc.L1::no_allocate with an
// L2 256-byte prefetch hint. x (kCoherent): a plain ld.global, cached in
// L1; not ld.global.nc (__ldg): under programmatic dependent launch the
// grid starts while the previous one still writes x, and the non-coherent
// path may then serve a line that an earlier kernel on the SM cached
// before that write; griddepcontrol.wait makes the previous grid's writes
// visible to coherent loads only. (With __ldg the int8 Llama decode read
// stale x at random steps.)
enum LoadKind { kStream, kCoherent };
template <LoadKind L>
__device__ __forceinline__ int4 load16(const int4* p) {
  int4 v;
  if constexpr (L == kStream)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  else
    asm volatile("ld.global.v4.s32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  return v;
}

// Two bf16 packed in a 32-bit word -> two floats (a bf16 is the top half of an fp32).
__device__ __forceinline__ float bf16_lo(uint32_t u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t u) { return __uint_as_float(u & 0xffff0000u); }

// Byte i of a word of four int8 -> float, exactly: (b + 128) goes into the
// low mantissa bits of 2^23 (0x4B000000), then 2^23 + 128 is subtracted.
template <int I>
__device__ __forceinline__ float int8_at(uint32_t biased) {
  return __uint_as_float(__byte_perm(biased, 0x4B000000u, 0x7540u + I)) - 8388736.f;
}

template <bool INT8>
struct Traits;
template <>
struct Traits<false> {
  using W = bf16;
  static constexpr int kVec = 8;  // elements per 16-byte weight vector
};
template <>
struct Traits<true> {
  using W = int8_t;
  static constexpr int kVec = 16;
};

// x[k .. k+kVec) as floats.
template <bool INT8>
__device__ __forceinline__ void load_x(const int4* x4, int vec, float (&xf)[Traits<INT8>::kVec]) {
  constexpr int kWords = Traits<INT8>::kVec / 2;  // bf16 pairs
  uint32_t u[kWords];
#pragma unroll
  for (int h = 0; h < kWords / 4; ++h) {
    const int4 v = load16<kCoherent>(x4 + vec * (kWords / 4) + h);
    u[4 * h + 0] = v.x;
    u[4 * h + 1] = v.y;
    u[4 * h + 2] = v.z;
    u[4 * h + 3] = v.w;
  }
#pragma unroll
  for (int j = 0; j < kWords; ++j) {
    xf[2 * j] = bf16_lo(u[j]);
    xf[2 * j + 1] = bf16_hi(u[j]);
  }
}

// The 16-byte weight vector as floats (int8 exactly, via int8_at).
template <bool INT8>
__device__ __forceinline__ void convert(const int4& w, float (&wf)[Traits<INT8>::kVec]) {
  const uint32_t words[4] = {static_cast<uint32_t>(w.x), static_cast<uint32_t>(w.y),
                             static_cast<uint32_t>(w.z), static_cast<uint32_t>(w.w)};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (INT8) {
      const uint32_t b = words[j] ^ 0x80808080u;
      wf[4 * j + 0] = int8_at<0>(b);
      wf[4 * j + 1] = int8_at<1>(b);
      wf[4 * j + 2] = int8_at<2>(b);
      wf[4 * j + 3] = int8_at<3>(b);
    } else {
      wf[2 * j] = bf16_lo(words[j]);
      wf[2 * j + 1] = bf16_hi(words[j]);
    }
  }
}

// acc[j] += the products of word j (the j-th quarter of the vector): four
// independent FMA chains, so the dot product of a vector is 4 (bf16: 2)
// FMAs deep rather than 16 (8). Several tokens convert a vector once and
// call this per token: the same products in the same order as one token.
template <bool INT8>
__device__ __forceinline__ void dot_converted(const float (&wf)[Traits<INT8>::kVec],
                                              const float (&xf)[Traits<INT8>::kVec],
                                              float (&acc)[4]) {
  constexpr int Q = Traits<INT8>::kVec / 4;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int i = 0; i < Q; ++i) acc[j] = fmaf(wf[Q * j + i], xf[Q * j + i], acc[j]);
}

template <bool INT8>
__device__ __forceinline__ void dot(const int4& w, const float (&xf)[Traits<INT8>::kVec],
                                    float (&acc)[4]) {
  float wf[Traits<INT8>::kVec];
  convert<INT8>(w, wf);
  dot_converted<INT8>(wf, xf, acc);
}

struct KernelArgs {
  const void* W;
  const bf16* scale;       // int8: per-row scales; bf16: nullptr
  const int32_t* experts;  // gather: the n_sel ids (blockIdx.y = slot); else nullptr
  int E;
  const bf16* x;         // [tokens, K]
  bf16* y;               // [tokens or n_sel, N]
  const bf16* residual;  // [tokens, N] or nullptr
  int N, K;
  int ks;                     // warps splitting K (Config::k_split)
  int tokens;                 // x rows, <= the instantiation's T
  float eps;                  // SwiGLU: the RMSNorm epsilon
  unsigned long long* trace;  // Config::trace (every kernel but the one-load one)
  int n_sel;                  // gather: the selected experts (bulk kernel: its rows are n_sel·N)
  int stages;                 // bulk kernel: the buffers of its shared-memory ring
  int bulk_rows;              // bulk kernel: Config::bulk_rows
  int rows_per_buffer;        // bulk kernel: rows per ring buffer, 1 or 2
  unsigned int* counter;      // bulk kernel, dynamic rows: [next unit, tickets], zero
  const float* weights;       // combine (gather_gemv_combine): the n_sel slot weights; else nullptr
};

// gather_gemv_combine: the most slots one launch sums (top-2 routing).
constexpr int kMaxCombine = 2;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// T: the most tokens (x rows) the instantiation serves, 1 or kMaxTokens;
// `tokens` <= T of them are used. Each weight vector is loaded once and
// multiplied with every token's x.
// S (SwiGLU): W holds 2·F rows, gate | up; warp group i reduces gate row i
// and up row i (R = 2) and writes y[i] = silu(r·g)·(r·u) with the RMSNorm
// factor r = rsqrt(mean(x²) + eps) of its token, the sum of squares taken
// from the x vectors it multiplies (every vector once per group).
// C (combine, gather_gemv_combine; T = 1, no SwiGLU): one grid row sums
// the n_sel <= kMaxCombine selected experts: a warp walks slot 0's vectors
// of its rows, then slot 1's (x = X[slot]), as one row of n_sel·K; when its
// slot changes a lane folds its partial sums, times the slot's weight and
// the expert's row scale, into a running total. y = total (+ residual).
template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false>
__global__ void __launch_bounds__(256) gemv_kernel(const KernelArgs a) {
  using Wt = typename Traits<INT8>::W;
  const Wt* W = static_cast<const Wt*>(a.W);
  const bf16* scale = a.scale;
  const bf16* x = a.x;  // written by the previous grid: coherent loads only (load_x)
  bf16* y = a.y;
  const bf16* residual = a.residual;
  const int N = a.N, K = a.K, ks = a.ks, tokens = a.tokens;
  static_assert(T * R <= 32, "a lane writes each (token, row)");
  static_assert(!S || R == 2, "SwiGLU: a warp group's rows are gate i and up i");
  static_assert(!C || (T == 1 && !S), "combine: one token, no SwiGLU");
  constexpr int kVec = Traits<INT8>::kVec;
  __shared__ float red[8][T * R];  // k-split partial sums, one per warp, token and row
  __shared__ float red_xx[8][T];   // SwiGLU: partial sums of x², one per warp and token
  const int lane = threadIdx.x & 31;
  const int64_t block_id = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  if (a.trace && threadIdx.x == 0) a.trace[2 * block_id] = global_ns();
  // `ks` consecutive warps of the block share R rows and split K between
  // them (batch b of the row goes to warp b % ks); ks = 1: a warp per R rows.
  const int wib = threadIdx.x >> 5, kpart = wib % ks;
  const int group = blockIdx.x * ((blockDim.x >> 5) / ks) + wib / ks;
  const int half = N / 2;  // SwiGLU: F, the gate rows
  const int row0 = S ? group : group * R;
  const bool live = S ? group < half : row0 < N;
  if (!live && ks == 1) return;  // with ks > 1 every warp reaches the block barrier
  // A gather's slot (blockIdx.y) writes its own rows: N of them, F = N / 2 with the SwiGLU.
  y += static_cast<int64_t>(blockIdx.y) * (S ? half : N);
  // combine: each slot's expert (the rows) and coefficient (weight · row scale).
  constexpr int kSlots = C ? kMaxCombine : 1;
  const int n_slots = C ? a.n_sel : 1;
  const int4* rows[kSlots][R];
  float coef[kSlots][R];
  if (a.experts) {
    // The ids may be written by the previous grid (a router): no prefetch.
    wait_for_previous_grid();
    int e[kSlots];
    bool bad = false;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      e[s] = s < n_slots ? a.experts[C ? s : blockIdx.y] : 0;
      bad |= e[s] < 0 || e[s] >= a.E;
    }
    if (bad) {  // the whole block: every warp reads the same ids
      if constexpr (S) {
        if (kpart == 0 && lane == 0 && live) y[group] = __float2bfloat16(NAN);
      } else {
        if (kpart == 0 && lane < R && row0 + lane < N) y[row0 + lane] = __float2bfloat16(NAN);
      }
      return;
    }
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = S ? min(group, half - 1) + r * half : min(row0 + r, N - 1);
        const int64_t erow = static_cast<int64_t>(e[s]) * N + row;
        rows[s][r] = reinterpret_cast<const int4*>(W + erow * K);
        if constexpr (C)
          coef[s][r] =
              s < n_slots ? a.weights[s] * (scale ? __bfloat162float(scale[erow]) : 1.f) : 0.f;
      }
    if (!C && scale) scale += static_cast<int64_t>(e[0]) * N;  // the epilogue's (slot) scales
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int row = S ? min(group, half - 1) + r * half : min(row0 + r, N - 1);
      rows[0][r] = reinterpret_cast<const int4*>(W + static_cast<int64_t>(row) * K);
    }
  }
  const int nvec = live ? K / kVec : 0;  // vectors per row (per slot)
  const int nv_all = nvec * n_slots;     // combine: slot s's vectors are [s·nvec, (s+1)·nvec)
  const int first = lane + 32 * U * kpart, stride = 32 * U * ks;
  const int4* x4 = reinterpret_cast<const int4*>(x);
  const int x_stride = K / 8;  // int4 per token (combine: slot) row of x (8 bf16 each)

  // The epilogue's operands, read first so that their latency hides under
  // the stream (at small shapes a scale read after the reduction was a
  // whole extra HBM round trip): lane t·R + r (SwiGLU: lane t) writes token
  // t's row r. Scales never change (read before the wait, as the weights);
  // the residual is read right after the wait; the output line is
  // prefetched into L2.
  const int my_t = S ? lane : lane / R, my_r = S ? 0 : lane % R;
  const bool writer =
      kpart == 0 && live && my_t < T && (T == 1 || my_t < tokens) && (S || row0 + my_r < N);
  float my_scale = 1.f, my_scale_up = 1.f, my_res = 0.f;
  if (!C && writer && scale) {  // combine: the scales are in coef
    my_scale = __bfloat162float(scale[S ? group : row0 + my_r]);
    if (S) my_scale_up = __bfloat162float(scale[group + half]);
  }
  if (writer && lane == 0) {
    const bf16* out = S ? y + group : y + row0;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(out));
  }
  auto after_wait = [&] {
    if (!S && writer && residual)
      my_res = __bfloat162float(residual[int64_t(my_t) * N + row0 + my_r]);
  };

  float part[T][R][4];
#pragma unroll
  for (int t = 0; t < T; ++t)
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < 4; ++j) part[t][r][j] = 0.f;
  float xx[T];
#pragma unroll
  for (int t = 0; t < T; ++t) xx[t] = 0.f;
  auto add_squares = [&](int t, const float(&xf)[kVec]) {
    if constexpr (S)
#pragma unroll
      for (int i = 0; i < kVec; ++i) xx[t] = fmaf(xf[i], xf[i], xx[t]);
  };

  // combine: the slot of vector index v (kMaxCombine = 2) and the running
  // total; fold() adds this slot's partial sums times its coefficients.
  auto slot_of = [&](int v) { return C && v >= nvec ? 1 : 0; };
  int cur = 0;
  float total[R];
#pragma unroll
  for (int r = 0; r < R; ++r) total[r] = 0.f;
  auto fold = [&] {
    if constexpr (C) {
      for (int r = 0; r < R; ++r) {  // R <= 2, unrolled by the compiler
        const float c = cur == 0 ? coef[0][r] : coef[kSlots - 1][r];
        total[r] =
            fmaf(c, (part[0][r][0] + part[0][r][1]) + (part[0][r][2] + part[0][r][3]), total[r]);
        for (int j = 0; j < 4; ++j) part[0][r][j] = 0.f;
      }
    }
  };

  // A batch: U vectors of each of the R rows, from vector index `base`.
  auto load_batch = [&](int base, int4(&w)[R][U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = base + u * 32;
      const int s = slot_of(v);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int4* row = s == 0 ? rows[0][r] : rows[kSlots - 1][r];
        w[r][u] = v < nv_all ? load16<kStream>(row + (v - s * nvec)) : make_int4(0, 0, 0, 0);
      }
    }
  };
  auto use_batch = [&](int base, const int4(&w)[R][U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = base + u * 32;
      if (v >= nv_all) continue;
      if constexpr (C) {
        const int s = slot_of(v);
        if (s != cur) {  // a lane's vectors only move forward: each slot folds once
          fold();
          cur = s;
        }
        float xf[kVec];
        load_x<INT8>(x4 + s * x_stride, v - s * nvec, xf);
#pragma unroll
        for (int r = 0; r < R; ++r) dot<INT8>(w[r][u], xf, part[0][r]);
      } else if constexpr (T == 1) {
        float xf[kVec];
        load_x<INT8>(x4, v, xf);
        add_squares(0, xf);
#pragma unroll
        for (int r = 0; r < R; ++r) dot<INT8>(w[r][u], xf, part[0][r]);
      } else {  // several tokens: each weight converted once
        float wf[R][kVec];
#pragma unroll
        for (int r = 0; r < R; ++r) convert<INT8>(w[r][u], wf[r]);
#pragma unroll
        for (int t = 0; t < T; ++t) {
          if (t >= tokens) break;
          float xf[kVec];
          load_x<INT8>(x4 + t * x_stride, v, xf);
          add_squares(t, xf);
#pragma unroll
          for (int r = 0; r < R; ++r) dot_converted<INT8>(wf[r], xf, part[t][r]);
        }
      }
    }
  };
  if constexpr (P) {
    // Software pipeline: the next batch's loads are in flight while this
    // one is converted and multiplied, so a warp never waits with nothing
    // outstanding (twice the registers for loads).
    int4 w[R][U];
    load_batch(first, w);
    // Weights never change: the first two batches are read before waiting
    // for the previous grid, whose output (x, residual) is read only after.
    // Under programmatic dependent launch this overlaps the previous kernel.
    bool waited = false;
    for (int base = first; base < nv_all; base += stride) {
      int4 next[R][U];
      load_batch(base + stride, next);
      if (!waited) {
        wait_for_previous_grid();
        after_wait();
        waited = true;
      }
      use_batch(base, w);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int u = 0; u < U; ++u) w[r][u] = next[r][u];
    }
    if (!waited) {  // a warp with no vectors still writes y
      wait_for_previous_grid();
      after_wait();
    }
  } else {
    wait_for_previous_grid();
    after_wait();
    for (int base = first; base < nv_all; base += stride) {
      int4 w[R][U];
      load_batch(base, w);
      use_batch(base, w);
    }
  }
  // The weights are streamed: the next grid may launch and start its own
  // (it still waits for this grid to complete before reading its output).
  let_next_grid_launch();
  if (a.trace && threadIdx.x == 0) a.trace[2 * block_id + 1] = global_ns();
  float acc[T][R];
#pragma unroll
  for (int t = 0; t < T; ++t) {
    if (T > 1 && t >= tokens) break;  // warp-uniform
    if constexpr (C) {
      fold();
#pragma unroll
      for (int r = 0; r < R; ++r) acc[t][r] = warp_sum(total[r]);
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r)
        acc[t][r] = warp_sum((part[t][r][0] + part[t][r][1]) + (part[t][r][2] + part[t][r][3]));
    }
    if constexpr (S) xx[t] = warp_sum(xx[t]);
  }
  if (ks > 1) {
    if (lane == 0)
#pragma unroll
      for (int t = 0; t < T; ++t) {
#pragma unroll
        for (int r = 0; r < R; ++r) red[wib][t * R + r] = acc[t][r];
        if constexpr (S) red_xx[wib][t] = xx[t];
      }
    __syncthreads();
    if (kpart != 0 || !live) return;
#pragma unroll
    for (int t = 0; t < T; ++t) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        acc[t][r] = 0.f;
        for (int k = 0; k < ks; ++k) acc[t][r] += red[wib + k][t * R + r];
      }
      if constexpr (S) {
        xx[t] = 0.f;
        for (int k = 0; k < ks; ++k) xx[t] += red_xx[wib + k][t];
      }
    }
  }

  if constexpr (S) {  // lane t writes token t's y[group] (y: [tokens, F])
#pragma unroll
    for (int t = 0; t < T; ++t)
      if (lane == t && live && t < tokens) {
        float g = acc[t][0], u = acc[t][1];
        if (scale) {
          g *= my_scale;
          u *= my_scale_up;
        }
        const float r = rsqrtf(xx[t] / K + a.eps);
        const float gg = r * g;
        y[int64_t(t) * half + group] = __float2bfloat16_rn(gg / (1.f + __expf(-gg)) * (r * u));
      }
  } else {
    // Lane t·R + r writes row row0 + r of token t (every lane holds every
    // sum after the xor reduction).
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = row0 + r;
        if (lane == t * R + r && row < N && (T == 1 || t < tokens)) {
          float v = acc[t][r];
          if (!C && scale) v *= my_scale;
          if (residual) v += my_res;
          y[int64_t(t) * N + row] = __float2bfloat16_rn(v);
        }
      }
  }
}

// The one-load GEMV (Config::one_load): lane l of warp part p of a row
// loads vector 32·p + l of it, first thing; KS warps cover the row (WARPS/KS
// rows per block), reduce by shuffles and through shared memory;
// x, the scale and the residual are read while the weights are in flight.
// Everything a general kernel decides at run time (batches, the K split,
// the loop) is compile-time here: at 1-2 MB the instructions between the
// launch and the first load, and between the data and the store, are what
// is left above the launch floor (the general kernel ran 276 instructions
// per warp at int8 1024², the floor's one-load kernel 34).
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

// The tensor-core int8 GEMV (Config::mma, compute capability 8.0+). The
// general kernel spends about three instructions per int8 weight (PRMT,
// FADD, FFMA) and at 16384² and 4096² int8 is bound by that, not by HBM.
// Here a weight costs about one and a half: four int8 become two f16x2 with
// a LOP3 (the sign bit flipped), two PRMTs (each byte into the mantissa of
// 1024) and two HSUB2s (minus 1152: exact, -128..127), and one
// mma.sync.m16n8k16 (f16 in, fp32 accumulation) multiplies 16 rows by 16
// k for 8 weights per thread.
//   - A warp owns a tile of 16 rows; KS warps of a block share it and split
//     its K (batch b of the row goes to warp b % KS). Lane (g, t) = (lane/4,
//     lane%4) loads the 16-byte vector 4u + t of rows g and g + 8 for each
//     unit u of 64 bytes, so the four lanes of a row read 64 contiguous
//     bytes, U units per batch, the next batch loaded while this one is used.
//   - The MMA's k order is free, as long as x follows it: slots 2t, 2t+1 /
//     2t+8, 2t+9 of MMA m of a unit are bytes 4m, 4m+1 / 4m+2, 4m+3 of lane
//     t's vector, so each lane's A fragment is its own loaded bytes and its B
//     fragment x at the same k (every column of B is x; column 0 is used).
//   - x becomes f16 once per block, in shared memory, scaled by a power of
//     two 2^e that puts its largest magnitude in [2^14, 2^15) (bf16 -> f16 is
//     then exact but for values 2^24 times smaller than the largest, whose
//     products are below the fp32 sum's rounding) and unscaled from the fp32
//     sum: any bf16 x, no overflow.
//   - The sums stay in the MMA's accumulators (no shuffles); the KS warps
//     add through shared memory; scale, residual and the store as the general
//     kernel. Gathers and programmatic dependent launch as there.
// The 16 sums of a tile equal the fp64 reference within fp32 accumulation
// error; they are not the general kernel's bits.
__device__ __forceinline__ float pow2(int k) {
  return __int_as_float((127 + k) << 23);
}  // |k| <= 126

// v · 2^e for |e| <= 252, as two exact power-of-two products (each factor
// within a float's exponent): the sums' unscaling by 2^-e (stage_x_f16).
__device__ __forceinline__ float times_pow2(float v, int e) {
  return v * pow2(e / 2) * pow2(e - e / 2);
}

// The 64-byte units (unit_vec 16-byte vectors each: 4, or 32 for the
// diagonal mma variant) that a row of K int8 spans, the last one partial.
__host__ __device__ inline int mma_units(int64_t K, int unit_vec) {
  return static_cast<int>((K / 16 + unit_vec - 1) / unit_vec);
}
// The tile kernel's row stride in shared memory: its units, plus 64 bytes
// so that rows g and g + 1 fall into the two halves of the banks.
__host__ __device__ inline int tile_row_stride(int units) { return units * 64 + 64; }

// Four int8 (a word) -> two f16x2: bytes 0, 1 and bytes 2, 3.
__device__ __forceinline__ void int8x4_to_f16x2(uint32_t w, uint32_t& lo, uint32_t& hi) {
  const uint32_t b = w ^ 0x80808080u;         // b + 128, unsigned
  lo = __byte_perm(b, 0x64646464u, 0x4140u);  // 0x64bb: 1024 + byte
  hi = __byte_perm(b, 0x64646464u, 0x4342u);
  asm("sub.f16x2 %0, %0, %1;" : "+r"(lo) : "r"(0x64806480u));  // - 1152
  asm("sub.f16x2 %0, %0, %1;" : "+r"(hi) : "r"(0x64806480u));
}

__device__ __forceinline__ void mma_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                          uint32_t a3, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  __trap();  // launched only on compute capability 8.0+ (launch_impl)
#endif
}

// Two bf16 (a word) times 2^e1·2^e2 (exact) -> f16x2 (round to nearest).
__device__ __forceinline__ uint32_t bf16x2_to_f16x2(uint32_t u, float f1, float f2) {
  const __half2 h = __floats2half2_rn(bf16_lo(u) * f1 * f2, bf16_hi(u) * f1 * f2);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// The largest of m and the magnitudes of 8 bf16 (an int4).
__device__ __forceinline__ float max_abs_bf16x8(const int4& v, float m) {
  const uint32_t u[4] = {uint32_t(v.x), uint32_t(v.y), uint32_t(v.z), uint32_t(v.w)};
#pragma unroll
  for (int j = 0; j < 4; ++j) m = fmaxf(m, fmaxf(fabsf(bf16_lo(u[j])), fabsf(bf16_hi(u[j]))));
  return m;
}

// 8 bf16 (an int4) times 2^e1·2^e2 (exact) -> 8 f16 (an int4, round to nearest).
__device__ __forceinline__ int4 bf16x8_to_f16x8(const int4& v, float f1, float f2) {
  return make_int4(
      int(bf16x2_to_f16x2(uint32_t(v.x), f1, f2)), int(bf16x2_to_f16x2(uint32_t(v.y), f1, f2)),
      int(bf16x2_to_f16x2(uint32_t(v.z), f1, f2)), int(bf16x2_to_f16x2(uint32_t(v.w), f1, f2)));
}

// The power of two e that x is staged in f16 with, from m = max|x|: the
// largest magnitude lands in [2^14, 2^15). 0 for x all zero, or with an
// infinity (which then stays one).
__device__ __forceinline__ int x_exponent(float m) {
  int e = 0;
  if (m > 0.f && m <= 3.4028235e38f) {
    int p;
    frexpf(m, &p);  // m in [2^(p-1), 2^p)
    e = 15 - p;     // in [-113, 147] for bf16: each half within a float's exponent
  }
  return e;
}

// x (K bf16) -> f16 in xs (spad int4 of them, zero past K), scaled by 2^e,
// e chosen so that the largest magnitude lands in [2^14, 2^15); returns e.
// The whole block calls it (two barriers); s_max: one float per warp.
// Up to kXr vectors per thread are held in registers between the two
// passes; a longer x is read again (from L1).
__device__ int stage_x_f16(const bf16* x, int K, int spad, int4* xs, float* s_max) {
  constexpr int kXr = 4;
  const int4* x4 = reinterpret_cast<const int4*>(x);
  const int xvec = K / 8;  // int4 of x (8 bf16); spad: int4 of the f16 copy (>= xvec)
  const int bd = blockDim.x, lane = threadIdx.x & 31, warps = bd >> 5;
  float m = 0.f;
  int4 xr[kXr];
#pragma unroll
  for (int j = 0; j < kXr; ++j) {
    const int i = threadIdx.x + j * bd;
    xr[j] = i < xvec ? load16<kCoherent>(x4 + i) : make_int4(0, 0, 0, 0);
  }
  for (int i = threadIdx.x + kXr * bd; i < xvec; i += bd)
    m = max_abs_bf16x8(load16<kCoherent>(x4 + i), m);
#pragma unroll
  for (int j = 0; j < kXr; ++j) m = max_abs_bf16x8(xr[j], m);
  m = warp_max(m);
  if (lane == 0) s_max[threadIdx.x >> 5] = m;
  __syncthreads();
  m = s_max[0];
  for (int i = 1; i < warps; ++i) m = fmaxf(m, s_max[i]);
  const int e = x_exponent(m);
  const float up1 = pow2(e / 2), up2 = pow2(e - e / 2);
#pragma unroll
  for (int j = 0; j < kXr; ++j) {
    const int i = threadIdx.x + j * bd;
    if (i < spad) xs[i] = bf16x8_to_f16x8(xr[j], up1, up2);  // zero past K
  }
  for (int i = threadIdx.x + kXr * bd; i < spad; i += bd)
    xs[i] = i < xvec ? bf16x8_to_f16x8(load16<kCoherent>(x4 + i), up1, up2) : make_int4(0, 0, 0, 0);
  __syncthreads();
  return e;
}

// One 64-byte unit of a 16-row tile: lane (g, t)'s 16 bytes of rows g (va)
// and g + 8 (vb), and x at the same k (xw: its 16 f16, in pairs), into the
// two MMA chains c0 / c1. The second form reads x from xp (lane t's two
// int4 of f16, in shared memory).
__device__ __forceinline__ void mma_unit(const int4& va, const int4& vb, const uint32_t (&xw)[8],
                                         float (&c0)[4], float (&c1)[4]) {
  const uint32_t A[4] = {uint32_t(va.x), uint32_t(va.y), uint32_t(va.z), uint32_t(va.w)};
  const uint32_t B[4] = {uint32_t(vb.x), uint32_t(vb.y), uint32_t(vb.z), uint32_t(vb.w)};
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    uint32_t alo, ahi, blo, bhi;
    int8x4_to_f16x2(A[q], alo, ahi);
    int8x4_to_f16x2(B[q], blo, bhi);
    mma_16816(q & 1 ? c1 : c0, alo, blo, ahi, bhi, xw[2 * q], xw[2 * q + 1]);
  }
}
__device__ __forceinline__ void mma_unit(const int4& va, const int4& vb, const int4* xp,
                                         float (&c0)[4], float (&c1)[4]) {
  const int4 x0 = xp[0], x1 = xp[1];
  const uint32_t xw[8] = {uint32_t(x0.x), uint32_t(x0.y), uint32_t(x0.z), uint32_t(x0.w),
                          uint32_t(x1.x), uint32_t(x1.y), uint32_t(x1.z), uint32_t(x1.w)};
  mma_unit(va, vb, xw, c0, c1);
}

// The diagonal variant's dot products of rows A and B (mma_unit's chains
// c0, c1 over a warp's units), in every lane: C[g][g] and C[8 + g][g] sit
// in lane (g, g / 2), element g % 2 (and 2 + g % 2).
__device__ __forceinline__ void diag_sums(const float (&c0)[4], const float (&c1)[4], int g, int t,
                                          float& sumA, float& sumB) {
  const bool diag = t == (g >> 1), odd = g & 1;
  sumA = warp_sum(diag ? (odd ? c0[1] + c1[1] : c0[0] + c1[0]) : 0.f);
  sumB = warp_sum(diag ? (odd ? c0[3] + c1[3] : c0[2] + c1[2]) : 0.f);
}

// DIAG (Config::mma_diag): a warp group owns 2 rows, not 16. Lane (g, t)
// loads bytes 64g + 16t of each 512-byte unit of both rows, so a warp-wide
// load reads 512 contiguous bytes of a row (as the general kernel), and
// the MMA's row m is segment m of a row (m < 8: the first row, m >= 8: the
// second) against column n = x's segment n: the diagonal C[m][m] (and
// C[8 + m][m]) holds segment m's dot product, the rest is discarded; the
// diagonal lanes' values are then summed across the warp.
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
  const int64_t block_id = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  if (a.trace && threadIdx.x == 0) a.trace[2 * block_id] = global_ns();
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
  if (a.trace && threadIdx.x == 0) a.trace[2 * block_id + 1] = global_ns();
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

// The bulk-copy GEMV (Config::bulk_stages, compute capability 9.0+): a
// grid of a few blocks per SM. A producer warp streams rows (of all
// selected experts: row g = s·N + n) into a ring of `stages` row-sized
// buffers in shared memory with cp.async.bulk (the TMA engine, completing
// on the buffer's `full` mbarrier), so the bytes in flight are the ring's
// and cost no registers. Which rows a block takes (Config::bulk_rows): a
// contiguous share, every gridDim-th row, or (dynamic) the next row of a
// counter shared by the grid, so that a block on an SM that streams faster
// takes more rows and every SM streams to the end.
// WARPS consumer warps: lane t owns vectors t + j·32·WARPS (j < J) of every
// row and holds its x as floats in registers for the whole kernel; per row
// it waits for the buffer, dots, and its warp's sum goes to shared memory
// before the warp arrives on the buffer's `empty` mbarrier. Consumers never
// wait for each other. A buffer holds 1 or 2 rows (`rows_per_buffer`); the
// scale and residual of each are copied into shared memory (cp.async) when
// the buffer is requested; once every consumer is done with the buffer,
// the producer warp adds the warps' sums, lane r·WARPS writes row r's y,
// and the buffer is refilled. An expert id outside [0, E): its
// rows are never copied (the buffer's `full` barrier is arrived on instead)
// and are written as NaN. The end: a buffer whose `full` phase carries no
// row (`last` set).
constexpr int kBulkSlots = 1024;  // dynamic row counters, one per launch in flight (round robin)
__device__ unsigned int g_bulk_counters[kBulkSlots]
                                       [2];  // next unit, tickets; zero between launches

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT;\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

//
// MMA (Config::bulk_mma; int8, 2 rows per buffer): the consumers multiply
// on the tensor cores as the mma kernel's diagonal variant does: lane
// (g, t)'s vector of row 0 and the same vector of row 1 make one unit
// (mma_unit), against x held in registers as f16 scaled by 2^e (e from
// max|x|, which the consumer warps agree on through shared memory).
template <bool INT8, int WARPS, int J, int STAGES, bool MMA = false>
__global__ void __launch_bounds__(32 * (WARPS + 1)) gemv_bulk_kernel(const KernelArgs a) {
  static_assert(!MMA || INT8, "the tensor-core consumers take int8 weights");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Wt = typename Traits<INT8>::W;
  constexpr int kVec = Traits<INT8>::kVec;
  constexpr int kConsumers = 32 * WARPS;  // threads; warp WARPS is the producer
  constexpr int kMaxRs =
      32 / WARPS < 2 ? 32 / WARPS : 2;  // rows per buffer the producer warp reduces
  extern __shared__ __align__(128) unsigned char ring[];  // STAGES × rs × row bytes
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  __shared__ float red[STAGES][kMaxRs][WARPS];
  __shared__ int last[STAGES];                 // the buffer's phase carries no rows: the end
  __shared__ uint32_t epi[STAGES][kMaxRs][3];  // scale and residual pairs, their halves (producer)
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t N = a.N, K = a.K, total = int64_t(a.n_sel) * N;
  const int rs = a.rows_per_buffer;  // 1 or 2 (<= kMaxRs); 2: N even in a gather
  const int64_t units = (total + rs - 1) / rs;
  const uint32_t row_bytes = static_cast<uint32_t>(K * sizeof(Wt));
  const uint32_t buf_bytes = row_bytes * rs;
  if (a.trace && tid == kConsumers) a.trace[2 * blockIdx.x] = global_ns();

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&full[s])) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(&empty[s])), "r"(WARPS)
                   : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::
                     : "memory");
  }
  __syncthreads();

  // A consumer warp's walk round the ring: per buffer in order, wait for
  // it to fill; stop at the end, else consume(s, the buffer), which
  // arrives on empty[s] when done with it.
  auto for_each_buffer = [&](auto&& consume) {
    for (int base = 0;; base += STAGES) {
      bool end = false;
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        if (!end) {
          mbar_wait(smem_u32(&full[s]), (base / STAGES) & 1);
          end = last[s];
          if (!end)
            consume(s, reinterpret_cast<const int4*>(ring + static_cast<size_t>(s) * buf_bytes));
        }
      }
      if (end) break;
    }
  };

  if (warp == WARPS) {  // the producer
    // Nothing the producer reads from global memory is waited for when it
    // is requested: the counter's next unit is requested one trip round the
    // ring before it is used, in the buffer's own register (the stage loop
    // is unrolled); scales and residuals go to shared memory (operands).
    const Wt* W = static_cast<const Wt*>(a.W);
    unsigned int* counter = a.counter;
    const int64_t G = gridDim.x;
    const int64_t share_begin = units * blockIdx.x / G, share_end = units * (blockIdx.x + 1) / G;
    int64_t unit[STAGES];       // the unit in buffer s (rows unit·rs ..), -1: none
    int it[STAGES];             // its index among the block's units (the mbarrier phase)
    unsigned int next[STAGES];  // dynamic: the counter value for buffer s's next unit
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      unit[s] = -1;
      it[s] = 0;
      next[s] = 0;
    }
    // Dynamic: the first STAGES units of each block are fixed (block b takes
    // units b·STAGES + s); counter value c is unit G·STAGES + c.
    auto unit_of = [&](int i, unsigned int c) -> int64_t {
      int64_t u;
      if (counter)
        u = i < STAGES ? blockIdx.x * int64_t(STAGES) + i : G * STAGES + c;
      else if (a.bulk_rows == 0)
        u = share_begin + i < share_end ? share_begin + i : units;
      else
        u = blockIdx.x + int64_t(i) * G;
      return u < units ? u : -1;
    };
    // The expert of unit u's rows (one read per unit, by lane 0, for the
    // whole warp; every row of a unit has the same one): 0 for a gemv, -1
    // past the end or for an id outside [0, E).
    auto unit_expert = [&](int64_t u) -> int64_t {
      if (u < 0) return -1;
      if (!a.experts) return 0;
      int e = lane == 0 ? a.experts[u * rs / N] : 0;
      e = __shfl_sync(0xffffffffu, e, 0);
      return e >= 0 && e < a.E ? e : -1;
    };
    // Lane 0: unit u into buffer s (u < 0: the end). A unit's rows are
    // consecutive rows of one expert (a gather's N is a multiple of rs).
    auto request = [&](int s, int64_t u, int64_t e) {  // e: unit_expert(u)
      if (lane != 0) return;
      const uint32_t bar = smem_u32(&full[s]);
      last[s] = u < 0;
      const int64_t g = u * rs;
      if (e < 0) {  // nothing to read: complete the buffer's phase without bytes
        mbar_arrive(bar);
        return;
      }
      const uint32_t bytes = row_bytes * static_cast<uint32_t>(g + rs <= total ? rs : total - g);
      const Wt* src = W + (a.experts ? e * N + g % N : g) * K;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                   : "memory");
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
          "[%3];" ::"r"(smem_u32(ring + static_cast<size_t>(s) * buf_bytes)),
          "l"(src), "r"(bytes), "r"(bar)
          : "memory");
    };
    // Buffer s's rows, once every consumer is done with them: lane r·WARPS
    // + w holds warp w's sum of row r; segments of WARPS lanes add up.
    // The epilogue operands of buffer s's row r (lane r·WARPS writes that
    // row): its scale and residual, each as the aligned bf16 pair holding
    // it, copied into shared memory with cp.async (one commit group per
    // buffer, waited for at finish(s), STAGES - 1 groups later), so that no
    // register waits on them: a warp tracks only a few loads in flight, and
    // scale loads into registers stalled the int8 ring (docs/notes/gemv.md).
    auto epilogue_pair = [&](uint32_t* dst, const bf16* base, int64_t idx, int64_t count) {
      const int64_t even = idx & ~int64_t(1);
      if (even + 1 < count) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_u32(dst)),
                     "l"(base + even)
                     : "memory");
      } else {  // the last element of an odd count: one plain load (once per kernel at most)
        const uint32_t v = reinterpret_cast<const unsigned short*>(base)[idx];
        *dst = v | (v << 16);
      }
    };
    // Buffer s's scales and residuals, used at finish(s); e: unit_expert(u).
    auto operands = [&](int s, int64_t u, int64_t e) {
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) {
        const int64_t g = u * rs + r;
        if (r < rs && lane == r * WARPS && g < total) {
          const int64_t sidx = a.experts ? e * N + g % N : g;
          epi[s][r][2] = static_cast<uint32_t>((sidx & 1) | ((g & 1) << 1));  // which halves
          if (e < 0)
            epi[s][r][0] = 0x7fc07fc0u;  // NaN rows
          else if (a.scale)
            epilogue_pair(&epi[s][r][0], a.scale, sidx, a.experts ? a.E * N : N);
          else
            epi[s][r][0] = 0x3f803f80u;  // 1
          if (a.residual)
            epilogue_pair(&epi[s][r][1], a.residual, g, N);  // gemv only: g < N
          else
            epi[s][r][1] = 0u;
        }
      }
      asm volatile("cp.async.commit_group;" ::: "memory");
    };
    auto finish = [&](int s, bool drain) {
      mbar_wait(smem_u32(&empty[s]), (it[s] / STAGES) & 1);
      if (drain)
        asm volatile("cp.async.wait_group 0;" ::: "memory");
      else
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");
      const int r_lane = lane / WARPS;
      float v = r_lane < rs ? red[s][r_lane][lane % WARPS] : 0.f;
#pragma unroll
      for (int o = WARPS / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) {
        const int64_t g = unit[s] * rs + r;
        if (r < rs && lane == r * WARPS && g < total) {
          const uint32_t sp = epi[s][r][0], rp = epi[s][r][1], odd = epi[s][r][2];
          const float sc = __uint_as_float((odd & 1) ? sp & 0xffff0000u : sp << 16);
          const float rv = __uint_as_float((odd & 2) ? rp & 0xffff0000u : rp << 16);
          a.y[g] = __float2bfloat16_rn(v * sc + rv);
        }
      }
      unit[s] = -1;
    };
    // Weights never change: the first units are requested before waiting for
    // the previous grid, except in a gather, whose ids that grid may write.
    if (a.experts) wait_for_previous_grid();
    bool done = false;
    int64_t expert[STAGES];  // unit_expert(unit[s])
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      expert[s] = -1;
      if (!done) {
        const int64_t u = unit_of(s, 0);
        if (counter && u >= 0 && lane == 0) next[s] = atomicAdd(counter, 1u);
        unit[s] = u;
        it[s] = s;
        expert[s] = unit_expert(u);
        request(s, u, expert[s]);
        done = u < 0;
      }
    }
    if (!a.experts) wait_for_previous_grid();
#pragma unroll
    for (int s = 0; s < STAGES; ++s)
      if (unit[s] >= 0) operands(s, unit[s], expert[s]);
    for (int base = STAGES; !done; base += STAGES) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        if (!done) {
          finish(s, false);  // frees buffer s
          const int64_t u = unit_of(base + s, __shfl_sync(0xffffffffu, next[s], 0));
          if (counter && u >= 0 && lane == 0) next[s] = atomicAdd(counter, 1u);
          unit[s] = u;
          it[s] = base + s;
          const int64_t e = unit_expert(u);
          if (u >= 0) operands(s, u, e);
          request(s, u, e);
          done = u < 0;
        }
      }
    }
    // The block takes no more units: once every counter value it asked for
    // has come back (each atomic performed; `and` reads them all), it takes
    // a ticket. The block with the last ticket resets the counter for the
    // next launch at its end, every block's atomics on it being done by
    // then; the ticket is back long before that, so no block's end waits on
    // a round trip to memory.
    unsigned int ticket = 0;
    if (counter && lane == 0) {
      unsigned int all = 0, zero;
#pragma unroll
      for (int s = 0; s < STAGES; ++s) all |= next[s];
      asm volatile("and.b32 %0, %1, 0;" : "=r"(zero) : "r"(all));
      ticket = atomicAdd(counter + 1, 1u + zero);
    }
#pragma unroll
    for (int s = 0; s < STAGES; ++s)
      if (unit[s] >= 0) finish(s, true);
    if (counter && lane == 0 && ticket == gridDim.x - 1) {
      counter[0] = 0u;
      counter[1] = 0u;
    }
  } else if constexpr (MMA) {  // the tensor-core consumers
    __shared__ float x_max[WARPS];
    wait_for_previous_grid();  // x may be the previous grid's output
    int4 xr[J][2];             // x at the lane's vectors: 16 bf16 each
    float m = 0.f;
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        xr[j][h] =
            load16<kCoherent>(reinterpret_cast<const int4*>(a.x) + 2 * (tid + j * kConsumers) + h);
        m = max_abs_bf16x8(xr[j][h], m);
      }
    m = warp_max(m);
    if (lane == 0) x_max[warp] = m;
    asm volatile("bar.sync 1, %0;" ::"n"(kConsumers) : "memory");  // the consumer warps only
#pragma unroll
    for (int w = 0; w < WARPS; ++w) m = fmaxf(m, x_max[w]);
    const int e = x_exponent(m);
    const float up1 = pow2(e / 2), up2 = pow2(e - e / 2);
    uint32_t xh[J][8];
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int4 f = bf16x8_to_f16x8(xr[j][h], up1, up2);
        xh[j][4 * h + 0] = uint32_t(f.x);
        xh[j][4 * h + 1] = uint32_t(f.y);
        xh[j][4 * h + 2] = uint32_t(f.z);
        xh[j][4 * h + 3] = uint32_t(f.w);
      }
    const int g = lane >> 2, t = lane & 3;
    const int row_vecs = static_cast<int>(row_bytes / 16);
    for_each_buffer([&](int s, const int4* buf) {
      // Rows 0 and 1 of the buffer (a short last unit: row 1 is stale,
      // finite as any int8, and never written out).
      float c0[4] = {0.f, 0.f, 0.f, 0.f}, c1[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int j = 0; j < J; ++j)
        mma_unit(buf[tid + j * kConsumers], buf[row_vecs + tid + j * kConsumers], xh[j], c0, c1);
      float sumA, sumB;
      diag_sums(c0, c1, g, t, sumA, sumB);
      if (lane == 0) {
        red[s][0][warp] = times_pow2(sumA, -e);
        red[s][1][warp] = times_pow2(sumB, -e);
        mbar_arrive(smem_u32(&empty[s]));  // release: the sums and the reads of buffer s
      }
    });
  } else {                     // the consumers
    wait_for_previous_grid();  // x may be the previous grid's output
    float xf[J][kVec];
#pragma unroll
    for (int j = 0; j < J; ++j)
      load_x<INT8>(reinterpret_cast<const int4*>(a.x), tid + j * kConsumers, xf[j]);
    const int row_vecs = static_cast<int>(row_bytes / 16);
    for_each_buffer([&](int s, const int4* buf) {
      // The rows of the buffer (a short last unit: the rest is stale
      // and never written out).
      float acc[kMaxRs][4];
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) {
        acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
        if (r < rs) {
#pragma unroll
          for (int j = 0; j < J; ++j)
            dot<INT8>(buf[r * row_vecs + tid + j * kConsumers], xf[j], acc[r]);
        }
      }
      float sum[kMaxRs];
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) sum[r] = (acc[r][0] + acc[r][1]) + (acc[r][2] + acc[r][3]);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int r = 0; r < kMaxRs; ++r) sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], o);
      if (lane == 0) {
#pragma unroll
        for (int r = 0; r < kMaxRs; ++r) red[s][r][warp] = sum[r];
        mbar_arrive(smem_u32(&empty[s]));  // release: the sums and the reads of buffer s
      }
    });
  }
  let_next_grid_launch();
  if (a.trace && tid == kConsumers) a.trace[2 * blockIdx.x + 1] = global_ns();
#else
  __trap();  // launched only on compute capability 9.0+ (launch_impl)
#endif
}

// The whole-tile int8 GEMV (Config::tile, compute capability 9.0+): a block
// per tile of 16 rows. Lanes 0-15 of warp 0 copy the tile's rows into
// shared memory with one cp.async.bulk each (the TMA engine; rows 64 bytes
// apart beyond their length so that the MMA's loads meet no bank conflict),
// all on one mbarrier, first thing; meanwhile the block stages x as f16
// (stage_x_f16) and reads the scales and residuals. Then warp w multiplies
// units w, w + WARPS, ... of the tile (mma_unit, from shared memory), the
// warps' sums meet in shared memory, and threads 0-15 write the 16 rows.
// Nothing is pipelined within a block: a GPU holds 2-3 tiles of rows up to
// 4 KB per SM, so at a 4096-row GEMV every byte of the matrix is requested
// within the first microsecond, and the blocks co-resident on an SM overlap
// each other's copies and arithmetic at larger N. For int8 rows of at most
// 8192 bytes (Config::tile); a gather's blocks read their expert id first.
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
  const int64_t block_id = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  if (a.trace && tid == 0) a.trace[2 * block_id] = global_ns();
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
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::
                     : "memory");
  }
  __syncthreads();
  if (warp == 0) {  // rows past N: the last row again (its sums are never written)
    if (lane == 0)
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(16 * K)
                   : "memory");
    __syncwarp();
    if (lane < 16)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
          "[%3];" ::"r"(smem_u32(wt + lane * stride)),
          "l"(W + static_cast<int64_t>(min(row0 + lane, N - 1)) * K), "r"(K), "r"(bar)
          : "memory");
  }
  float sc = 1.f, res = 0.f;
  if (writer) sc = __bfloat162float(scale[row0 + tid]);
  if (!a.experts) wait_for_previous_grid();
  if (writer && a.residual) res = __bfloat162float(a.residual[row0 + tid]);
  const int e = stage_x_f16(a.x, K, units * 8, xs, s_max);  // every warp: two barriers
  mbar_wait(bar, 0);
  let_next_grid_launch();
  if (a.trace && tid == 0) a.trace[2 * block_id + 1] = global_ns();
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

// Lets `kernel` use `smem` bytes of dynamic shared memory: one
// cudaFuncSetAttribute per kernel, device and larger size (not one per
// launch). The attribute lives as long as the device's context.
void allow_smem(void (*kernel)(KernelArgs), size_t smem) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, size_t> allowed;
  int dev = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mutex);
  size_t& have = allowed[{reinterpret_cast<const void*>(kernel), dev}];
  if (smem <= have) return;  // (static shared memory counts too: set it for any size)
  KB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem)));
  have = smem;
}

template <bool INT8, int WARPS, int J, bool MMA>
void launch_bulk_stages(int stages, bool pdl, dim3 grid, size_t smem, cudaStream_t s,
                        const KernelArgs& a) {
  auto go = [&](auto kernel) {
    allow_smem(kernel, smem);
    launch_maybe_pdl_smem(pdl, kernel, grid, dim3(32 * (WARPS + 1)), smem, s, a);
  };
  switch (stages) {
    case 3:
      return go(gemv_bulk_kernel<INT8, WARPS, J, 3, MMA>);
    case 4:
      return go(gemv_bulk_kernel<INT8, WARPS, J, 4, MMA>);
    case 6:
      return go(gemv_bulk_kernel<INT8, WARPS, J, 6, MMA>);
  }
  throw std::invalid_argument("gemv: the bulk kernel has rings of 3, 4 or 6 buffers");
}

template <bool INT8, int WARPS, bool MMA = false>
void launch_bulk_j(int J, bool pdl, dim3 grid, size_t smem, cudaStream_t s, const KernelArgs& a) {
  switch (J) {
    case 1:
      return launch_bulk_stages<INT8, WARPS, 1, MMA>(a.stages, pdl, grid, smem, s, a);
    case 2:
      return launch_bulk_stages<INT8, WARPS, 2, MMA>(a.stages, pdl, grid, smem, s, a);
    case 4:
      return launch_bulk_stages<INT8, WARPS, 4, MMA>(a.stages, pdl, grid, smem, s, a);
  }
  throw std::invalid_argument("gemv: the bulk kernel needs K of 1, 2 or 4 vectors per thread");
}

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

// The tensor-core int8 kernel, U units per batch (shared memory over the
// default 48 KB, K > 24576: allow_smem).
void launch_mma(int U, int depth, bool diag, bool pdl, dim3 grid, dim3 block, size_t smem,
                cudaStream_t s, const KernelArgs& a) {
  auto go = [&](auto kernel) {
    allow_smem(kernel, smem);
    launch_maybe_pdl_smem(pdl, kernel, grid, block, smem, s, a);
  };
  switch (U) {
    case 1:
      if (diag) return go(gemv_mma_kernel<1, 2, true>);
      return depth == 3 ? go(gemv_mma_kernel<1, 3, false>) : go(gemv_mma_kernel<1, 2, false>);
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
  throw std::invalid_argument("gemv: unroll must be 1, 2, 4 or 8");
}

// The one-load kernel for a row of 32·ks vectors, in blocks of WARPS warps.
template <bool INT8, int WARPS>
void launch_one_load(int ks, bool pdl, dim3 grid, cudaStream_t s, const KernelArgs& a) {
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

// Launches one instantiation; with `pdl`, as a programmatic dependent of
// the previous work on the stream (captured into graphs as such an edge).
template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false>
void launch_kernel(const Config& c, dim3 grid, dim3 block, cudaStream_t s, const KernelArgs& a) {
  launch_maybe_pdl(c.pdl, gemv_kernel<INT8, R, U, P, T, S, C>, grid, block, s, a);
}

// gather_gemv_combine: 1 or 2 rows per warp, batches of 1 or 2 loads, pipelined or not.
template <bool INT8, int R>
void combine_by_unroll(const Config& c, dim3 grid, dim3 block, cudaStream_t s,
                       const KernelArgs& a) {
  if (c.unroll == 1)
    return c.pipeline ? launch_kernel<INT8, R, 1, true, 1, false, true>(c, grid, block, s, a)
                      : launch_kernel<INT8, R, 1, false, 1, false, true>(c, grid, block, s, a);
  if (c.unroll == 2)
    return c.pipeline ? launch_kernel<INT8, R, 2, true, 1, false, true>(c, grid, block, s, a)
                      : launch_kernel<INT8, R, 2, false, 1, false, true>(c, grid, block, s, a);
  throw std::invalid_argument("gather_gemv_combine: unroll must be 1 or 2");
}

template <bool INT8, int R, bool P>
void by_unroll(const Config& c, dim3 grid, dim3 block, cudaStream_t s, const KernelArgs& a) {
  switch (c.unroll) {
    case 1:
      return launch_kernel<INT8, R, 1, P, 1>(c, grid, block, s, a);
    case 2:
      return launch_kernel<INT8, R, 2, P, 1>(c, grid, block, s, a);
    case 4:
      return launch_kernel<INT8, R, 4, P, 1>(c, grid, block, s, a);
    case 8:
      return launch_kernel<INT8, R, 8, P, 1>(c, grid, block, s, a);
  }
  throw std::invalid_argument("gemv: unroll must be 1, 2, 4 or 8");
}

template <bool INT8, int R>
void by_pipeline(const Config& c, dim3 grid, dim3 block, cudaStream_t s, const KernelArgs& a) {
  if (c.pipeline)
    by_unroll<INT8, R, true>(c, grid, block, s, a);
  else
    by_unroll<INT8, R, false>(c, grid, block, s, a);
}

// Several tokens: 1 or 2 rows per warp, U2 or U4, pipelined, up to
// kMaxTokens tokens; SwiGLU: 2 rows per warp; one token: every configuration.
template <bool INT8>
void dispatch(const Config& c, dim3 grid, dim3 block, cudaStream_t s, const KernelArgs& a,
              bool swiglu) {
  if (a.weights) {
    if (c.rows_per_warp == 1) return combine_by_unroll<INT8, 1>(c, grid, block, s, a);
    if (c.rows_per_warp == 2) return combine_by_unroll<INT8, 2>(c, grid, block, s, a);
    throw std::invalid_argument("gather_gemv_combine: rows_per_warp must be 1 or 2");
  }
  const bool u24 = c.unroll == 2 || c.unroll == 4;
  if (swiglu) {
    if (c.rows_per_warp != 2 || !u24 || !c.pipeline)
      throw std::invalid_argument("gemv_swiglu: needs rows_per_warp 2, unroll 2 or 4, pipelined");
    if (a.tokens == 1) return launch_kernel<INT8, 2, 2, true, 1, true>(c, grid, block, s, a);
    if (c.unroll == 2)
      return launch_kernel<INT8, 2, 2, true, kMaxTokens, true>(c, grid, block, s, a);
    return launch_kernel<INT8, 2, 4, true, kMaxTokens, true>(c, grid, block, s, a);
  }
  if (a.tokens > 1) {
    if ((c.rows_per_warp != 1 && c.rows_per_warp != 2) || !u24 || !c.pipeline)
      throw std::invalid_argument(
          "gemv: several tokens need rows_per_warp 1 or 2, unroll 2 or 4, pipelined");
    if (c.rows_per_warp == 1 && c.unroll == 2)
      return launch_kernel<INT8, 1, 2, true, kMaxTokens>(c, grid, block, s, a);
    if (c.rows_per_warp == 1)
      return launch_kernel<INT8, 1, 4, true, kMaxTokens>(c, grid, block, s, a);
    if (c.unroll == 2) return launch_kernel<INT8, 2, 2, true, kMaxTokens>(c, grid, block, s, a);
    return launch_kernel<INT8, 2, 4, true, kMaxTokens>(c, grid, block, s, a);
  }
  switch (c.rows_per_warp) {
    case 1:
      return by_pipeline<INT8, 1>(c, grid, block, s, a);
    case 2:
      return by_pipeline<INT8, 2>(c, grid, block, s, a);
    case 4:
      return by_pipeline<INT8, 4>(c, grid, block, s, a);
  }
  throw std::invalid_argument("gemv: rows_per_warp must be 1, 2 or 4");
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// An attribute of the current device, asked once per device (0 for a
// device index past the cache).
template <cudaDeviceAttr A>
int device_attribute() {
  static int value[64];
  static bool asked[64];
  int dev = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) return 0;
  if (!asked[dev]) {
    KB_CUDA_CHECK(cudaDeviceGetAttribute(&value[dev], A, dev));
    asked[dev] = true;
  }
  return value[dev];
}

// Programmatic dependent launch (and the bulk kernel) need compute capability 9.0.
bool device_has_pdl() { return device_attribute<cudaDevAttrComputeCapabilityMajor>() >= 9; }

int device_sm_count() { return std::max(1, device_attribute<cudaDevAttrMultiProcessorCount>()); }

// The bulk kernel's rows per buffer: the configured count, or (0) two rows
// while a buffer stays within 32 KB and a gather's experts split evenly.
int bulk_rows_per_buffer(const Config& c, bool int8, int64_t N, int64_t K, bool gather) {
  if (c.bulk_rows_per_buffer != 0) return c.bulk_rows_per_buffer;
  return K * (int8 ? 1 : 2) <= (16 << 10) && (!gather || N % 2 == 0) ? 2 : 1;
}

std::string shape_text(int64_t N, int64_t K) {
  return "N=" + std::to_string(N) + ", K=" + std::to_string(K);
}

}  // namespace

int k_multiple_bf16() { return Traits<false>::kVec; }
int k_multiple_int8() { return Traits<true>::kVec; }

// Chosen with the hidden gemv_tune experiment on an H100 80GB HBM3
// (2026-11-22, docs/notes/gemv.md): software-pipelined batches of 2 loads
// per row (int8 2869 vs 2731 GB/s at 16384² against 4-8 loads unpipelined);
// 4 warps per block. K split over 4 warps of a block once K is long (bf16
// 16384²: 3063 vs 2913 GB/s; 1024x14336: 2111 vs 1382) and, for bf16, over
// 2-4 warps at K >= 8192 or N >= 16384 (4096x11008: 2589 vs 2466; 22016x4096:
// 2917 vs 2827). Elsewhere one warp per row for bf16: splitting cost up to
// 10% at 4096². int8 (second evening tune): batches of one load, two rows
// per warp and K split over 2 warps up to N = 16384 at K >= 4096 (4096²:
// 1662 vs 1531; 12288x4096: 2267 vs 2192; 4096x11008: 2287 vs 2230;
// 16384²: 2907 vs 2871; not 22016x4096: 2522 vs 2585), one row per warp and
// the same split for short rows (1024²: 226 vs 215).
Config general_config(bool int8, int64_t N, int64_t K, int n_sel) {
  Config c;
  c.warps_per_block = 4;
  c.unroll = 2;
  c.pipeline = true;
  c.rows_per_warp = 1;
  if (int8 && K >= 12288 && n_sel == 1) {
    // Long int8 rows (2026-11-23, four gemv_tune runs, GB/s): batches of 2
    // loads, not pipelined, 2 rows per warp, K over 4 warps (16384²:
    // 2920-2923 against 2898-2909; 14336x16384: 2887-2895 against
    // 2764-2832; 1024x14336: 1455-1464 against 1167-1190).
    c.rows_per_warp = 2;
    c.pipeline = false;
    c.k_split = 4;
  } else if (int8 && K >= 4096 && N <= 16384) {
    c.unroll = 1;
    c.rows_per_warp = 2;
    c.k_split = 2;
  } else if (int8 && K <= 2048 && N <= 2048) {
    c.unroll = 1;
    c.k_split = 2;
  } else if (K >= 12288) {
    c.k_split = 4;
  } else if (!int8 && N >= 12288 && K >= 4096) {  // 12288x4096: 2736 vs 2659; not 14336x1024
    c.k_split = 4;
  } else if (!int8 && (K >= 8192 || N <= 2048)) {  // few rows: 1024² 429 vs 409 GB/s
    c.k_split = 2;
  }
  // Up to 4 MB in all with rows of 32, 64 or 128 vectors: the one-load
  // kernel in blocks of 8 warps (the seed's D = 1024, H100, us: int8 4.29
  // against 4.64-4.74 for the general kernel, bf16 4.51-4.61 against
  // 5.14-5.28, gathers of 2 experts int8 4.70-4.77 against 5.31-5.41 and
  // bf16 5.25-5.44 against 5.63-5.76; blocks of 4 warps: 4.29-4.34,
  // 4.83-5.25, 4.99-5.02, 6.22-6.34).
  const int64_t vecs = K / (int8 ? k_multiple_int8() : k_multiple_bf16());
  if ((vecs == 32 || vecs == 64 || vecs == 128) &&
      n_sel * N * K * (int8 ? 1 : 2) <= (int64_t(4) << 20)) {
    c.one_load = true;
    c.warps_per_block = 8;
  }
  return c;
}

Config default_config(bool int8, int64_t N, int64_t K, int n_sel) {
  Config c = general_config(int8, N, K, n_sel);
  // The bulk-copy kernel (dynamic row counter) where it measured faster
  // (H100, 2026-11-23, gemv_tune and gemv_tune_seed, GB/s):
  //   - not bf16 rows of 32 KB, though alone they measured faster (16384²:
  //     3091-3096 against 3037-3040 with 16 consumer warps and a ring of 4
  //     rows; 14336x16384: 3065 against 3040): the MLP at one token and D =
  //     16384, whose up projection that is, measured 338 us against 319;
  //   - not int8 rows of 16 KB either: 2 blocks of 8 consumer warps per SM
  //     and a ring of 3 buffers of 2 rows measured 2914-2933 against
  //     2899-2909 at 16384² on the H100, but on an H200 a gather of 2
  //     experts at 16384² measured 3333 against 3890 without it;
  //   - bf16 rows of 8 KB up to 4096 rows: 3 blocks of 8 warps per SM, a
  //     ring of 3 buffers of 2 rows (4096²: 2543 against 2128; not at
  //     12288 or 22016 rows, where it measured 2631-2842 against 2696-2870,
  //     nor in gather_gemv at D = 4096: 2388 against 2427 in the suite).
  if (!int8 && K == 4096 && N <= 4096 && N >= 1024 && n_sel == 1) return bulk_config(3, 8, 3);
  // int8 rows of 16 KB, one matrix of 14336 rows or more: the bulk kernel
  // with tensor-core consumers, 2 blocks of 8 warps per SM, a ring of 3
  // buffers of 2 rows (H100, 2026-11-23, tools/gemv_profile, GB/s;
  // docs/notes/gemv.md): 16384² 2963-2975 against 2920-2926 for the
  // general kernel, 14336x16384 2938-2943 against 2895; not 4096x16384
  // (2408-2413 against 2422), nor rows of 4 or 8 KB (8192²: 2356-2433
  // against 2450-2461; 12288x4096: 1383-1804 against 2376 for the
  // diagonal mma kernel), nor gathers (not measured).
  if (int8 && n_sel == 1 && K == 16384 && N >= 14336) {
    Config b = bulk_config(3, 8, 2, 2, 2);
    b.bulk_mma = true;
    return b;
  }
  // int8 with rows of at most 4 KB (H100, 2026-11-23, gemv_tune and
  // gemv_tune_seed, GB/s; docs/notes/gemv.md):
  //   - up to 32 MB, beyond the one-load kernel's 4 MB: the whole-tile
  //     kernel in blocks of 4 warps (4096²: 1923-1927 against 1601-1611;
  //     14336x1024: 1751 against 1292); not gathers (D = 4096, 2 experts:
  //     1986-2011 against 2002-2013);
  //   - larger: the mma kernel's diagonal variant, 4 units per batch, 4
  //     warps per block, no K split (12288x4096: 2436 against 2323 for the
  //     16-row mma kernel and 2205 for the general one; 22016x4096: 2691
  //     against 2659 and 2579); not at long rows (16384²: 2878 against
  //     2925), where x's staging per block costs more than the
  //     instructions saved;
  //   - gathers at rows of 2-4 KB: the diagonal variant in blocks of 8
  //     warps (D = 4096, 2 experts: 2087 against 2019-2023).
  const int64_t bytes = N * K;
  if (int8 && n_sel == 1 && K <= 4096 && K >= 1024 && !c.one_load && bytes <= (int64_t(32) << 20)) {
    Config t;
    t.tile = true;
    t.warps_per_block = 4;
    return t;
  }
  const bool big = n_sel == 1 && N >= 8192 && K >= 1024;
  const bool gather = n_sel > 1 && !c.one_load && K >= 2048;
  if (int8 && K <= 4096 && (big || gather)) {
    Config m;
    m.mma = true;
    m.mma_diag = true;
    m.unroll = 4;
    m.warps_per_block = big ? 4 : 8;
    m.k_split = 1;
    return m;
  }
  return c;
}

Config bulk_config(int stages, int warps, int blocks_per_sm, int rows, int rows_per_buffer) {
  Config c;
  c.bulk_stages = stages;
  c.warps_per_block = warps;
  c.bulk_blocks_per_sm = blocks_per_sm;
  c.bulk_rows = rows;
  c.bulk_rows_per_buffer = rows_per_buffer;
  return c;
}

int64_t bulk_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel, bool gather) {
  const int rs = bulk_rows_per_buffer(cfg, int8, N, K, gather);
  const int64_t units = (n_sel * N + rs - 1) / rs;
  return std::min<int64_t>(int64_t(device_sm_count()) * cfg.bulk_blocks_per_sm, units);
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What runs where the device lacks the kernel cfg names (bulk and tile:
// compute capability 9.0, mma: 8.0): general_config's choice, with cfg's
// pdl and trace.
Config general_fallback(const Config& cfg, bool int8, int64_t N, int64_t K, int n_sel) {
  Config g = general_config(int8, N, K, n_sel);
  g.pdl = cfg.pdl;
  g.trace = cfg.trace;
  return g;
}

// grid.x of a launch of c per selected expert, for every kernel but the
// bulk one (bulk_blocks): the one-load kernel's rows per block follow from
// K, the tensor-core kernels' from their 16-row tiles (2 rows: diagonal).
int64_t grid_x(bool int8, int64_t N, int64_t K, const Config& c, bool swiglu) {
  if (c.tile) return ceil_div(N, 16);
  if (c.mma) return ceil_div(ceil_div(N, c.mma_diag ? 2 : 16), c.warps_per_block / c.k_split);
  if (c.one_load) {
    const int64_t ks =
        std::max<int64_t>(1, K / (int8 ? k_multiple_int8() : k_multiple_bf16()) / 32);
    return ceil_div(N, (c.warps_per_block == 8 ? 8 : 4) / ks);
  }
  const int64_t groups = swiglu ? N / 2 : ceil_div(N, c.rows_per_warp);
  return ceil_div(groups, c.warps_per_block / c.k_split);
}

// What launch() checks and launches, plus the SwiGLU mode (gemv_swiglu).
// `weights` (gather_gemv_combine): the slots' weights; the general kernel only.
void launch_impl(bool int8, const void* W, const bf16* scale, const int32_t* experts, int n_sel,
                 int E, const bf16* x, bf16* y, int64_t N, int64_t K, const bf16* residual,
                 Config cfg, cudaStream_t stream, int tokens, bool swiglu, float eps,
                 const float* weights = nullptr) {
  const char* what = weights             ? "gather_gemv_combine"
                     : experts && swiglu ? "gather_gemv_swiglu"
                     : experts           ? "gather_gemv"
                     : swiglu            ? "gemv_swiglu"
                                         : "gemv";
  if (weights) {
    if (!experts || swiglu || tokens != 1)
      throw std::invalid_argument("gather_gemv_combine: needs expert ids, one token, no SwiGLU");
    if (n_sel < 1 || n_sel > kMaxCombine)
      throw std::invalid_argument("gather_gemv_combine: n_sel must be in [1, " +
                                  std::to_string(kMaxCombine) + "], got " + std::to_string(n_sel));
    if (cfg.bulk_stages > 0 || cfg.tile || cfg.mma || cfg.one_load)
      throw std::invalid_argument("gather_gemv_combine: the general kernel only");
  }
  if (tokens < 1 || tokens > kMaxTokens)
    throw std::invalid_argument(std::string(what) + ": tokens must be in [1, " +
                                std::to_string(kMaxTokens) + "], got " + std::to_string(tokens));
  if (experts && tokens != 1) throw std::invalid_argument(std::string(what) + ": one token");
  const int vec = int8 ? k_multiple_int8() : k_multiple_bf16();
  if (N <= 0 || K <= 0)
    throw std::invalid_argument(std::string(what) + ": N and K must be > 0 (" + shape_text(N, K) +
                                ")");
  if (K % vec != 0)
    throw std::invalid_argument(std::string(what) + ": K must be a multiple of " +
                                std::to_string(vec) + " for " + (int8 ? "int8" : "bf16") +
                                " weights (16-byte vectors), got " + shape_text(N, K));
  if (N > 0x7fffffffLL || K > 0x7fffffffLL)
    throw std::invalid_argument(std::string(what) + ": N and K must be < 2^31 (" +
                                shape_text(N, K) + ")");
  if (!W || !x || !y) throw std::invalid_argument(std::string(what) + ": null W, x or y");
  if (!aligned16(W) || !aligned16(x))
    throw std::invalid_argument(std::string(what) + ": W and x must be 16-byte aligned");
  if (int8 && !scale)
    throw std::invalid_argument(std::string(what) + ": int8 weights need a scale");
  if (experts) {
    if (E <= 0) throw std::invalid_argument("gather_gemv: E must be > 0, got " + std::to_string(E));
    if (n_sel <= 0 || n_sel > 65535)
      throw std::invalid_argument("gather_gemv: n_sel must be in [1, 65535], got " +
                                  std::to_string(n_sel));
    if (residual && !weights) throw std::invalid_argument(std::string(what) + ": no residual");
  } else {
    n_sel = 1;
  }
  if (cfg.bulk_stages > 0) {  // checked first (no CUDA call), then run on 9.0+ only
    const int64_t vecs = K / vec, threads = 32 * int64_t(cfg.warps_per_block);
    const int64_t J = vecs % threads == 0 ? vecs / threads : 0;
    const int64_t row_bytes = K * (int8 ? 1 : 2);
    const int rs = bulk_rows_per_buffer(cfg, int8, N, K, experts != nullptr);
    const size_t smem = static_cast<size_t>(cfg.bulk_stages) * rs * row_bytes;
    if (cfg.bulk_mma && (!int8 || rs != 2))
      throw std::invalid_argument(
          std::string(what) + ": bulk_mma needs int8 weights and 2 rows per buffer, got " +
          shape_text(N, K) + (int8 ? "" : " bf16") + ", " + std::to_string(rs) + " per buffer");
    if (tokens != 1 || swiglu || (cfg.warps_per_block != 8 && cfg.warps_per_block != 16) ||
        rs < 1 || rs > 2 || (rs == 2 && experts && N % 2 != 0) || (J != 1 && J != 2 && J != 4) ||
        (cfg.bulk_stages != 3 && cfg.bulk_stages != 4 && cfg.bulk_stages != 6) ||
        cfg.bulk_blocks_per_sm < 1 || cfg.bulk_blocks_per_sm > 4 || smem > (160u << 10) ||
        cfg.bulk_rows < 0 || cfg.bulk_rows > 2)
      throw std::invalid_argument(
          std::string(what) +
          ": bulk needs one token, no SwiGLU, 8 or 16 warps, K of 1, 2 or 4 "
          "vectors per thread, 3, 4 or 6 stages of at most 160 KB in all, 1 or 2 rows per buffer "
          "(a "
          "gather's N even for 2), 1-4 blocks per SM and rows 0-2, got " +
          shape_text(N, K) + ", " + std::to_string(cfg.warps_per_block) + " warps, " +
          std::to_string(cfg.bulk_stages) + " stages");
    if (!device_has_pdl())  // compute capability < 9.0
      return launch_impl(int8, W, scale, experts, n_sel, E, x, y, N, K, residual,
                         general_fallback(cfg, int8, N, K, n_sel), stream, tokens, swiglu, eps);
    const int64_t blocks = bulk_blocks(int8, N, K, cfg, n_sel, experts != nullptr);
    unsigned int* counter = nullptr;
    if (cfg.bulk_rows == 2) {
      static std::atomic<unsigned> launches{0};
      unsigned int* counters = nullptr;
      KB_CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&counters), g_bulk_counters));
      counter = counters + 2 * (launches.fetch_add(1) % kBulkSlots);
    }
    KernelArgs a{W,
                 scale,
                 experts,
                 E,
                 x,
                 y,
                 residual,
                 static_cast<int>(N),
                 static_cast<int>(K),
                 1,
                 1,
                 eps,
                 cfg.trace,
                 n_sel,
                 cfg.bulk_stages,
                 cfg.bulk_rows,
                 rs,
                 counter};
    const dim3 grid(static_cast<unsigned>(blocks));
    if (int8 && cfg.bulk_mma)
      return cfg.warps_per_block == 16
                 ? launch_bulk_j<true, 16, true>(int(J), cfg.pdl, grid, smem, stream, a)
                 : launch_bulk_j<true, 8, true>(int(J), cfg.pdl, grid, smem, stream, a);
    if (int8)
      return cfg.warps_per_block == 16
                 ? launch_bulk_j<true, 16>(int(J), cfg.pdl, grid, smem, stream, a)
                 : launch_bulk_j<true, 8>(int(J), cfg.pdl, grid, smem, stream, a);
    return cfg.warps_per_block == 16
               ? launch_bulk_j<false, 16>(int(J), cfg.pdl, grid, smem, stream, a)
               : launch_bulk_j<false, 8>(int(J), cfg.pdl, grid, smem, stream, a);
  }
  if (cfg.rows_per_warp != 1 && cfg.rows_per_warp != 2 && cfg.rows_per_warp != 4)
    throw std::invalid_argument("gemv: rows_per_warp must be 1, 2 or 4");
  if (cfg.unroll != 1 && cfg.unroll != 2 && cfg.unroll != 4 && cfg.unroll != 8)
    throw std::invalid_argument("gemv: unroll must be 1, 2, 4 or 8");
  if (cfg.warps_per_block < 1 || cfg.warps_per_block > 8)
    throw std::invalid_argument("gemv: warps_per_block must be in [1, 8]");
  if (cfg.k_split != 1 && cfg.k_split != 2 && cfg.k_split != 4 && cfg.k_split != 8)
    throw std::invalid_argument("gemv: k_split must be 1, 2, 4 or 8");
  if (cfg.warps_per_block % cfg.k_split != 0)
    throw std::invalid_argument("gemv: k_split must divide warps_per_block");
  if (swiglu && (N % 2 != 0 || residual))
    throw std::invalid_argument(std::string(what) + ": 2·F rows (gate | up), no residual");
  if (cfg.pdl && !device_has_pdl()) cfg.pdl = false;
  // What every kernel but the bulk one takes; a.ks is the K split (the
  // one-load kernel's follows from K, below).
  KernelArgs a{W,
               scale,
               experts,
               E,
               x,
               y,
               residual,
               static_cast<int>(N),
               static_cast<int>(K),
               cfg.k_split,
               tokens,
               eps,
               cfg.trace,
               n_sel,
               0,
               0,
               1,
               nullptr,
               weights};
  if (cfg.tile) {
    const int units = mma_units(K, 4);
    const size_t smem = static_cast<size_t>(16 * tile_row_stride(units) + units * 128);  // rows, x
    if (!int8 || tokens != 1 || swiglu || K > 8192 ||
        (cfg.warps_per_block != 4 && cfg.warps_per_block != 8))
      throw std::invalid_argument(std::string(what) +
                                  ": tile needs int8 weights, one token, no SwiGLU, K <= 8192 and "
                                  "blocks of 4 or 8 warps, got " +
                                  shape_text(N, K) + (int8 ? "" : " bf16") + ", " +
                                  std::to_string(cfg.warps_per_block) + " warps");
    if (!device_has_pdl())  // compute capability < 9.0
      return launch_impl(int8, W, scale, experts, n_sel, E, x, y, N, K, residual,
                         general_fallback(cfg, int8, N, K, n_sel), stream, tokens, swiglu, eps);
    const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu)),
                    static_cast<unsigned>(n_sel));
    return launch_tile(cfg.warps_per_block, cfg.pdl, grid, smem, stream, a);
  }
  if (cfg.mma) {
    const int unit_vec = cfg.mma_diag ? 32 : 4;  // 16-byte vectors per unit of a row
    const size_t smem =
        static_cast<size_t>(mma_units(K, unit_vec)) * unit_vec * 16 * 2;  // x in f16
    if (!int8 || tokens != 1 || swiglu || smem > (96u << 10) || cfg.mma_depth < 2 ||
        cfg.mma_depth > 3 || (cfg.mma_depth == 3 && cfg.unroll == 8) ||
        (cfg.mma_diag && (cfg.unroll == 8 || (cfg.mma_depth == 3 && cfg.unroll != 2))))
      throw std::invalid_argument(
          std::string(what) +
          ": mma needs int8 weights, one token, no SwiGLU, K <= 49152 and "
          "2 or 3 batches in flight (2 at unroll 8; diag: unroll 1, 2 or 4, "
          "3 batches at unroll 2 only), got " +
          shape_text(N, K) + (int8 ? "" : " bf16"));
    if (device_attribute<cudaDevAttrComputeCapabilityMajor>() < 8)  // no mma.sync
      return launch_impl(int8, W, scale, experts, n_sel, E, x, y, N, K, residual,
                         general_fallback(cfg, int8, N, K, n_sel), stream, tokens, swiglu, eps);
    const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu)),
                    static_cast<unsigned>(n_sel));
    return launch_mma(cfg.unroll, cfg.mma_depth, cfg.mma_diag, cfg.pdl, grid,
                      dim3(32 * cfg.warps_per_block), smem, stream, a);
  }
  if (cfg.one_load) {
    const int64_t vecs = K / vec;
    if (tokens != 1 || swiglu || (vecs != 32 && vecs != 64 && vecs != 128))
      throw std::invalid_argument(std::string(what) +
                                  ": one_load needs one token, no SwiGLU and K of 32, 64 or 128 "
                                  "16-byte vectors, got " +
                                  shape_text(N, K));
    a.ks = static_cast<int>(vecs / 32);  // warps per row, from K alone
    const int warps = cfg.warps_per_block == 8 ? 8 : 4;
    const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu)),
                    static_cast<unsigned>(n_sel));
    if (int8)
      return warps == 8 ? launch_one_load<true, 8>(a.ks, cfg.pdl, grid, stream, a)
                        : launch_one_load<true, 4>(a.ks, cfg.pdl, grid, stream, a);
    return warps == 8 ? launch_one_load<false, 8>(a.ks, cfg.pdl, grid, stream, a)
                      : launch_one_load<false, 4>(a.ks, cfg.pdl, grid, stream, a);
  }
  // combine: one grid row sums every slot.
  const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu)),
                  static_cast<unsigned>(weights ? 1 : n_sel));
  const dim3 block(static_cast<unsigned>(32 * cfg.warps_per_block));
  if (int8)
    dispatch<true>(cfg, grid, block, stream, a, swiglu);
  else
    dispatch<false>(cfg, grid, block, stream, a, swiglu);
}

}  // namespace

int64_t grid_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel, bool gather) {
  if (cfg.bulk_stages > 0) return bulk_blocks(int8, N, K, cfg, n_sel, gather);
  return grid_x(int8, N, K, cfg, false) * n_sel;
}

// Several tokens (measured on an H100 at Llama-2-7B's shapes and 6 tokens,
// tools/decode_profile, docs/notes/gemv.md): the kernel is then bound by
// its x reads and FMAs, not by HBM. Batches of two loads. int8: two rows
// per warp (each token's x vector serves both; 12288x4096: 47 vs 58 us),
// K split only at K >= 12288. The SwiGLU keeps the split it measured with
// (int8 as several tokens).
// bf16: one row per warp (two for the SwiGLU, whose rows pair), no K split
// below K = 8192 (12288x4096: 61 vs 73 us; 22016x4096 with 2 rows: 96 vs
// 207 us), the one-token split above (4096x11008: 62 vs 90 us).
Config tokens_config(bool int8, int64_t N, int64_t K, int tokens, bool swiglu) {
  Config c = general_config(int8, N, K, 1);
  c.one_load = false;  // one token, no SwiGLU only
  c.pipeline = true;   // several tokens and SwiGLU: pipelined only
  if (swiglu) {        // two rows (gate and up), batches of two loads
    c.rows_per_warp = 2;
    c.unroll = 2;
    if (int8) c.k_split = K >= 12288 ? 4 : 1;
  }
  if (tokens <= 1) return c;
  c.unroll = 2;
  if (int8) {
    c.rows_per_warp = 2;
    c.k_split = K >= 12288 ? 4 : 1;
  } else if (K < 8192) {
    c.k_split = 1;
  }
  return c;
}

void launch(bool int8, const void* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
            const bf16* x, bf16* y, int64_t N, int64_t K, const bf16* residual, Config cfg,
            cudaStream_t stream, int tokens) {
  launch_impl(int8, W, scale, experts, n_sel, E, x, y, N, K, residual, cfg, stream, tokens, false,
              0.f);
}

void gemv_swiglu(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* H, int tokens,
                 int64_t F, int64_t K, float eps, cudaStream_t stream, bool pdl) {
  Config c = tokens_config(int8, 2 * F, K, tokens, true);
  c.pdl = pdl;
  launch_impl(int8, W, scale, nullptr, 1, 0, X, H, 2 * F, K, nullptr, c, stream, tokens, true, eps);
}

Config gather_swiglu_config(bool int8, int64_t F, int64_t K) {
  return tokens_config(int8, 2 * F, K, 1, true);
}

Config combine_config(bool int8, int64_t N, int64_t K) {
  // The one-matrix choice of the general kernel at a row of n_sel·K (int8
  // 4096x14336: 2 rows per warp, batches of 2 loads, not pipelined, K over 4 warps).
  Config c = general_config(int8, N, K, 1);
  c.one_load = false;
  if (c.unroll > 2) c.unroll = 2;
  if (c.rows_per_warp > 2) c.rows_per_warp = 2;
  return c;
}

void gather_gemv_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                        int n_sel, int E, const bf16* x, bf16* H, int64_t F, int64_t K, float eps,
                        cudaStream_t stream, bool pdl, const Config* cfg) {
  if (!experts) throw std::invalid_argument("gather_gemv_swiglu: null experts");
  Config c = cfg ? *cfg : gather_swiglu_config(int8, F, K);
  c.pdl = pdl;
  launch_impl(int8, W, scale, experts, n_sel, E, x, H, 2 * F, K, nullptr, c, stream, 1, true, eps);
}

void gather_gemv_combine(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                         const float* weights, int n_sel, int E, const bf16* X, bf16* y, int64_t N,
                         int64_t K, const bf16* residual, cudaStream_t stream, bool pdl,
                         const Config* cfg) {
  if (!experts || !weights)
    throw std::invalid_argument("gather_gemv_combine: null experts or weights");
  Config c = cfg ? *cfg : combine_config(int8, N, K);
  c.pdl = pdl;
  launch_impl(int8, W, scale, experts, n_sel, E, X, y, N, K, residual, c, stream, 1, false, 0.f,
              weights);
}

void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual, bool pdl) {
  Config c = default_config(false, N, K);
  c.pdl = pdl;
  launch(false, W, nullptr, nullptr, 1, 0, x, y, N, K, residual, c, stream);
}

void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual, bool pdl) {
  Config c = default_config(true, N, K);
  c.pdl = pdl;
  launch(true, W, scale, nullptr, 1, 0, x, y, N, K, residual, c, stream);
}

void gemv_tokens(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* Y, int tokens,
                 int64_t N, int64_t K, cudaStream_t stream, const bf16* residual, bool pdl) {
  Config c = tokens_config(int8, N, K, tokens, false);
  c.pdl = pdl;
  launch(int8, W, scale, nullptr, 1, 0, X, Y, N, K, residual, c, stream, tokens);
}

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream) {
  if (!experts) throw std::invalid_argument("gather_gemv: null experts");
  launch(false, W, nullptr, experts, n_sel, E, x, y, N, K, nullptr,
         default_config(false, N, K, n_sel), stream);
}

void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream) {
  if (!experts) throw std::invalid_argument("gather_gemv: null experts");
  launch(true, W, scale, experts, n_sel, E, x, y, N, K, nullptr, default_config(true, N, K, n_sel),
         stream);
}

}  // namespace kb::gemv
