// Which GEMV kernel runs a shape, as data, no CUDA (docs/decisions/0029):
// the first entry of the GPU's measured table, then of generic_table(), that
// holds the shape and serves it (core/gemv_refusal.h's refusal() empty);
// else general_config.
// Use::decode skips generic_table() (docs/decisions/0031).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gemv_config.h"
#include "core/gemv_refusal.h"
#include "core/gemv_table.h"

namespace kb::gemv {

// The generic rule's family buckets (before general_config).
const std::vector<TableEntry>& generic_table();

// The process-wide measured table (empty: none), installed once by the suite.
void set_table(std::vector<TableEntry> entries);
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

// The generic rule's last resort: the one-load kernel where it serves, else general_kernel.
Config general_config(bool int8, int64_t N, int64_t K, int n_sel = 1);
// choose(...).config.
Config default_config(bool int8, int64_t N, int64_t K, int n_sel = 1);
// What gemv_tokens (swiglu: gemv_swiglu) takes for `tokens` tokens.
Config tokens_config(bool int8, int64_t N, int64_t K, int tokens, bool swiglu = false);
// A SwiGLU's rows, 2·F (gate | up); std::invalid_argument for an F below 1
// or one whose 2·F overflows.
int64_t swiglu_rows(int64_t F);
// What gather_gemv_swiglu and gather_gemv_combine take without a config.
Config gather_swiglu_config(bool int8, int64_t F, int64_t K);
Config combine_config(bool int8, int64_t N, int64_t K);
// The decode step's SwiGLU and combine: the installed table's serving
// `swiglu` / `combine` entry that holds the shape, else the rules above.
Config decode_swiglu_config(bool int8, int64_t F, int64_t K, int n_sel = 1);
Config decode_combine_config(bool int8, int64_t N, int64_t K, int n_sel);
// The same against an explicit table (tests).
Config swiglu_config_in(const std::vector<TableEntry>& table, bool int8, int64_t F, int64_t K,
                        int n_sel);
Config combine_config_in(const std::vector<TableEntry>& table, bool int8, int64_t N, int64_t K,
                         int n_sel);

}  // namespace kb::gemv
