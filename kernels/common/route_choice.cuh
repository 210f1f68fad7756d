// The choice of a MoE router (device side), shared by the router kernel
// (kernels/decode) and the router blocks the general gemv kernel can run
// beside the o projection (kernels/gemv/route_blocks.cuh).
#pragma once

namespace kb {

// The top `top` (1 or 2) of `logit[0, n_experts)`: the larger first, the
// lower id on a tie. Test faults (decode::RouteArgs::fault): 1 replaces the
// last choice by the next-ranked expert (a valid but wrong routing), 2 puts
// an id outside [0, n_experts) in slot 0. ids[j] for j < top; chosen[j], the
// logit of choice j (before fault 2: the logits the weights are taken from).
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

}  // namespace kb
