// The decode step's mixture-of-experts kernels (decode_kernels.h).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/common/pdl.cuh"
#include "kernels/common/route_choice.cuh"
#include "kernels/decode/decode_device.cuh"
#include "kernels/decode/decode_kernels.h"

namespace kb::decode {

using namespace detail;

namespace {

constexpr int kTokensCombineThreads = 128;

// blockIdx.y = the token; a thread sums 8 consecutive elements.
__global__ void __launch_bounds__(kTokensCombineThreads)
    moe_tokens_combine_kernel(bf16* x, const bf16* D, const int32_t* ids, const float* weights,
                              int tokens, int dim, int E, int top) {
  const int t = blockIdx.y;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // 8-element vector index
  let_next_grid_launch();
  wait_for_previous_grid();
  if (i >= dim / 8) return;
  // Through L2 (__ldcg): earlier grids wrote it, this SM's L1 may be stale.
  uint4* xv = reinterpret_cast<uint4*>(x + int64_t(t) * dim) + i;
  float acc[8];
  unpack8(__ldcg(xv), acc);
  for (int k = 0; k < top; ++k) {
    const int e = __ldcg(ids + t * top + k);
    if (e < 0 || e >= E) {
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[j] = NAN;
      break;
    }
    const float w = __ldcg(weights + t * top + k);
    float d[8];
    unpack8(__ldcg(reinterpret_cast<const uint4*>(D + (int64_t(e) * tokens + t) * dim) + i), d);
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = fmaf(w, d[j], acc[j]);
  }
  *xv = pack8(acc);
}

constexpr int kRouteThreads = 1024;
constexpr int kRouteWarps = kRouteThreads / 32;
constexpr int kMaxExperts = 64;
constexpr int kRouteUnroll = 4;

// kRouteUnroll groups of 8 weights of expert e, from group `i0` every
// `stride`-th (past the row: zero).
template <bool kInt8>
using RouteRaw = std::conditional_t<kInt8, uint2, uint4>;
template <bool kInt8>
__device__ __forceinline__ void route_load(const void* w, int e, int dim, int i0, int stride,
                                           RouteRaw<kInt8> (&raw)[kRouteUnroll]) {
  const RouteRaw<kInt8>* row = reinterpret_cast<const RouteRaw<kInt8>*>(
      static_cast<const char*>(w) + int64_t(e) * dim * (kInt8 ? 1 : 2));
#pragma unroll
  for (int u = 0; u < kRouteUnroll; ++u) {
    const int idx = i0 + u * stride;
    raw[u] = idx < dim / 8 ? row[idx] : RouteRaw<kInt8>{};
  }
}

// The partial dot product of those groups with x; `squares`: also x² into xx.
template <bool kInt8>
__device__ __forceinline__ float route_use(const RouteRaw<kInt8> (&raw)[kRouteUnroll],
                                           const uint4* xv, int dim, int i0, int stride,
                                           bool squares, float& xx) {
  float acc = 0.f;
#pragma unroll
  for (int u = 0; u < kRouteUnroll; ++u) {
    const int idx = i0 + u * stride;
    if (idx >= dim / 8) continue;
    float wf[8], xf[8];
    if constexpr (kInt8) {
      const uint32_t qw[2] = {raw[u].x, raw[u].y};
#pragma unroll
      for (int k = 0; k < 8; ++k)
        wf[k] = static_cast<float>(static_cast<int8_t>((qw[k / 4] >> (8 * (k % 4))) & 0xffu));
    } else {
      unpack8(raw[u], wf);
    }
    unpack8(xv[idx], xf);
#pragma unroll
    for (int k = 0; k < 8; ++k) acc = fmaf(wf[k], xf[k], acc);
    if (squares)
#pragma unroll
      for (int k = 0; k < 8; ++k) xx = fmaf(xf[k], xf[k], xx);
  }
  return acc;
}

__device__ void route_pick(const float* logit, const RouteArgs& a);

// The router of one token: one block of 1024 threads, each expert's dot
// product over kRouteWarps / E warps (g). Its weights do not depend on the
// kernel before it: loaded into registers (the rest prefetched into L2)
// before the wait. One read of x serves the dot products and the sum of
// squares for r. Partial sums are added in a fixed order, so the choice on
// a near tie is the same on every run (docs/decisions/0035).
template <bool kInt8>
__global__ void __launch_bounds__(kRouteThreads) route_kernel(RouteArgs a) {
  __shared__ float s_part[kMaxExperts > kRouteWarps ? kMaxExperts : kRouteWarps];
  __shared__ float s_xx[kRouteWarps];
  __shared__ float s_logit[kMaxExperts];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Warps per expert (g) and experts in flight at once (kRouteWarps / g).
  const int g = a.n_experts >= kRouteWarps ? 1 : kRouteWarps / a.n_experts;
  const int slot = warp / g, sub = warp % g, slots = kRouteWarps / g;
  const int first = sub * 32 + lane, stride = g * 32;
  RouteRaw<kInt8> pre[kRouteUnroll];
  const bool has_pre = slot < slots && slot < a.n_experts;
  if (has_pre) route_load<kInt8>(a.w, slot, a.dim, first, stride, pre);
  // Where the registers cannot hold every weight, the weights go into L2.
  if (a.n_experts > slots || a.dim / 8 > kRouteUnroll * stride) {
    const int64_t bytes = int64_t(a.n_experts) * a.dim * (kInt8 ? 1 : 2);
    const char* wb = static_cast<const char*>(a.w);
    for (int64_t off = int64_t(threadIdx.x) * 128; off < bytes; off += int64_t(kRouteThreads) * 128)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(wb + off));
  }
  let_next_grid_launch();
  wait_for_previous_grid();
  const uint4* xv = reinterpret_cast<const uint4*>(a.x);
  float xx = 0.f;
  for (int e = slot; e < a.n_experts && slot < slots; e += slots) {
    float acc = 0.f;
    for (int i0 = first; i0 < a.dim / 8; i0 += kRouteUnroll * stride) {
      RouteRaw<kInt8> raw[kRouteUnroll];
      if (e == slot && i0 == first) {
#pragma unroll
        for (int u = 0; u < kRouteUnroll; ++u) raw[u] = pre[u];
      } else {
        route_load<kInt8>(a.w, e, a.dim, i0, stride, raw);
      }
      acc += route_use<kInt8>(raw, xv, a.dim, i0, stride, e == 0, xx);
    }
    acc = warp_sum(acc);
    if (lane == 0) s_part[e * g + sub] = acc;
  }
  xx = warp_sum(xx);
  if (lane == 0) s_xx[warp] = xx;
  __syncthreads();
  if (threadIdx.x < a.n_experts) {
    const int e = threadIdx.x;
    float ss = 0.f, acc = 0.f;
    for (int w = 0; w < kRouteWarps; ++w) ss += s_xx[w];   // fixed order
    for (int k = 0; k < g; ++k) acc += s_part[e * g + k];  // fixed order
    const float r = rsqrtf(ss / a.dim + a.eps);
    s_logit[e] = r * acc * (kInt8 ? __bfloat162float(a.scale[e]) : 1.f);
  }
  __syncthreads();
  if (threadIdx.x == 0) route_pick(s_logit, a);
}

// Softmax over the chosen of r·logit (= over all, renormalized).
__device__ void route_weights(const float (&chosen)[2], int top, float r, float* weights) {
  float p[2], sum = 0.f;
  for (int j = 0; j < top; ++j) sum += (p[j] = __expf(r * (chosen[j] - chosen[0])));
  for (int j = 0; j < top; ++j) weights[j] = p[j] / sum;
}

// Thread 0 of the router's block: the choice, its weights, the history.
__device__ void route_pick(const float* s_logit, const RouteArgs& a) {
  const RouteChoice c = route_choose(s_logit, a.n_experts, a.top, a.fault);
  for (int j = 0; j < a.top; ++j) a.ids[j] = c.ids[j];
  route_weights(c.chosen, a.top, 1.f, a.weights);
  const int pos = *a.pos;
  if (pos >= 0 && pos < a.capacity) {
    if (a.hist_logits)
      for (int e = 0; e < a.n_experts; ++e)
        a.hist_logits[int64_t(pos) * a.hist_stride + e] = s_logit[e];
    if (a.hist_ids)
      for (int j = 0; j < a.top; ++j) a.hist_ids[int64_t(pos) * a.hist_stride + j] = c.ids[j];
  }
}

// F[e, k] = sum_n W[e, n] · so[n] · Wo[n, k] (fp32, n in order), at setup.
template <bool kInt8>
__global__ void __launch_bounds__(256)
    route_fold_kernel(const void* w, const void* wo, const bf16* so, int dim, int q, float* fold) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x, e = blockIdx.y;
  if (k >= q) return;
  using T = std::conditional_t<kInt8, int8_t, bf16>;
  const T* wr = static_cast<const T*>(w) + int64_t(e) * dim;
  const T* wc = static_cast<const T*>(wo) + k;
  auto f = [](T v) {
    if constexpr (kInt8)
      return static_cast<float>(v);
    else
      return __bfloat162float(v);
  };
  float acc = 0.f;
#pragma unroll 8
  for (int n = 0; n < dim; ++n)
    acc = fmaf(f(wr[n]) * (so ? __bfloat162float(so[n]) : 1.f), f(wc[int64_t(n) * q]), acc);
  fold[int64_t(e) * q + k] = acc;
}

// moe_route_finish: r from y (complete: a full dependency), the weights of
// the chosen, r·l into the history.
constexpr int kFinishThreads = 256;
__global__ void __launch_bounds__(kFinishThreads) route_finish_kernel(RouteFinishArgs a) {
  __shared__ float s_red[32];
  const float r = block_rms_scale(a.y, a.dim, a.eps, s_red);
  if (threadIdx.x == 0) {
    const float chosen[2] = {a.logits[a.n_experts], a.top > 1 ? a.logits[a.n_experts + 1] : 0.f};
    route_weights(chosen, a.top, r, a.weights);
  }
  const int pos = *a.pos;
  if (a.hist_logits && threadIdx.x < a.n_experts && pos >= 0 && pos < a.capacity)
    a.hist_logits[int64_t(pos) * a.hist_stride + threadIdx.x] = r * a.logits[threadIdx.x];
}

}  // namespace

void moe_route(const RouteArgs& a, cudaStream_t stream) {
  require(a.w && a.x && a.ids && a.weights && a.pos, "moe_route: null pointer");
  require(a.dim > 0 && a.dim % 8 == 0, "moe_route: dim must be a positive multiple of 8");
  require(a.n_experts >= 1 && a.n_experts <= kMaxExperts, "moe_route: 1..64 experts");
  require(a.top >= 1 && a.top <= 2 && a.top <= a.n_experts, "moe_route: top must be 1 or 2");
  require((!a.hist_logits && !a.hist_ids) || a.hist_stride >= std::max(a.n_experts, a.top),
          "moe_route: hist_stride below the experts");
  if (a.scale)
    launch_maybe_pdl(a.pdl, route_kernel<true>, dim3(1), dim3(kRouteThreads), stream, a);
  else
    launch_maybe_pdl(a.pdl, route_kernel<false>, dim3(1), dim3(kRouteThreads), stream, a);
}

void moe_tokens_combine(bf16* x, const bf16* D, const int32_t* ids, const float* weights,
                        int tokens, int dim, int E, int top, cudaStream_t stream, bool pdl) {
  require(x && D && ids && weights, "moe_tokens_combine: null pointer");
  require(dim > 0 && dim % 8 == 0, "moe_tokens_combine: dim must be a positive multiple of 8");
  require(tokens >= 1 && tokens <= 65535 && E >= 1 && top >= 1 && top <= E,
          "moe_tokens_combine: needs 1..65535 tokens and 1 <= top <= E");
  const dim3 grid(grid_for(dim / 8, kTokensCombineThreads, 1 << 30), static_cast<unsigned>(tokens));
  launch_maybe_pdl(pdl, moe_tokens_combine_kernel, grid, dim3(kTokensCombineThreads), stream, x, D,
                   ids, weights, tokens, dim, E, top);
}

void moe_route_fold(bool int8, const void* w, const void* wo, const bf16* wo_scale, int n_experts,
                    int dim, int q_size, float* fold, cudaStream_t stream) {
  require(w && wo && fold, "moe_route_fold: null pointer");
  require(n_experts >= 1 && n_experts <= kMaxExperts && dim > 0 && q_size > 0,
          "moe_route_fold: bad shape");
  const dim3 grid((q_size + 255) / 256, n_experts);
  if (int8)
    route_fold_kernel<true><<<grid, 256, 0, stream>>>(w, wo, wo_scale, dim, q_size, fold);
  else
    route_fold_kernel<false><<<grid, 256, 0, stream>>>(w, wo, nullptr, dim, q_size, fold);
  KB_CHECK_LAUNCH();
}

void moe_route_finish(const RouteFinishArgs& a, cudaStream_t stream) {
  require(a.y && a.logits && a.weights && a.pos, "moe_route_finish: null pointer");
  require(a.dim > 0 && a.dim % 8 == 0, "moe_route_finish: dim must be a positive multiple of 8");
  require(a.n_experts >= 1 && a.n_experts <= kMaxExperts && a.top >= 1 && a.top <= 2 &&
              a.top <= a.n_experts,
          "moe_route_finish: 1..64 experts, top 1 or 2");
  require(!a.hist_logits || a.hist_stride >= a.n_experts,
          "moe_route_finish: hist_stride below the experts");
  route_finish_kernel<<<1, kFinishThreads, 0, stream>>>(a);
  KB_CHECK_LAUNCH();
}

}  // namespace kb::decode
