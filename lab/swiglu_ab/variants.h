// The one-token SwiGLU GEMV's variants (lab; docs/notes/decode.md "Where the
// time goes now"): batches of 2 loads a row (U2, the product's kernels) or
// of 1 (U1, twins compiled here from the product's body,
// kernels/gemv/general_body.cuh), each uncapped or compiled for 7 or 8
// blocks of 128 threads an SM (B7, B8: __launch_bounds__(128, n), as the
// product's caps, docs/decisions/0037). A variant is a gemv::General named
// as the product names configurations ("R2U1W4P1K1B7"); its warps and K
// split are the caller's (the decode step's). The product never runs U1:
// its table and launch refuse it; the lab reaches U1 by launching the
// product's U2 twin and replacing the kernel function, so the grid, block
// and arguments are exactly the product's.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/gemv_config.h"
#include "kernels/gemv/common.cuh"

namespace kb::lab::swiglu {

using gemv::bf16;

// Why g is no variant, or "": the general kernel as the product's SwiGLU
// takes it (2 rows a warp, pipelined, gemv::swiglu_refusal) with unroll 1 or 2.
std::string refusal(const gemv::General& g);

// The product's configuration g stands for: g with unroll 2.
gemv::General product_twin(gemv::General g);

// The six variants of base's warps and K split: U2 then U1, each uncapped, B7, B8.
std::vector<gemv::General> variants_of(const gemv::General& base);

// One kernel launch: its function, grid, block and only argument.
struct Launch {
  const void* func = nullptr;
  dim3 grid, block;
  gemv::detail::KernelArgs args{};
  void enqueue(cudaStream_t s) const;  // checked; no programmatic dependence
};

// gemv_swiglu's operands at one token: W [2F, K] (gate | up), scale [2F] (int8), x [K], h [F].
struct Operands {
  bool int8 = false;
  const void* W = nullptr;
  const bf16* scale = nullptr;
  const bf16* x = nullptr;
  bf16* h = nullptr;
  int64_t F = 0, K = 0;
  float eps = 1e-5f;
};

// Variant g's launch on op: gemv_swiglu's, captured under a table whose
// first entry gives this shape product_twin(g), its function the lab's U1
// twin where g.unroll is 1. Throws std::invalid_argument for a refused g.
Launch launch_of(const Operands& op, const gemv::General& g);

// The product's kernel function of product_twin(g) at this shape (what a
// step captured under that table runs in its SwiGLU nodes).
const void* product_kernel(bool int8, int64_t F, int64_t K, const gemv::General& g);

// The lab's U1 kernel for int8 or bf16, min_blocks 0, 7 or 8.
const void* unroll1_kernel(bool int8, int min_blocks);

// Replaces, in graph g, the function of every kernel node that runs `from`
// with `to` (both take one gemv KernelArgs); returns how many it replaced.
int swap_kernel(cudaGraph_t g, const void* from, const void* to);

// A kernel's registers a thread, local (spilled) bytes a thread, and the
// blocks of `threads` threads an SM holds (the occupancy calculator).
struct Resources {
  int regs = 0;
  size_t local_bytes = 0;
  int blocks_per_sm = 0;
};
Resources resources(const void* func, int threads);
// "regs=72;local=0;blocks_sm=7" (a row's variant takes it as it is).
std::string text(const Resources& r);

}  // namespace kb::lab::swiglu
