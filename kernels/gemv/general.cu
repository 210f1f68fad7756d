// The general GEMV kernel: any shape, one or several tokens, the SwiGLU,
// gathers and the MoE combine. It wins wherever no specialised family does
// (docs/notes/gemv.md): rows of 8-16 KB and more at one token (int8 16384²
// but for the bulk-mma kernel, bf16 at every long row), every several-token
// and SwiGLU launch, and the decode step's GEMVs, whose dependent launches
// in a graph overlap its start with the previous kernel's tail (the tile
// and mma kernels stage x after that wait and lost there).
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
// makes the block write NaN rows and read nothing. A gather over tokens (a
// MoE prefill; the tensor cores' kernel, tokens_mma.cu, takes int8 with K
// a multiple of 64) is the several-token kernel with blockIdx.y = the
// expert: a block serves the tokens whose ids chose it, and reads nothing
// when there are none. The ids are read after
// griddepcontrol.wait (a router just before writes them); the combine's
// with experts_ready before it, its first weights streaming before the
// wait as a dense gemv's do.
#include <cmath>
#include <stdexcept>

#include "kernels/gemv/families.h"
#include "kernels/gemv/route_blocks.cuh"

namespace kb::gemv::detail {

namespace {

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
// X (router blocks, KernelArgs::route; T = 1, a dense gemv): the grid's
// first a.route_blocks blocks run route_block, the rest are the gemv's.
// G (a gather over tokens, KernelArgs::token_ids; T = kMaxTokens): expert
// e = blockIdx.y; the block serves the tokens that chose e (a mask, the
// same for the whole block): it reads expert e's rows and those tokens' x
// (X [tokens, K] with the SwiGLU, else X [E, tokens, K]) and writes
// Y [E, tokens, N or F]; no token: it returns.
template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false, bool X = false,
          bool G = false>
__device__ __forceinline__ void gemv_body(const KernelArgs& a) {
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
  static_assert(!X || (T == 1 && !S && !C), "router blocks: beside a dense one-token gemv");
  static_assert(!G || (T == kMaxTokens && !C && !X), "a gather over tokens: every token");
  if constexpr (X) {
    if (int(blockIdx.x) < a.route_blocks) {
      route_block<INT8>(a.route, a.x, blockIdx.x, a.route_blocks);
      return;
    }
  }
  const int bx = X ? int(blockIdx.x) - a.route_blocks : int(blockIdx.x);  // the gemv's block
  constexpr int kVec = Traits<INT8>::kVec;
  __shared__ float red[8][T * R];  // k-split partial sums, one per warp, token and row
  __shared__ float red_xx[8][T];   // SwiGLU: partial sums of x², one per warp and token
  const int lane = threadIdx.x & 31;
  // `ks` consecutive warps of the block share R rows and split K between
  // them (batch b of the row goes to warp b % ks); ks = 1: a warp per R rows.
  const int wib = threadIdx.x >> 5, kpart = wib % ks;
  const int group = bx * ((blockDim.x >> 5) / ks) + wib / ks;
  const int half = N / 2;  // SwiGLU: F, the gate rows
  const int row0 = S ? group : group * R;
  const bool live = S ? group < half : row0 < N;
  if (!live && ks == 1) return;  // with ks > 1 every warp reaches the block barrier
  // Several tokens: the tokens this block serves (bit t); G: those whose
  // ids chose its expert e = blockIdx.y. The ids are a router's output:
  // read after waiting for the previous grid.
  unsigned tmask = ~0u;
  int64_t erow0 = 0;  // G: the expert's first row of W
  if constexpr (G) {
    wait_for_previous_grid();
    const int e = blockIdx.y;
    tmask = 0;
    for (int t = 0; t < tokens; ++t)
      for (int k = 0; k < a.top; ++k) tmask |= (a.token_ids[t * a.top + k] == e ? 1u : 0u) << t;
    if (!tmask) return;  // the whole block: every thread reads the same ids
    erow0 = static_cast<int64_t>(e) * N;
    if (scale) scale += erow0;
    y += static_cast<int64_t>(e) * tokens * (S ? half : N);  // Y [E, tokens, N or F]
    if (!S) x += static_cast<int64_t>(e) * tokens * K;       // X [E, tokens, K]
  } else {
    // A gather's slot (blockIdx.y) writes its own rows: N of them, F = N / 2 with the SwiGLU.
    y += static_cast<int64_t>(blockIdx.y) * (S ? half : N);
  }
  // combine: each slot's expert (the rows) and coefficient (weight · row scale).
  constexpr int kSlots = C ? kMaxCombine : 1;
  const int n_slots = C ? a.n_sel : 1;
  const int4* rows[kSlots][R];
  float coef[kSlots][R];
  // combine with experts_ready (gather_gemv_combine, gemv.h): the ids and
  // weights were complete before this grid could launch. (Only the combine
  // takes it: the other instantiations' code stays as it was.)
  const bool ids_early = C && a.experts_ready;
  if (a.experts) {
    // The ids (and the combine's weights) are a router's output. The
    // previous grid may be that router: wait for it before reading them,
    // and no weight streams before the wait. With ids_early they are read
    // at once, so that the first weights below stream before the wait,
    // during the previous grid's tail, and through L2 (__ldcg): a line an
    // earlier kernel left in this SM's L1 may be stale, and no wait has
    // made the writer's stores visible to this grid's L1.
    if (!ids_early) {
      wait_for_previous_grid();
    }
    auto load_routing = [&](const auto* p) { return ids_early ? __ldcg(p) : *p; };
    int e[kSlots];
    bool bad = false;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      e[s] = s < n_slots ? load_routing(a.experts + (C ? s : blockIdx.y)) : 0;
      bad |= e[s] < 0 || e[s] >= a.E;
    }
    if (bad) {  // the whole block: every warp reads the same ids
      // y may be what the previous grid reads (the decoder's x): written
      // only once that grid is complete.
      if (ids_early) {
        wait_for_previous_grid();
      }
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
          coef[s][r] = s < n_slots ? load_routing(a.weights + s) *
                                         (scale ? __bfloat162float(scale[erow]) : 1.f)
                                   : 0.f;
      }
    if (!C && scale) scale += static_cast<int64_t>(e[0]) * N;  // the epilogue's (slot) scales
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int row = S ? min(group, half - 1) + r * half : min(row0 + r, N - 1);
      rows[0][r] = reinterpret_cast<const int4*>(W + (erow0 + row) * K);
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
          if (!(tmask >> t & 1u)) continue;  // block-uniform
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
    // One batch in flight. A combine whose ids were read early loads its
    // first batch before the wait, as above (a warp with no vectors loads
    // none: load_batch and use_batch skip indices past nv_all); the dense
    // gemv waits first, as before (reading early there would be a change
    // of its own to measure), and any other gather has waited already.
    int base = first;
    if (ids_early) {
      int4 w[R][U];
      load_batch(base, w);
      wait_for_previous_grid();
      after_wait();
      use_batch(base, w);
      base += stride;
    } else {
      wait_for_previous_grid();
      after_wait();
    }
    for (; base < nv_all; base += stride) {
      int4 w[R][U];
      load_batch(base, w);
      use_batch(base, w);
    }
  }
  // The weights are streamed: the next grid may launch and start its own
  // (it still waits for this grid to complete before reading its output).
  let_next_grid_launch();
  float acc[T][R];
#pragma unroll
  for (int t = 0; t < T; ++t) {
    if (T > 1 && t >= tokens) break;  // warp-uniform
    if (T > 1 && !(tmask >> t & 1u)) {
#pragma unroll
      for (int r = 0; r < R; ++r) acc[t][r] = 0.f;
      if constexpr (S) xx[t] = 0.f;
      continue;
    }
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
      if (lane == t && live && t < tokens && (tmask >> t & 1u)) {
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
        if (lane == t * R + r && row < N && (T == 1 || (t < tokens && (tmask >> t & 1u)))) {
          float v = acc[t][r];
          if (!C && scale) v *= my_scale;
          if (residual) v += my_res;
          y[int64_t(t) * N + row] = __float2bfloat16_rn(v);
        }
      }
  }
}

template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false, bool X = false,
          bool G = false>
__global__ void __launch_bounds__(256) gemv_kernel(const KernelArgs a) {
  gemv_body<INT8, R, U, P, T, S, C, X, G>(a);
}
// General::min_blocks: the same body compiled for MB blocks of 128
// threads an SM (a register cap; the compiler's own choice can leave a
// one-wave grid a second wave, docs/decisions/0037-moe-gathers-register-caps.md).
template <int MB, bool INT8, int R, int U, bool P, int T, bool S, bool C>
__global__ void __launch_bounds__(128, MB) gemv_kernel_capped(const KernelArgs a) {
  gemv_body<INT8, R, U, P, T, S, C, false>(a);
}

// Launches one instantiation; with `pdl`, as a programmatic dependent of
// the previous work on the stream (captured into graphs as such an edge).
template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false, bool X = false,
          bool G = false>
void launch_kernel(const GeneralLaunch& c, dim3 grid, dim3 block, cudaStream_t s,
                   const KernelArgs& a) {
  if constexpr (INT8 && T == 1 && !X && !G && (S || C) && (S || R == 2)) {
    if (c.min_blocks > 0) {
      if (block.x > 128)
        throw std::invalid_argument("gemv: min_blocks needs blocks of at most 4 warps");
      if (c.min_blocks == 8)
        return launch_maybe_pdl(c.pdl, gemv_kernel_capped<8, INT8, R, U, P, T, S, C>, grid, block,
                                s, a);
      if constexpr (S)
        if (c.min_blocks == 7)
          return launch_maybe_pdl(c.pdl, gemv_kernel_capped<7, INT8, R, U, P, T, S, C>, grid, block,
                                  s, a);
      throw std::invalid_argument("gemv: min_blocks 8 (the SwiGLU: 7 or 8) only");
    }
  }
  if (c.min_blocks > 0)
    throw std::invalid_argument(
        "gemv: min_blocks is the int8 one-token SwiGLU gather's and the combine's (2 rows a "
        "warp) only");
  launch_maybe_pdl(c.pdl, gemv_kernel<INT8, R, U, P, T, S, C, X, G>, grid, block, s, a);
}

// A dense one-token gemv with router blocks (carries_route_blocks): 1 or 2
// rows per warp, batches of 1 or 2, pipelined or not; grid.x counts them.
template <bool INT8, int R>
void route_by_unroll(const GeneralLaunch& c, dim3 grid, dim3 block, cudaStream_t s,
                     const KernelArgs& a) {
  if (c.unroll == 1)
    return c.pipeline
               ? launch_kernel<INT8, R, 1, true, 1, false, false, true>(c, grid, block, s, a)
               : launch_kernel<INT8, R, 1, false, 1, false, false, true>(c, grid, block, s, a);
  if (c.unroll == 2)
    return c.pipeline
               ? launch_kernel<INT8, R, 2, true, 1, false, false, true>(c, grid, block, s, a)
               : launch_kernel<INT8, R, 2, false, 1, false, false, true>(c, grid, block, s, a);
  throw std::invalid_argument("gemv with router blocks: unroll must be 1 or 2");
}

// gather_gemv_combine: 1 or 2 rows per warp, batches of 1 or 2 loads, pipelined or not.
template <bool INT8, int R>
void combine_by_unroll(const GeneralLaunch& c, dim3 grid, dim3 block, cudaStream_t s,
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
void by_unroll(const GeneralLaunch& c, dim3 grid, dim3 block, cudaStream_t s, const KernelArgs& a) {
  // One token: batches of 1 or 2 loads, the compiled ones (docs/decisions/0050).
  switch (c.unroll) {
    case 1:
      return launch_kernel<INT8, R, 1, P, 1>(c, grid, block, s, a);
    case 2:
      return launch_kernel<INT8, R, 2, P, 1>(c, grid, block, s, a);
  }
  throw std::invalid_argument("gemv: one token takes unroll 1 or 2");
}

template <bool INT8, int R>
void by_pipeline(const GeneralLaunch& c, dim3 grid, dim3 block, cudaStream_t s,
                 const KernelArgs& a) {
  if (c.pipeline)
    by_unroll<INT8, R, true>(c, grid, block, s, a);
  else
    by_unroll<INT8, R, false>(c, grid, block, s, a);
}

// Several tokens: 1 or 2 rows per warp, U2 or U4, pipelined, up to
// kMaxTokens tokens; SwiGLU: 2 rows per warp; one token: every configuration.
template <bool INT8>
void dispatch_t(const GeneralLaunch& c, dim3 grid, dim3 block, cudaStream_t s, const KernelArgs& a,
                bool swiglu) {
  if (a.route_blocks > 0) {
    if (swiglu || a.tokens != 1 || a.experts)
      throw std::invalid_argument("gemv with router blocks: a dense one-token gemv only");
    if (c.rows_per_warp == 1) return route_by_unroll<INT8, 1>(c, grid, block, s, a);
    if (c.rows_per_warp == 2) return route_by_unroll<INT8, 2>(c, grid, block, s, a);
    throw std::invalid_argument("gemv with router blocks: rows_per_warp must be 1 or 2");
  }
  if (a.weights) {
    if (c.rows_per_warp == 1) return combine_by_unroll<INT8, 1>(c, grid, block, s, a);
    if (c.rows_per_warp == 2) return combine_by_unroll<INT8, 2>(c, grid, block, s, a);
    throw std::invalid_argument("gather_gemv_combine: rows_per_warp must be 1 or 2");
  }
  const bool u24 = c.unroll == 2 || c.unroll == 4;
  if (a.token_ids) {  // a gather over tokens: 2 rows a warp, batches of 2, pipelined
    if (c.rows_per_warp != 2 || c.unroll != 2 || !c.pipeline)
      throw std::invalid_argument(
          "a gather over tokens: needs rows_per_warp 2, unroll 2, pipelined");
    if (swiglu)
      return launch_kernel<INT8, 2, 2, true, kMaxTokens, true, false, false, true>(c, grid, block,
                                                                                   s, a);
    return launch_kernel<INT8, 2, 2, true, kMaxTokens, false, false, false, true>(c, grid, block, s,
                                                                                  a);
  }
  if (swiglu) {
    if (c.rows_per_warp != 2 || !u24 || !c.pipeline)
      throw std::invalid_argument("gemv_swiglu: needs rows_per_warp 2, unroll 2 or 4, pipelined");
    if (a.tokens == 1 && !a.token_ids)
      return launch_kernel<INT8, 2, 2, true, 1, true>(c, grid, block, s, a);
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

}  // namespace

void launch_general(bool int8, const GeneralLaunch& c, bool swiglu, dim3 grid, dim3 block,
                    cudaStream_t s, const KernelArgs& a) {
  if (int8)
    dispatch_t<true>(c, grid, block, s, a, swiglu);
  else
    dispatch_t<false>(c, grid, block, s, a, swiglu);
}

}  // namespace kb::gemv::detail
