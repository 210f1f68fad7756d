// The router blocks the general kernel runs beside the decoder's o
// projection (gemv.h RouteBlocks; why: kernels/decode/decode_kernels.h).
// Included by general_body.cuh only.
#pragma once

#include "kernels/common/route_choice.cuh"
#include "kernels/gemv/common.cuh"

namespace kb::gemv::detail {

// The last router block's choice out (one thread): the ids, their logits
// after the E router logits, the history's ids at `pos` (where kept and in
// range), and the ticket counter back to 0 for the next launch.
__device__ __forceinline__ void publish_route_choice(const RouteBlocks& rb, const RouteChoice& ch,
                                                     int pos) {
  for (int j = 0; j < rb.top; ++j) {
    rb.ids[j] = ch.ids[j];
    rb.logits[rb.E + j] = ch.chosen[j];
  }
  if (rb.hist_ids && pos >= 0 && pos < rb.capacity)
    for (int j = 0; j < rb.top; ++j) rb.hist_ids[int64_t(pos) * rb.hist_stride + j] = ch.ids[j];
  *rb.counter = 0;
}

// Router block b of nb (b < nb; att: a, the gemv's x): items (expert e, chunk c of 8 elements),
// 16 chunks = the block's slice of 128 of dim and of q; 16 lanes hold one
// expert's chunks and fold them with shuffles in a fixed order. The
// router's weights, F and x are loaded before the wait (none is written by
// the grids before: x is the layer's input, complete before the previous
// grid could launch, read through L2); a, the previous grid's output,
// after it.
template <bool INT8>
__device__ void route_block(const RouteBlocks& rb, const bf16* att, int b, int nb) {
  constexpr int kStage = 256;  // parts the last block reads at once (one L2 round trip)
  __shared__ float s_logit[64], s_part[kStage];
  __shared__ bool s_last;
  constexpr int kChunks = kRouteSlice / 8;
  const int d0 = b * kRouteSlice;  // this block's slice of dim and of q
  let_next_grid_launch();          // nothing of the next grid depends on these blocks' start
  // The last block's operands that no grid before writes, read now: the
  // expert's scale, the position (the sampler's, steps ago; through L2).
  const float my_scale =
      threadIdx.x < rb.E && rb.scale ? __bfloat162float(rb.scale[threadIdx.x]) : 1.f;
  const int pos = __ldcg(rb.pos);
  for (int p0 = 0; p0 < rb.E * kChunks; p0 += blockDim.x) {
    const int p = p0 + threadIdx.x;
    const int e = p / kChunks, c = p % kChunks;
    const bool live = e < rb.E;
    const int k = d0 + 8 * c;  // the chunk's first element (of dim, and of q)
    float wf[8], xf[8], ff[8];
    bool in_d = live && k < rb.dim, in_q = live && k < rb.q;
    if (in_d) {
      if constexpr (INT8) {  // 8 int8 weights, exactly (int8_at, as the gemv converts them)
        const uint2 w = *reinterpret_cast<const uint2*>(static_cast<const int8_t*>(rb.w) +
                                                        int64_t(e) * rb.dim + k);
        const uint32_t q[2] = {w.x ^ 0x80808080u, w.y ^ 0x80808080u};
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          wf[4 * j + 0] = int8_at<0>(q[j]);
          wf[4 * j + 1] = int8_at<1>(q[j]);
          wf[4 * j + 2] = int8_at<2>(q[j]);
          wf[4 * j + 3] = int8_at<3>(q[j]);
        }
      } else {
        convert<false>(*reinterpret_cast<const int4*>(static_cast<const bf16*>(rb.w) +
                                                      int64_t(e) * rb.dim + k),
                       wf);
      }
      convert<false>(__ldcg(reinterpret_cast<const int4*>(rb.x + k)), xf);
    }
    if (in_q) {
      const float4* f = reinterpret_cast<const float4*>(rb.fold + int64_t(e) * rb.q + k);
      const float4 f0 = f[0], f1 = f[1];
      ff[0] = f0.x, ff[1] = f0.y, ff[2] = f0.z, ff[3] = f0.w;
      ff[4] = f1.x, ff[5] = f1.y, ff[6] = f1.z, ff[7] = f1.w;
    }
    if (p0 == 0) wait_for_previous_grid();
    float acc = 0.f;
    if (in_d)
#pragma unroll
      for (int i = 0; i < 8; ++i) acc = fmaf(wf[i], xf[i], acc);
    if (in_q) {
      // a: the gemv's x, the attention's output (the previous grid's)
      float af[8];
      convert<false>(__ldcg(reinterpret_cast<const int4*>(att + k)), af);
#pragma unroll
      for (int i = 0; i < 8; ++i) acc = fmaf(ff[i], af[i], acc);
    }
#pragma unroll
    for (int o = kChunks / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (live && c == 0) rb.partial[int64_t(b) * rb.E + e] = acc;
  }
  // The last block to finish adds every block's parts and picks.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) s_last = atomicAdd(rb.counter, 1u) == unsigned(nb - 1);
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  if (route_pick_fits(rb.E)) {  // warp 0, in registers (E divides 32)
    if (threadIdx.x >= 32) return;
    const RouteChoice ch =
        route_pick_warp(rb.partial, nb, rb.E, rb.scale, rb.top, rb.fault, rb.logits);
    if (threadIdx.x == 0) publish_route_choice(rb, ch, pos);
    return;
  }
  // Every block's parts into shared memory, kStage at a time (whole blocks),
  // then thread e adds expert e's in block order.
  const int per = kStage / rb.E;
  float l = 0.f;
  for (int b0 = 0; b0 < nb; b0 += per) {
    const int n = min(per, nb - b0) * rb.E;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      s_part[i] = __ldcg(rb.partial + int64_t(b0) * rb.E + i);
    __syncthreads();
    if (threadIdx.x < rb.E)
      for (int i = threadIdx.x; i < n; i += rb.E) l += s_part[i];
    __syncthreads();
  }
  if (threadIdx.x < rb.E) {
    l *= my_scale;
    s_logit[threadIdx.x] = l;
    rb.logits[threadIdx.x] = l;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    publish_route_choice(rb, route_choose(s_logit, rb.E, rb.top, rb.fault), pos);
  }
}

}  // namespace kb::gemv::detail
