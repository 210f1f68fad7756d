// The general GEMV kernel's body (general.cu compiles its kernels from
// it; lab code compiles twins of them from the same source): any shape,
// one or several tokens, the SwiGLU, gathers and the MoE combine. How it
// works and why: docs/notes/gemv.md, docs/decisions/0025-gemv-general-kernel.md.
#pragma once

#include <cmath>

#include "kernels/gemv/common.cuh"
#include "kernels/gemv/route_blocks.cuh"

namespace kb::gemv::detail::body {

// Where a thread stands: `ks` consecutive warps share a group's R rows and
// split K (batch b of the row goes to warp b % ks).
struct Place {
  int lane, wib, kpart;  // wib: the warp in the block; kpart: its part of K
  int group, half;       // half: the SwiGLU's F, the gate rows
  int row0;              // the group's first row
  bool live;             // the group has rows
};

// G: the tokens whose ids (a router's output: read after the wait) chose
// this block's expert e = blockIdx.y, and e's rows, scales, x and y; false
// when none did (the whole block returns). Else a gather's slot
// (blockIdx.y) writes its own rows: N of them, F with the SwiGLU.
template <bool S, bool G>
__device__ __forceinline__ bool select_tokens(const KernelArgs& a, int N, int K, int tokens,
                                              int half, unsigned& tmask, int64_t& erow0,
                                              const bf16*& scale, const bf16*& x, bf16*& y) {
  if constexpr (G) {
    wait_for_previous_grid();
    const int e = blockIdx.y;
    tmask = 0;
    for (int t = 0; t < tokens; ++t)
      for (int k = 0; k < a.top; ++k) tmask |= (a.token_ids[t * a.top + k] == e ? 1u : 0u) << t;
    if (!tmask) return false;  // the whole block: every thread reads the same ids
    erow0 = static_cast<int64_t>(e) * N;
    if (scale) scale += erow0;
    y += static_cast<int64_t>(e) * tokens * (S ? half : N);  // Y [E, tokens, N or F]
    if (!S) x += static_cast<int64_t>(e) * tokens * K;       // X [E, tokens, K]
  } else {
    y += static_cast<int64_t>(blockIdx.y) * (S ? half : N);
  }
  return true;
}

// The body's former lambdas, as classes that hold what each captured (by
// reference, in the same order): their code compiles as it did inline.

// combine: the slot of vector index v (kMaxCombine = 2).
template <bool C>
struct SlotOf {
  const int& nvec;
  __device__ int operator()(int v) const { return C && v >= nvec ? 1 : 0; }
};
// SwiGLU: adds x² to token t's sum.
template <bool S, int T, int kVec>
struct AddSquares {
  float (&xx)[T];
  __device__ void operator()(int t, const float (&xf)[kVec]) const {
    if constexpr (S)
#pragma unroll
      for (int i = 0; i < kVec; ++i) xx[t] = fmaf(xf[i], xf[i], xx[t]);
  }
};

// combine: adds the current slot's partial sums times its coefficients to the total.
template <int R, int T, bool C, int kSlots>
struct Fold {
  int& cur;
  float (&coef)[kSlots][R];
  float (&total)[R];
  float (&part)[T][R][4];
  __device__ void operator()() const {
    if constexpr (C) {
      for (int r = 0; r < R; ++r) {  // R <= 2, unrolled by the compiler
        const float c = cur == 0 ? coef[0][r] : coef[kSlots - 1][r];
        total[r] =
            fmaf(c, (part[0][r][0] + part[0][r][1]) + (part[0][r][2] + part[0][r][3]), total[r]);
        for (int j = 0; j < 4; ++j) part[0][r][j] = 0.f;
      }
    }
  }
};

// A batch: U vectors of each of the R rows, from vector index `base`.
template <int R, int U, bool C, int kSlots>
struct LoadBatch {
  const SlotOf<C>& slot_of;
  const int4* (&rows)[kSlots][R];
  const int& nv_all;
  const int& nvec;
  __device__ void operator()(int base, int4 (&w)[R][U]) const {
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
  }
};

// The dot products of a batch with each token's x (several tokens: each
// weight converted once; combine: x = X[slot]).
template <bool INT8, int R, int U, int T, bool S, bool C, int kSlots>
struct UseBatch {
  static constexpr int kVec = Traits<INT8>::kVec;
  const int& nv_all;
  const SlotOf<C>& slot_of;
  int& cur;
  const Fold<R, T, C, kSlots>& fold;
  const int4* const& x4;
  const int& x_stride;
  const int& nvec;
  float (&part)[T][R][4];
  const AddSquares<S, T, kVec>& add_squares;
  const int& tokens;
  const unsigned& tmask;
  __device__ void operator()(int base, const int4 (&w)[R][U]) const {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = base + u * 32;
      if (v >= nv_all) continue;
      if constexpr (C) {
        const int s = slot_of(v);
        if (s != cur) {  // a lane's vectors move forward: each slot folds once
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
  }
};

// The R rows each slot reads (a gather or combine: the router's experts,
// maybe with a bad id: NaN out, false) and the combine's coefficients.
template <bool INT8, int R, bool S, bool C, int kSlots>
__device__ __forceinline__ bool resolve_rows(const KernelArgs& a, const Place& p, int n_slots,
                                             bool ids_early, int64_t erow0,
                                             const int4* (&rows)[kSlots][R],
                                             float (&coef)[kSlots][R], const bf16*& scale,
                                             bf16* y) {
  using Wt = typename Traits<INT8>::W;
  const Wt* W = static_cast<const Wt*>(a.W);
  const int N = a.N, K = a.K;
  if (a.experts) {
    // The ids are a router's output, maybe the previous grid's: read after
    // the wait, or with ids_early (experts_ready) before it through L2 (a
    // line left in this SM's L1 may be stale).
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
      // y may be what the previous grid reads: written once it is complete.
      if (ids_early) {
        wait_for_previous_grid();
      }
      if constexpr (S) {
        if (p.kpart == 0 && p.lane == 0 && p.live) y[p.group] = __float2bfloat16(NAN);
      } else {
        if (p.kpart == 0 && p.lane < R && p.row0 + p.lane < N)
          y[p.row0 + p.lane] = __float2bfloat16(NAN);
      }
      return false;
    }
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = S ? min(p.group, p.half - 1) + r * p.half : min(p.row0 + r, N - 1);
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
      const int row = S ? min(p.group, p.half - 1) + r * p.half : min(p.row0 + r, N - 1);
      rows[0][r] = reinterpret_cast<const int4*>(W + (erow0 + row) * K);
    }
  }
  return true;
}

// The sums of each (token, row) across the warp, then across the k-split
// warps, scaled, activated (SwiGLU) or added to the residual, and written.
template <int R, int T, bool S, bool C, int kSlots>
__device__ __forceinline__ void epilogue(const KernelArgs& a, const Place& p, unsigned tmask,
                                         const Fold<R, T, C, kSlots>& fold, float (&total)[R],
                                         float (&part)[T][R][4], float (&xx)[T], float my_scale,
                                         float my_scale_up, float my_res, float (&red)[8][T * R],
                                         float (&red_xx)[8][T], const bf16* scale, bf16* y) {
  const int N = a.N, K = a.K, ks = a.ks, tokens = a.tokens;
  const bf16* residual = a.residual;
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
    if (p.lane == 0)
#pragma unroll
      for (int t = 0; t < T; ++t) {
#pragma unroll
        for (int r = 0; r < R; ++r) red[p.wib][t * R + r] = acc[t][r];
        if constexpr (S) red_xx[p.wib][t] = xx[t];
      }
    __syncthreads();
    if (p.kpart != 0 || !p.live) return;
#pragma unroll
    for (int t = 0; t < T; ++t) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        acc[t][r] = 0.f;
        for (int k = 0; k < ks; ++k) acc[t][r] += red[p.wib + k][t * R + r];
      }
      if constexpr (S) {
        xx[t] = 0.f;
        for (int k = 0; k < ks; ++k) xx[t] += red_xx[p.wib + k][t];
      }
    }
  }

  if constexpr (S) {  // lane t writes token t's y[group] (y: [tokens, F])
#pragma unroll
    for (int t = 0; t < T; ++t)
      if (p.lane == t && p.live && t < tokens && (tmask >> t & 1u)) {
        float g = acc[t][0], u = acc[t][1];
        if (scale) {
          g *= my_scale;
          u *= my_scale_up;
        }
        const float r = rsqrtf(xx[t] / K + a.eps);
        const float gg = r * g;
        y[int64_t(t) * p.half + p.group] = __float2bfloat16_rn(gg / (1.f + __expf(-gg)) * (r * u));
      }
  } else {
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = p.row0 + r;
        if (p.lane == t * R + r && row < N && (T == 1 || (t < tokens && (tmask >> t & 1u)))) {
          float v = acc[t][r];
          if (!C && scale) v *= my_scale;
          if (residual) v += my_res;
          y[int64_t(t) * N + row] = __float2bfloat16_rn(v);
        }
      }
  }
}

// The weights streamed through use_batch: P, pipelined (the next batch in
// flight while this one is used); the previous grid waited for on the way.
template <int R, int U, bool P, class Load, class Use, class AfterWait>
__device__ __forceinline__ void stream(const Load& load_batch, const Use& use_batch, int first,
                                       int stride, int nv_all, bool ids_early,
                                       const AfterWait& after_wait) {
  if constexpr (P) {
    int4 w[R][U];
    load_batch(first, w);
    // Weights never change: the first two batches are read before the wait.
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
    // A combine whose ids were read early loads its first batch before the
    // wait; the dense gemv waits first, any other gather has waited.
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
}

// R rows per warp, U 16-byte loads per row and batch, P pipelined (the
// next batch in flight while this one is used); T the most tokens (1 or
// kMaxTokens; a.tokens used), each weight vector converted once for all.
// S, the SwiGLU: W holds 2·F rows, gate | up; a warp group reduces gate
// row i and up row i (R = 2) and writes silu(r·g)·(r·u), r the RMSNorm
// factor of its token from the x² it reads. C, the combine (T = 1): one
// grid row walks slot 0's vectors then slot 1's (x = X[slot]) as one row
// of n_sel·K, folding each slot's sums times its weight and row scale into
// a total. X, router blocks (T = 1): the grid's first a.route_blocks
// blocks run route_block. G, a gather over tokens (T = kMaxTokens): block
// row e = blockIdx.y serves the tokens that chose expert e.
template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false, bool X = false,
          bool G = false>
__device__ __forceinline__ void gemv_body(const KernelArgs& a) {
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
  Place p;
  p.lane = threadIdx.x & 31;
  p.wib = threadIdx.x >> 5;
  p.kpart = p.wib % ks;
  p.group = bx * ((blockDim.x >> 5) / ks) + p.wib / ks;
  p.half = N / 2;
  p.row0 = S ? p.group : p.group * R;
  p.live = S ? p.group < p.half : p.row0 < N;
  if (!p.live && ks == 1) return;  // with ks > 1 every warp reaches the block barrier
  unsigned tmask = ~0u;
  int64_t erow0 = 0;  // G: the expert's first row of W
  if (!select_tokens<S, G>(a, N, K, tokens, p.half, tmask, erow0, scale, x, y)) return;
  constexpr int kSlots = C ? kMaxCombine : 1;
  const int n_slots = C ? a.n_sel : 1;
  const int4* rows[kSlots][R];
  float coef[kSlots][R];
  const bool ids_early = C && a.experts_ready;
  if (!resolve_rows<INT8, R, S, C, kSlots>(a, p, n_slots, ids_early, erow0, rows, coef, scale, y))
    return;
  const int nvec = p.live ? K / kVec : 0;  // per row (combine: slot s's are [s·nvec, (s+1)·nvec))
  const int nv_all = nvec * n_slots;
  const int first = p.lane + 32 * U * p.kpart, stride = 32 * U * ks;
  const int4* x4 = reinterpret_cast<const int4*>(x);
  const int x_stride = K / 8;  // int4 per row of x

  // The epilogue's operands, read before the stream so that their latency
  // hides under it; lane t·R + r (SwiGLU: lane t) writes token t's row r.
  const int my_t = S ? p.lane : p.lane / R, my_r = S ? 0 : p.lane % R;
  const bool writer =
      p.kpart == 0 && p.live && my_t < T && (T == 1 || my_t < tokens) && (S || p.row0 + my_r < N);
  float my_scale = 1.f, my_scale_up = 1.f, my_res = 0.f;
  if (!C && writer && scale) {  // combine: the scales are in coef
    my_scale = __bfloat162float(scale[S ? p.group : p.row0 + my_r]);
    if (S) my_scale_up = __bfloat162float(scale[p.group + p.half]);
  }
  if (writer && p.lane == 0) {
    const bf16* out = S ? y + p.group : y + p.row0;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(out));
  }
  auto after_wait = [&] {
    if (!S && writer && residual)
      my_res = __bfloat162float(residual[int64_t(my_t) * N + p.row0 + my_r]);
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
  const AddSquares<S, T, kVec> add_squares{xx};

  const SlotOf<C> slot_of{nvec};
  int cur = 0;
  float total[R];
#pragma unroll
  for (int r = 0; r < R; ++r) total[r] = 0.f;
  const Fold<R, T, C, kSlots> fold{cur, coef, total, part};

  const LoadBatch<R, U, C, kSlots> load_batch{slot_of, rows, nv_all, nvec};

  const UseBatch<INT8, R, U, T, S, C, kSlots> use_batch{
      nv_all, slot_of, cur, fold, x4, x_stride, nvec, part, add_squares, tokens, tmask};

  stream<R, U, P>(load_batch, use_batch, first, stride, nv_all, ids_early, after_wait);
  let_next_grid_launch();
  epilogue<R, T, S, C, kSlots>(a, p, tmask, fold, total, part, xx, my_scale, my_scale_up, my_res,
                               red, red_xx, scale, y);
}

}  // namespace kb::gemv::detail::body
