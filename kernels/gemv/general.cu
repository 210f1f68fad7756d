// The general GEMV kernel: any shape, one or several tokens, the SwiGLU,
// gathers and the MoE combine; it runs wherever no specialised family wins
// and the decode step's GEMVs. How it works and why: docs/notes/gemv.md,
// docs/decisions/0025-gemv-general-kernel.md.
#include <cmath>
#include <stdexcept>

#include "kernels/gemv/families.h"
#include "kernels/gemv/general_body.cuh"

namespace kb::gemv::detail {

namespace {

template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false, bool X = false,
          bool G = false>
__global__ void __launch_bounds__(256) gemv_kernel(const KernelArgs a) {
  body::gemv_body<INT8, R, U, P, T, S, C, X, G>(a);
}
// General::min_blocks: the same body compiled for MB blocks of 128
// threads an SM (a register cap; the compiler's own choice can leave a
// one-wave grid a second wave, docs/decisions/0037-moe-gathers-register-caps.md).
template <int MB, bool INT8, int R, int U, bool P, int T, bool S, bool C>
__global__ void __launch_bounds__(128, MB) gemv_kernel_capped(const KernelArgs a) {
  body::gemv_body<INT8, R, U, P, T, S, C, false>(a);
}

// One launch of the general kernel: its configuration and launch shape.
struct Call {
  const General& g;
  bool pdl;
  dim3 grid, block;
  cudaStream_t s;
  const KernelArgs& a;
};

// Launches one instantiation (min_blocks: its register-capped twin).
template <bool INT8, int R, int U, bool P, int T, bool S = false, bool C = false, bool X = false,
          bool G = false>
void launch_kernel(const Call& k) {
  auto go = [&](auto kernel) { launch_maybe_pdl(k.pdl, kernel, k.grid, k.block, k.s, k.a); };
  if constexpr (T == 1 && !X && !G && (S || (INT8 && C && R == 2))) {
    if (k.g.min_blocks > 0) {
      if (k.block.x > 128)
        throw std::invalid_argument("gemv: min_blocks needs blocks of at most 4 warps");
      if (k.g.min_blocks == 8) return go(gemv_kernel_capped<8, INT8, R, U, P, T, S, C>);
      if constexpr (S)
        if (k.g.min_blocks == 7) return go(gemv_kernel_capped<7, INT8, R, U, P, T, S, C>);
      throw std::invalid_argument("gemv: min_blocks 8 (the SwiGLU: 7 or 8) only");
    }
  }
  if (k.g.min_blocks > 0)
    throw std::invalid_argument(
        "gemv: min_blocks is the one-token SwiGLU's and the int8 combine's (2 rows a warp) only");
  go(gemv_kernel<INT8, R, U, P, T, S, C, X, G>);
}

// One token (a dense gemv, C: the combine, X: with router blocks): batches
// of 1 or 2 loads, pipelined or not, the compiled ones (docs/decisions/0050).
template <bool INT8, int R, bool C = false, bool X = false>
void one_token(const Call& k, const char* bad_unroll) {
  if (k.g.unroll == 1)
    return k.g.pipeline ? launch_kernel<INT8, R, 1, true, 1, false, C, X>(k)
                        : launch_kernel<INT8, R, 1, false, 1, false, C, X>(k);
  if (k.g.unroll == 2)
    return k.g.pipeline ? launch_kernel<INT8, R, 2, true, 1, false, C, X>(k)
                        : launch_kernel<INT8, R, 2, false, 1, false, C, X>(k);
  throw std::invalid_argument(bad_unroll);
}

// Several tokens (S: the SwiGLU at any token count): pipelined, batches of
// 2 or 4 loads, 1 or 2 rows per warp (the SwiGLU: 2).
template <bool INT8, int R, bool S>
void tokens(const Call& k) {
  if (k.g.unroll == 2) return launch_kernel<INT8, R, 2, true, kMaxTokens, S>(k);
  return launch_kernel<INT8, R, 4, true, kMaxTokens, S>(k);
}

template <bool INT8>
void launch_for(const Call& k, bool swiglu) {
  const General& g = k.g;
  const KernelArgs& a = k.a;
  if (a.route_blocks > 0) {
    const char* bad = "gemv with router blocks: unroll must be 1 or 2";
    if (swiglu || a.tokens != 1 || a.experts)
      throw std::invalid_argument("gemv with router blocks: a dense one-token gemv only");
    if (g.rows_per_warp == 1) return one_token<INT8, 1, false, true>(k, bad);
    if (g.rows_per_warp == 2) return one_token<INT8, 2, false, true>(k, bad);
    throw std::invalid_argument("gemv with router blocks: rows_per_warp must be 1 or 2");
  }
  if (a.weights) {
    const char* bad = "gather_gemv_combine: unroll must be 1 or 2";
    if (g.rows_per_warp == 1) return one_token<INT8, 1, true>(k, bad);
    if (g.rows_per_warp == 2) return one_token<INT8, 2, true>(k, bad);
    throw std::invalid_argument("gather_gemv_combine: rows_per_warp must be 1 or 2");
  }
  const bool u24 = g.unroll == 2 || g.unroll == 4;
  if (a.token_ids) {  // a gather over tokens: 2 rows a warp, batches of 2, pipelined
    if (g.rows_per_warp != 2 || g.unroll != 2 || !g.pipeline)
      throw std::invalid_argument(
          "a gather over tokens: needs rows_per_warp 2, unroll 2, pipelined");
    if (swiglu) return launch_kernel<INT8, 2, 2, true, kMaxTokens, true, false, false, true>(k);
    return launch_kernel<INT8, 2, 2, true, kMaxTokens, false, false, false, true>(k);
  }
  if (swiglu) {
    // One int8 token also takes batches of one load (docs/decisions/0059).
    const bool u1 = INT8 && a.tokens == 1 && g.unroll == 1;
    if (g.rows_per_warp != 2 || !(u24 || u1) || !g.pipeline)
      throw std::invalid_argument(
          "gemv_swiglu: needs rows_per_warp 2, unroll 2 or 4 (one int8 token: 1 too), pipelined");
    if constexpr (INT8)
      if (u1) return launch_kernel<INT8, 2, 1, true, 1, true>(k);
    if (a.tokens == 1) return launch_kernel<INT8, 2, 2, true, 1, true>(k);
    return tokens<INT8, 2, true>(k);
  }
  if (a.tokens > 1) {
    if ((g.rows_per_warp != 1 && g.rows_per_warp != 2) || !u24 || !g.pipeline)
      throw std::invalid_argument(
          "gemv: several tokens need rows_per_warp 1 or 2, unroll 2 or 4, pipelined");
    if (g.rows_per_warp == 1) return tokens<INT8, 1, false>(k);
    return tokens<INT8, 2, false>(k);
  }
  const char* bad = "gemv: one token takes unroll 1 or 2";
  if (g.rows_per_warp == 1) return one_token<INT8, 1>(k, bad);
  if (g.rows_per_warp == 2) return one_token<INT8, 2>(k, bad);
  if (g.rows_per_warp == 4) return one_token<INT8, 4>(k, bad);
  throw std::invalid_argument("gemv: rows_per_warp must be 1, 2 or 4");
}

}  // namespace

void launch_general(bool int8, const General& g, bool pdl, bool swiglu, dim3 grid, cudaStream_t s,
                    const KernelArgs& a) {
  const Call k{g, pdl, grid, dim3(32 * g.warps), s, a};
  if (int8)
    launch_for<true>(k, swiglu);
  else
    launch_for<false>(k, swiglu);
}

}  // namespace kb::gemv::detail
