// A GEMV dispatch table's entries as data: the bucket of shapes an entry
// holds and the kernel configuration that runs them. The tuning file's
// `gemv` section reads into these (core/tuning.h); kernels/gemv/dispatch.h
// chooses by them. No CUDA.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/gemv_config.h"

namespace kb::gemv {

// What runs the shape: a GEMV alone, or in the decode step (launched as a
// programmatic dependent): its plain GEMVs, its one-token GEMV with the
// SwiGLU (dense, or both experts' gather: rows 2F), its MoE down gather
// with the weighted sum (combine).
enum class Use { standalone, decode, swiglu, combine };

struct Bucket {
  bool int8 = false;
  bool gather = false;  // a gather_gemv (n_sel >= 2), or one matrix
  Use use = Use::standalone;
  int64_t rows_min = 1, rows_max = std::numeric_limits<int64_t>::max();
  int64_t row_bytes_min = 1, row_bytes_max = std::numeric_limits<int64_t>::max();
  int64_t max_bytes = 0;  // over the selected experts; 0: no cap
  // An empty shape (N, K or n_sel below 1) is in no bucket.
  bool holds(bool int8, int64_t N, int64_t K, int n_sel, Use use) const;
};

const char* use_name(Use u);
std::optional<Use> parse_use(const std::string& name);

struct TableEntry {
  Bucket bucket;
  Kernel kernel;
  std::string origin;  // "targets/tuning/h100-sxm5-80gb.json gemv[3]", "generic rule: …"
};

}  // namespace kb::gemv
