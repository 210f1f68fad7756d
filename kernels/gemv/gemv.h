// GEMV for batch-1 decode: y = W·x, weights streamed once from HBM.
//
//   y[n] = scale[n] * sum_k W[n, k] * x[k]  (+ residual[n])
//
// W row-major [N, K] in bf16, or int8 with a per-row bf16 scale (bf16:
// scale == nullptr); x, y, residual bf16; fp32 sums. `residual` may alias
// `y` and serves as a bias too. gather_gemv: W [E, N, K] (scales [E, N]),
// `experts` holds n_sel ids in device memory, y[s, :] = W[experts[s]] · x;
// an id outside [0, E) is never read, its rows are written as NaN
// (check_experts refuses host-side ids first). Shapes a kernel cannot serve
// (N or K <= 0, K not a multiple of the vector width, a pointer not 16-byte
// aligned, n_sel <= 0, E <= 0) throw std::invalid_argument before any launch.
// Design and measurements: docs/notes/gemv.md.
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
// stream (compute capability 9.0+, else ignored): the kernel reads its first
// weights before waiting for that work, x and residual after. The work just
// before it on the stream must not write W (or scale).
void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual = nullptr, bool pdl = false);
void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual = nullptr, bool pdl = false);

// Several tokens (a prefill): Y[t, :] = W · X[t, :] (+ residual[t, :]) for
// t < tokens <= kMaxTokens, each weight read once for all tokens; X [tokens,
// K], Y and residual [tokens, N] (residual may alias Y).
constexpr int kMaxTokens = 8;
void gemv_tokens(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* Y, int tokens,
                 int64_t N, int64_t K, cudaStream_t stream, const bf16* residual = nullptr,
                 bool pdl = false);

// The SwiGLU of an RMSNormed input, fused: W [2·F, K] holds F gate rows then
// F up rows; for each token t,
//   H[t, i] = silu(r·g) · (r·u),  g = W[i]·X[t] (·scale[i]), u = W[F+i]·X[t] (·scale[F+i]),
//   r = rsqrt(mean(X[t]²) + eps); X [tokens, K], H [tokens, F].
void gemv_swiglu(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* H, int tokens,
                 int64_t F, int64_t K, float eps, cudaStream_t stream, bool pdl = false);

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream);
void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream);

// Throws std::invalid_argument naming the first id outside [0, E).
void check_experts(const std::vector<int32_t>& experts, int E);

// MoE at batch 1, the ids (and weights) in device memory, written by a
// router just before: the general kernel waits for the previous grid before
// reading them (no weight streams before), unless `experts_ready`. An id
// outside [0, E) writes NaN (SwiGLU: that slot's F outputs; combine: all)
// and reads no weight.
// gather_gemv_swiglu: W [E, 2·F, K] (scales [E, 2·F]); H[s, :] = gemv_swiglu
// of expert experts[s] for x (H [n_sel, F]).
void gather_gemv_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                        int n_sel, int E, const bf16* x, bf16* H, int64_t F, int64_t K, float eps,
                        cudaStream_t stream, bool pdl = false, const Config* cfg = nullptr);
// gather_gemv_combine: W [E, N, K]; the selected experts' weighted sum:
//   y[n] = residual[n] + sum_{s < n_sel} weights[s] · scale[e_s, n] · (W[e_s, n] · X[s]),
// e_s = experts[s], X [n_sel, K], n_sel <= 2, weights fp32 on the device;
// residual may alias y or be nullptr. `experts_ready` (with `pdl`): the ids
// and weights are complete before this grid can launch, so they are read
// (and the first weights streamed) before the wait. True only where the
// grid just before does not write them and lets this one launch only after
// it has itself waited for their writer (the decoder's router -> gather
// SwiGLU -> combine); false: the ids are read after the wait.
void gather_gemv_combine(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                         const float* weights, int n_sel, int E, const bf16* X, bf16* y, int64_t N,
                         int64_t K, const bf16* residual, cudaStream_t stream, bool pdl = false,
                         const Config* cfg = nullptr, bool experts_ready = false);

// A MoE prefill's experts: `ids` [tokens][top] in device memory (a router's
// output, read after the wait); expert e < E is read once, for the tokens
// that chose it, and not at all if none did:
//   gather_tokens_swiglu: H[e, t, :] = gemv_swiglu of expert e for X[t]
//     (W [E, 2·F, K], X [tokens, K], H [E, tokens, F]);
//   gather_tokens_gemv: Y[e, t, :] = W[e] · X[e, t, :]
//     (W [E, N, K], X [E, tokens, K], Y [E, tokens, N]).
// Other rows of H and Y are left as they were; an id outside [0, E) chooses
// no expert (the caller makes that token NaN). tokens <= kMaxTokens.
void gather_tokens_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                          int E, const bf16* X, bf16* H, int tokens, int64_t F, int64_t K,
                          float eps, cudaStream_t stream, bool pdl = false);
void gather_tokens_gemv(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                        int E, const bf16* X, bf16* Y, int tokens, int64_t N, int64_t K,
                        cudaStream_t stream, bool pdl = false);

// CPU references (fp64 sums over the same inputs as floats; y in fp32);
// scale and residual may be nullptr. gemv_swiglu_ref: one token, h F floats.
void gemv_ref(const float* W, const float* scale, const float* x, float* y, int64_t N, int64_t K,
              const float* residual = nullptr);
void gemv_swiglu_ref(const float* W, const float* scale, const float* x, float* h, int64_t F,
                     int64_t K, float eps);

// The blocks a one-token launch of cfg runs (grid.x · grid.y; the bulk
// kernel's need the current device, the others' none).
int64_t grid_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel = 1,
                    bool gather = false);

// Router blocks beside a one-token general-kernel gemv (the decoder's o
// projection; why: kernels/decode/decode_kernels.h and
// docs/decisions/0035-router-beside-the-o-projection.md). The grid's first
// route_blocks(dim, q) blocks each compute, for a slice of 128 of dim and
// of q, every expert's part of l[e] = scale[e]·(W[e]·x + F[e]·a), a the
// gemv's own x; they write their parts to `partial`, and the last of them
// (a ticket on `counter`, left at zero) adds them and picks the top `top`:
// ids, logits (l then the chosen ones' l), hist_ids[*pos · hist_stride + j].
// They never stream the gemv's rows; the gemv's result is unchanged.
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
  int tokens = 1;                      // > 1: as gemv_tokens (the general kernel)
  const RouteBlocks* route = nullptr;  // router blocks beside the gemv (carries_route_blocks)
};
// A launch with an explicit configuration (the tuner, the tests, the decoder).
void launch(const Operands& op, const Config& cfg, cudaStream_t stream);

}  // namespace kb::gemv
