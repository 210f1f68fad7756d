// GEMV for batch-1 decode: y = W·x, weights streamed once from HBM.
//
//   y[n] = scale[n] * sum_k W[n, k] * x[k]  (+ residual[n])
//
// W row-major [N, K] in bf16, or int8 weight-only with a per-output-row bf16
// scale (gpt-fast's int8 path: scale == nullptr for bf16); x, y, residual
// bf16; fp32 accumulation. `residual` may alias `y` (in-place residual add)
// and serves as a bias too.
//
// gather_gemv: W [E, N, K] (scales [E, N]); `experts` holds `n_sel` expert
// ids in device memory; y[s, :] = W[experts[s]] · x (MoE expert selection at
// batch 1). The ids live on the device, so the kernel cannot refuse them
// before launch: an id outside [0, E) is never read out of bounds, its rows
// are written as NaN instead (a check shows it). Callers that hold the ids
// on the host refuse them first with check_experts().
//
// Shapes a kernel cannot serve (N or K <= 0, K not a multiple of the vector
// width, a pointer not 16-byte aligned, n_sel <= 0, E <= 0) throw
// std::invalid_argument before any launch.
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

// The vector width in elements that K must be a multiple of (16 bytes).
int k_multiple_bf16();
int k_multiple_int8();

// `pdl`: launch as a programmatic dependent of the previous work on the
// stream (compute capability 9.0+, else ignored). The kernel reads its
// first weights before waiting for that work to complete, and reads x and
// residual only after; it lets the next grid launch once its weights are
// streamed. A chain of dependent kernels (a decode step) then overlaps each
// GEMV's start with the previous kernel's tail. The one condition: the
// work just before it on the stream must not write W (or scale).
void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual = nullptr, bool pdl = false);
void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual = nullptr, bool pdl = false);

// Several tokens at once (a prompt's prefill): Y[t, :] = W · X[t, :]
// (+ residual[t, :]) for t < tokens <= kMaxTokens, X [tokens, K], Y and
// residual [tokens, N] (residual may alias Y). Each weight is read once for
// all tokens; int8 weights need `scale`, bf16 ones take nullptr.
constexpr int kMaxTokens = 8;
void gemv_tokens(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* Y, int tokens,
                 int64_t N, int64_t K, cudaStream_t stream, const bf16* residual = nullptr,
                 bool pdl = false);

// The SwiGLU of an RMSNormed input, fused (a Llama MLP's first half):
// W [2·F, K] holds F gate rows then F up rows; for each token t < tokens,
//   H[t, i] = silu(r·g) · (r·u),  g = W[i]·X[t] (·scale[i]), u = W[F+i]·X[t] (·scale[F+i]),
//   r = rsqrt(mean(X[t]²) + eps),  silu(z) = z / (1 + e^-z),
// g and u in fp32; X [tokens, K], H [tokens, F].
void gemv_swiglu(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* H, int tokens,
                 int64_t F, int64_t K, float eps, cudaStream_t stream, bool pdl = false);

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream);
void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream);

// Throws std::invalid_argument naming the first id outside [0, E).
void check_experts(const std::vector<int32_t>& experts, int E);

// MoE at batch 1 (a Mixtral block), the ids (and weights) in device memory,
// written by a router kernel just before; both launch the general kernel
// and wait for the previous grid before reading the ids (so no weight
// streams before that wait), unless the combine's `experts_ready` says
// otherwise. An id outside [0, E) makes the launch write NaN (SwiGLU: that
// slot's F outputs; combine: every output) and read no weight.
//
// gather_gemv_swiglu: W [E, 2·F, K] (each expert gate | up rows, scales
// [E, 2·F]); for each slot s < n_sel, H[s, :] = gemv_swiglu of expert
// experts[s] for x (H [n_sel, F]; r from x as gemv_swiglu).
void gather_gemv_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                        int n_sel, int E, const bf16* x, bf16* H, int64_t F, int64_t K, float eps,
                        cudaStream_t stream, bool pdl = false, const Config* cfg = nullptr);
// gather_gemv_combine: W [E, N, K]; the weighted sum of the selected
// experts, one launch (no per-slot output):
//   y[n] = residual[n] + sum_{s < n_sel} weights[s] · scale[e_s, n] · (W[e_s, n] · X[s]),
// e_s = experts[s], X [n_sel, K] (the slots' inputs, e.g. H above), n_sel
// <= 2, weights fp32 in device memory; residual may alias y or be nullptr.
//
// `experts_ready` (with `pdl`): the ids and weights are complete before
// this grid can launch, so the kernel reads them before waiting for the
// previous grid and streams its first weights during that grid's tail (X
// and residual still only after the wait). True only where the grid just
// before does not write them and lets this one launch only after it has
// itself waited for their writer: the decoder's router -> gather SwiGLU ->
// combine, the gather waiting (griddepcontrol.wait) before it lets the
// combine launch, which the general kernel always does. A kernel that lets
// its dependent launch before waiting (the router, attention) between
// writer and combine breaks it. False: the ids are read after the wait.
void gather_gemv_combine(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                         const float* weights, int n_sel, int E, const bf16* X, bf16* y, int64_t N,
                         int64_t K, const bf16* residual, cudaStream_t stream, bool pdl = false,
                         const Config* cfg = nullptr, bool experts_ready = false);

// A MoE prefill's experts, several tokens routed at once: `ids` [tokens]
// [top] in device memory holds each token's chosen experts (a router's
// output, read after waiting for the previous grid). Each expert e < E is
// read once, for the tokens that chose it, and not at all if none did:
//   gather_tokens_swiglu: H[e, t, :] = gemv_swiglu of expert e for X[t]
//     (W [E, 2·F, K] as gather_gemv_swiglu's, X [tokens, K], H [E, tokens, F]);
//   gather_tokens_gemv: Y[e, t, :] = W[e] · X[e, t, :]
//     (W [E, N, K], X [E, tokens, K], Y [E, tokens, N]),
// for every token t that chose e; the other rows of H and Y are left as
// they were. An id outside [0, E) chooses no expert: the caller makes that
// token NaN (the decoder's moe_tokens_combine). tokens <= kMaxTokens.
void gather_tokens_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                          int E, const bf16* X, bf16* H, int tokens, int64_t F, int64_t K,
                          float eps, cudaStream_t stream, bool pdl = false);
void gather_tokens_gemv(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                        int E, const bf16* X, bf16* Y, int tokens, int64_t N, int64_t K,
                        cudaStream_t stream, bool pdl = false);

// CPU reference (fp64 accumulation over the same bf16/int8 inputs given as
// floats; y in fp32). scale and residual may be nullptr.
void gemv_ref(const float* W, const float* scale, const float* x, float* y, int64_t N, int64_t K,
              const float* residual = nullptr);
// CPU reference of gemv_swiglu for one token (h: F floats).
void gemv_swiglu_ref(const float* W, const float* scale, const float* x, float* h, int64_t F,
                     int64_t K, float eps);

// The blocks the bulk kernel launches for cfg (a Bulk) on the current
// device (n_sel experts selected; gather: a gather_gemv, whose N decides
// the rows per buffer).
int64_t bulk_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel = 1,
                    bool gather = false);
// The blocks a one-token launch of cfg runs (grid.x · grid.y; the bulk
// kernel's need the current device, the others' none).
// Config::trace / 2.
int64_t grid_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel = 1,
                    bool gather = false);

// Router blocks a one-token general-kernel gemv can carry (the decoder's
// o projection with DecoderOptions::moe_route_parallel; decode_kernels.h
// says why the router may run there): the grid's first route_blocks(dim,
// q) blocks compute, each for a slice of 128 of dim and of q, every
// expert's part of l[e] = scale[e]·(W[e]·x + F[e]·a), a being the gemv's own
// x (the attention's output, read after the wait; W, F and x before it, as
// weights), add their parts into `partial` (one line a block, no atomics on
// the sums), and the last of them (a ticket on `counter`, left at zero)
// adds the parts and picks the top `top`: where E divides 32 in one warp's
// registers (kb::route_pick_warp: 2.2% of the Mixtral step, H100,
// docs/decisions/0035-router-beside-the-o-projection.md), else in block order through shared memory
// (kb::route_choose):
// ids, logits (l then the chosen ones' l), hist_ids[*pos · hist_stride + j].
// Their blocks never stream the gemv's rows; the gemv's result is the same
// as without them.
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
// Whether cfg's kernel can carry router blocks (the general kernel at one
// token, 1 or 2 rows per warp, batches of 1 or 2 vectors).
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
  int tokens = 1;  // > 1: as gemv_tokens (the general kernel: rows_per_warp 1 or 2, unroll 2 or 4,
                   // pipelined)
  const RouteBlocks* route = nullptr;  // router blocks beside the gemv (carries_route_blocks)
};
// A launch with an explicit configuration (the tuner, the tests, the decoder).
void launch(const Operands& op, const Config& cfg, cudaStream_t stream);

}  // namespace kb::gemv
