// The rows of the run `kgate bringup` reports on: one run of one GPU, its
// own measurement (attempt 1). Shared by the report (bringup.cpp) and the
// drafted target file (bringup_draft.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

struct RunView {
  const History* h = nullptr;
  uint32_t run = 0;
  std::string arch;
  std::vector<const Observation*> obs;
  const Key& key(const Observation* o) const { return h->keys()[o->key]; }
  const Observation* find(const std::string& name, const std::string& metric,
                          const std::string& dtype, const std::string& shape) const {
    for (const auto* o : obs) {
      const Key& k = key(o);
      if (k.name == name && k.metric == metric && k.dtype == dtype && k.shape == shape) return o;
    }
    return nullptr;
  }
  std::optional<double> probe(const std::string& metric) const {
    std::optional<double> best;
    for (const auto* o : obs)
      if (key(o).name == "roofline_probe" && key(o).metric == metric && o->measured())
        best = std::max(best.value_or(0), o->actual);
    return best;
  }
  // The fastest GEMM of a dtype in TFLOP/s (the suite's cuBLASLt GEMMs).
  std::optional<double> best_gemm(const std::string& dtype) const {
    std::optional<double> best;
    for (const auto* o : obs)
      if (key(o).name == "gemm" && key(o).metric == "tflops" && key(o).dtype == dtype &&
          o->measured())
        best = std::max(best.value_or(0), o->actual);
    return best;
  }
};

}  // namespace kb
