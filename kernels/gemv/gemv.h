// GEMV for batch-1 decode (docs/notes/gemv.md): y[n] = scale[n] · (W[n] · x)
// (+ residual[n], which may alias y); W [N, K] bf16 (scale nullptr) or int8
// with per-row bf16 scales; fp32 sums. gather_gemv: W [E, N, K], y[s, :] =
// W[experts[s]] · x, ids in device memory, one outside [0, E) writes NaN. A
// shape no kernel serves throws std::invalid_argument before any launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/gemv_config.h"
#include "kernels/gemv/dispatch.h"

namespace kb::gemv {

using bf16 = __nv_bfloat16;

// K must be a multiple of the 16-byte vector's elements.
int k_multiple_bf16();
int k_multiple_int8();

// `pdl`: a programmatic dependent of the work before (9.0+): it reads the
// weights before its wait, so that work must not write W or scale.
void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual = nullptr, bool pdl = false);
void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual = nullptr, bool pdl = false);

// A prefill: Y[t, :] = W · X[t, :] (+ residual[t, :]) for t < tokens <=
// kMaxTokens, each weight read once for all tokens.
constexpr int kMaxTokens = 8;
void gemv_tokens(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* Y, int tokens,
                 int64_t N, int64_t K, cudaStream_t stream, const bf16* residual = nullptr,
                 bool pdl = false);

// The SwiGLU of an RMSNormed input: W [2·F, K] holds the gate then the up rows;
//   H[t, i] = silu(r·g) · (r·u),  g = W[i]·X[t], u = W[F+i]·X[t] (each ·scale),
//   r = rsqrt(mean(X[t]²) + eps).
void gemv_swiglu(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* H, int tokens,
                 int64_t F, int64_t K, float eps, cudaStream_t stream, bool pdl = false);

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream);
void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream);

// Throws std::invalid_argument naming the first id outside [0, E).
void check_experts(const std::vector<int32_t>& experts, int E);

// MoE at batch 1, the ids (and weights) written by a router just before and
// read after the wait; an id outside [0, E) writes NaN and reads no weight.
// gather_gemv_swiglu: H[s, :] = gemv_swiglu of expert experts[s].
void gather_gemv_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                        int n_sel, int E, const bf16* x, bf16* H, int64_t F, int64_t K, float eps,
                        cudaStream_t stream, bool pdl = false, const Config* cfg = nullptr);
// gather_gemv_combine, the selected experts' weighted sum (n_sel <= 2):
//   y[n] = residual[n] + sum_s weights[s] · scale[e_s, n] · (W[e_s, n] · X[s]),  e_s = experts[s]
// `experts_ready` (with `pdl`): the ids and weights are complete at launch
// (docs/decisions/0033), so they are read before the wait.
void gather_gemv_combine(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                         const float* weights, int n_sel, int E, const bf16* X, bf16* y, int64_t N,
                         int64_t K, const bf16* residual, cudaStream_t stream, bool pdl = false,
                         const Config* cfg = nullptr, bool experts_ready = false);

// A MoE prefill's experts, `ids` [tokens][top] read after the wait: expert e
// is read once for the tokens that chose it (none: not at all); other rows
// are left as they were, an id outside [0, E) chooses no expert.
//   gather_tokens_swiglu: H[e, t, :] = gemv_swiglu of expert e for X[t] (H [E, tokens, F]);
//   gather_tokens_gemv: Y[e, t, :] = W[e] · X[e, t, :] (X [E, tokens, K], Y [E, tokens, N]).
void gather_tokens_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                          int E, const bf16* X, bf16* H, int tokens, int64_t F, int64_t K,
                          float eps, cudaStream_t stream, bool pdl = false);
void gather_tokens_gemv(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                        int E, const bf16* X, bf16* Y, int tokens, int64_t N, int64_t K,
                        cudaStream_t stream, bool pdl = false);

// CPU references (fp64 sums); scale and residual may be nullptr.
void gemv_ref(const float* W, const float* scale, const float* x, float* y, int64_t N, int64_t K,
              const float* residual = nullptr);
void gemv_swiglu_ref(const float* W, const float* scale, const float* x, float* h, int64_t F,
                     int64_t K, float eps);

// The blocks a one-token launch of cfg runs (bulk: on the current device).
int64_t grid_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel = 1,
                    bool gather = false);

// Router blocks beside a one-token general-kernel gemv (the decoder's o
// projection, docs/decisions/0035): the grid's first route_blocks(dim, q)
// blocks each add a slice of 128 of dim and q to every expert's
// l[e] = scale[e]·(W[e]·x + F[e]·a), a the gemv's x; the last of them (a
// ticket on `counter`) picks the top `top`. The gemv's result is unchanged.
struct RouteBlocks {
  const void* w = nullptr;          // the router [E, dim], the gemv's weight type
  const bf16* scale = nullptr;      // int8: [E]; bf16: nullptr
  const bf16* x = nullptr;          // the layer's input [dim] (not written by this gemv)
  const float* fold = nullptr;      // F [E, q], fp32
  int dim = 0, q = 0;               // q: the gemv's K
  int E = 0, top = 0;               // E <= 64, top 1 or 2
  int32_t* ids = nullptr;           // out [top]
  float* logits = nullptr;          // out [E + top]
  float* partial = nullptr;         // workspace [route_blocks(dim, q), E]
  unsigned int* counter = nullptr;  // zero; left at zero
  const int32_t* pos = nullptr;
  int capacity = 0;
  int32_t* hist_ids = nullptr;  // [capacity][hist_stride] or nullptr
  int hist_stride = 0;
  int fault = 0;  // tests: as decode::RouteArgs::fault
};
constexpr int kRouteSlice = 128;  // elements of dim and of q a router block takes
inline int route_blocks(int dim, int q) {
  return (std::max(dim, q) + kRouteSlice - 1) / kRouteSlice;
}
// Whether cfg's kernel can carry router blocks (general, 1-2 rows a warp, unroll 1-2).
bool carries_route_blocks(const Config& cfg);

// The operands of one launch (gemv, or gather_gemv with `experts`).
struct Operands {
  bool int8 = false;
  const void* W = nullptr;
  const bf16* scale = nullptr;       // int8: per-row scales [E, N]; bf16: nullptr
  const int32_t* experts = nullptr;  // gather: n_sel ids in device memory; else nullptr
  int n_sel = 1;
  int E = 0;
  const bf16* x = nullptr;  // [tokens, K]
  bf16* y = nullptr;        // [tokens or n_sel, N]
  int64_t N = 0, K = 0;
  const bf16* residual = nullptr;
  int tokens = 1;                      // > 1: as gemv_tokens (the general kernel)
  const RouteBlocks* route = nullptr;  // router blocks beside the gemv (carries_route_blocks)
};
// A launch with an explicit configuration (the tuner, the tests, the decoder).
void launch(const Operands& op, const Config& cfg, cudaStream_t stream);

}  // namespace kb::gemv
