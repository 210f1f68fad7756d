// The choice of a MoE router (device side), shared by the router kernel
// (kernels/decode) and the gemv's router blocks (kernels/gemv/route_blocks.cuh).
#pragma once

#include <cuda_bf16.h>

namespace kb {

// The top `top` (1 or 2) of `logit[0, n_experts)`: the larger first, the
// lower id on a tie; chosen[j] the logit of choice j. Test faults
// (decode::RouteArgs::fault): 1 replaces the last choice by the next-ranked
// expert, 2 puts an id outside [0, n_experts) in slot 0.
struct RouteChoice {
  int ids[2];
  float chosen[2];
};
__device__ inline RouteChoice route_choose(const float* logit, int n_experts, int top, int fault) {
  int rank[3] = {-1, -1, -1};  // one beyond the choice, for fault 1
  const int want = min(top + 1, n_experts);
  for (int j = 0; j < want; ++j) {
    int best = -1;
    for (int e = 0; e < n_experts; ++e) {
      bool taken = false;
      for (int i = 0; i < j; ++i) taken |= rank[i] == e;
      if (!taken && (best < 0 || logit[e] > logit[best])) best = e;
    }
    rank[j] = best;
  }
  RouteChoice c;
  c.ids[0] = rank[0];
  c.ids[1] = top > 1 ? rank[1] : -1;
  if (fault == 1 && want > top) c.ids[top - 1] = rank[top];
  for (int j = 0; j < 2; ++j) c.chosen[j] = j < top ? logit[c.ids[j]] : 0.f;
  if (fault == 2) c.ids[0] = n_experts;
  return c;
}

// The router's logits from the router blocks' parts (gemv::RouteBlocks) and
// the choice as route_choose, in one warp's registers, where E divides 32
// (docs/decisions/0035). Lane t adds parts t, t + 32, ... (expert t mod E),
// then the lanes of one expert add theirs in a butterfly, so every lane of
// expert e holds the same l[e] = scale[e] · sum; `logit`, when not null,
// gets the E logits.
__host__ __device__ constexpr bool route_pick_fits(int E) {
  return E >= 1 && E <= 32 && (32 % E) == 0;
}
__device__ inline RouteChoice route_pick_warp(const float* parts, int nb, int E,
                                              const __nv_bfloat16* scale, int top, int fault,
                                              float* logit = nullptr) {
  constexpr int kLoads = 8;  // a lane's loads in flight: 256 parts a round
  const int lane = threadIdx.x & 31;
  const int n = nb * E;
  float l = 0.f;
  for (int i0 = 0; i0 < n; i0 += 32 * kLoads) {
    float v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const int i = i0 + lane + 32 * k;
      v[k] = i < n ? __ldcg(parts + i) : 0.f;
    }
#pragma unroll
    for (int k = 0; k < kLoads; ++k) l += v[k];
  }
  for (int o = E; o < 32; o <<= 1) l += __shfl_xor_sync(0xffffffffu, l, o);
  const int e = lane % E;
  l *= scale ? __bfloat162float(scale[e]) : 1.f;
  if (logit && lane < E) logit[lane] = l;
  // rank j: the best expert not yet taken (ties: the lower id), over all lanes.
  int rank[3] = {-1, -1, -1};
  const int want = min(top + 1, E);
  for (int j = 0; j < want; ++j) {
    bool taken = false;
    for (int i = 0; i < j; ++i) taken |= rank[i] == e;
    float bv = taken ? -INFINITY : l;
    int bi = taken ? 64 : e;
    for (int o = 1; o < 32; o <<= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (ov > bv || (ov == bv && oi < bi)) {
        bv = ov;
        bi = oi;
      }
    }
    rank[j] = bi;
  }
  RouteChoice c;
  c.ids[0] = rank[0];
  c.ids[1] = top > 1 ? rank[1] : -1;
  if (fault == 1 && want > top) c.ids[top - 1] = rank[top];
  for (int j = 0; j < 2; ++j) {
    const float v = __shfl_sync(0xffffffffu, l, j < top ? c.ids[j] : 0);  // lane id holds l[id]
    c.chosen[j] = j < top ? v : 0.f;
  }
  if (fault == 2) c.ids[0] = E;
  return c;
}

}  // namespace kb
