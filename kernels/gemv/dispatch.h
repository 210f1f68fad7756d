// Which GEMV kernel runs a shape: dispatch as data. No CUDA here (the CPU
// tests, the tuning file's reader and the tuner use it).
//
// A table is a list of entries, each a bucket of shapes — weight dtype,
// one matrix or a gather, a range of rows N, a range of row bytes
// (K · itemsize), optionally a cap on the bytes read — and the kernel
// configuration that runs them. choose() takes the first entry whose
// bucket holds the shape and whose kernel can serve it (refusal() is
// empty); where none does, the generic rule decides.
//
// Two tables are consulted, in order:
//   1. the GPU's measured table, installed by the suite from the `gemv`
//      section of targets/tuning/<gpu>.json (written by `kbench tune gemv`,
//      reviewed as a commit) — none on a GPU without one;
//   2. the generic rule, for any GPU: generic_table() (the kernel families
//      in the buckets where they measured faster on an H100,
//      docs/decisions/0028-gemv-tensor-core-int8.md), then the general kernel's own rule
//      (general_config), which serves every shape.
// Use::decode (the decode step's GEMVs, launched as programmatic dependents
// in a graph) consults only a table's `decode` entries, then
// general_config: the tensor-core and tile kernels stage x after the
// dependency wait and measured slower there (docs/decisions/0031-decode-keeps-the-general-gemv.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gemv_config.h"
#include "core/gemv_table.h"

namespace kb::gemv {

// Why `k` cannot run a one-token GEMV (n_sel experts) of this shape (""
// when it can): the launch's own checks, without CUDA. Kernels a GPU lacks
// (bulk and tile: compute capability 9.0, mma: 8.0) are not refused: the
// launch runs general_config's choice there instead.
std::string refusal(const Kernel& k, bool int8, int64_t N, int64_t K, int n_sel);

// The generic rule's family buckets (before general_config).
const std::vector<TableEntry>& generic_table();

// The process-wide measured table (empty: none); `name` says where it came
// from, for messages. The suite installs it once per process.
void set_table(std::vector<TableEntry> entries, std::string name = "");
const std::vector<TableEntry>& installed_table();

struct Choice {
  Config config;
  std::string source;  // the entry's origin, or "generic"
  bool from_table() const { return source != "generic"; }
};
// The choice for a one-token GEMV (n_sel experts) of this shape.
Choice choose(bool int8, int64_t N, int64_t K, int n_sel = 1, Use use = Use::standalone);
// The same against an explicit table (tests, the tuner).
Choice choose_in(const std::vector<TableEntry>& table, bool int8, int64_t N, int64_t K,
                 int n_sel = 1, Use use = Use::standalone);

// The general kernel's rule (the one-load kernel where it serves): what
// the generic rule picks where no family bucket holds the shape.
Config general_config(bool int8, int64_t N, int64_t K, int n_sel = 1);
// The general kernel's knobs by shape: general_config without the one-load kernel.
General general_kernel(bool int8, int64_t N, int64_t K, int n_sel = 1);
// choose(...).config.
Config default_config(bool int8, int64_t N, int64_t K, int n_sel = 1);
// The bulk kernel so configured.
Config bulk_config(int stages, int warps, int blocks_per_sm, int rows = 2, int rows_per_buffer = 0);
// What gemv_tokens (swiglu: gemv_swiglu) takes for `tokens` tokens: each
// token's sums equal the one-token gemv's bits where its k_split and unroll
// are the one-token configuration's.
Config tokens_config(bool int8, int64_t N, int64_t K, int tokens, bool swiglu = false);
// What gather_gemv_swiglu and gather_gemv_combine take without a config:
// general-kernel configurations (rows_per_warp 2, unroll 2 or 4, pipelined
// for the SwiGLU; rows_per_warp 1 or 2, unroll 1 or 2 for the combine).
Config gather_swiglu_config(bool int8, int64_t F, int64_t K);
Config combine_config(bool int8, int64_t N, int64_t K);
// The decode step's SwiGLU GEMV (one token, rows 2F; n_sel experts
// gathered) and MoE down gather with the weighted sum: the installed
// table's `swiglu` / `combine` entry that holds the shape, where it names a
// configuration these launches serve (swiglu_refusal, combine_refusal
// empty); else the rules above.
Config decode_swiglu_config(bool int8, int64_t F, int64_t K, int n_sel = 1);
Config decode_combine_config(bool int8, int64_t N, int64_t K, int n_sel);
// The same against an explicit table (tests).
Config swiglu_config_in(const std::vector<TableEntry>& table, bool int8, int64_t F, int64_t K,
                        int n_sel);
Config combine_config_in(const std::vector<TableEntry>& table, bool int8, int64_t N, int64_t K,
                         int n_sel);
std::string swiglu_refusal(const Kernel& k, bool int8, int n_sel);
std::string combine_refusal(const Kernel& k, bool int8);

// The bulk kernel's rows per ring buffer for k at this shape (gather: a
// gather_gemv, whose N must be even for 2).
int bulk_rows_per_buffer(const Bulk& k, bool int8, int64_t N, int64_t K, bool gather);

}  // namespace kb::gemv
