// What a GEMV kernel configuration can run: the one rule that the dispatch
// (kernels/gemv/dispatch.h: an entry that refuses a shape is passed over),
// the launchers, the tuner and the tuning table's reader (an entry that can
// run none of its bucket's shapes is refused) share. No CUDA.
#pragma once

#include <cstdint>
#include <string>

#include "core/gemv_config.h"
#include "core/gemv_table.h"

namespace kb::gemv {

// Elements per 16-byte weight vector (gemv.h's k_multiple_*), and bytes per element.
inline int64_t vec_elems(bool int8) { return int8 ? 16 : 8; }
inline int64_t item_bytes(bool int8) { return int8 ? 1 : 2; }

// Why no kernel runs a one-token GEMV (n_sel experts) of this shape, or "".
std::string shape_refusal(bool int8, int64_t N, int64_t K, int n_sel);
// Why `k` cannot run a one-token GEMV (n_sel experts) of this shape, or ""
// (a kernel the GPU lacks is not refused: the launch falls back itself).
std::string refusal(const Kernel& k, bool int8, int64_t N, int64_t K, int n_sel);
// The same, `gather` or not (the above: n_sel > 1).
std::string refusal(const Kernel& k, bool int8, int64_t N, int64_t K, int n_sel, bool gather);
// The decode step's SwiGLU (rows of K weights) and combine (their table
// entries, `use`); the int8 SwiGLU also takes batches of one load
// (docs/decisions/0059) and the dp4a kernel (0065), the bf16 one the
// row-block kernel.
std::string swiglu_refusal(const Kernel& k, bool int8, int64_t K);
std::string combine_refusal(const Kernel& k, bool int8);

// Why `e` can run none of the shapes its bucket holds (each refused as the
// dispatch refuses it, for its `use`), or "": such an entry would be passed
// over for every shape and the generic rule choose.
std::string entry_refusal(const TableEntry& e);

// The bulk kernel's rows per ring buffer for k at this shape (gather: a
// gather_gemv, whose N must be even for 2).
int bulk_rows_per_buffer(const Bulk& k, bool int8, int64_t N, int64_t K, bool gather);

}  // namespace kb::gemv
