// The rows of the run `kgate bringup` reports on: one run of one GPU, its
// own measurement (attempt 1). Shared by the report's sections
// (bringup.cpp, bringup_a100.cpp) and the drafted target file
// (bringup_draft.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/datasheets.h"
#include "tools/kgate/bringup.h"
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

// The limiter a row's variant names ("memory", "compute", "launch"; "" = none).
inline std::string bound_of(const std::string& variant) {
  const auto p = variant.find("bound=");
  if (p == std::string::npos) return "";
  auto e = variant.find(';', p);
  return variant.substr(p + 6, e == std::string::npos ? std::string::npos : e - p - 6);
}

// The peak of a row's dtype in a datasheet entry.
inline std::optional<double> dtype_peak(const Datasheet* d, const std::string& dtype) {
  if (!d) return std::nullopt;
  if (dtype == "bfloat16") return d->bf16_tflops.value;
  if (dtype == "float16") return d->f16_tflops.value;
  if (dtype == "int8") return d->int8_tops.value;
  if (dtype == "fp8_e4m3") return d->fp8_tflops.value;
  if (dtype == "float32") return d->tf32_tflops.value;
  return std::nullopt;
}

std::string targets_dir_name(const BringupInputs& in);

// The report's section of the seed's rows against the seed's A100 targets
// (bringup_a100.cpp).
void add_a100(BringupReport& r, const BringupInputs& in, const RunView& here, const Datasheet* ds);

}  // namespace kb
