#include "core/gemv_table.h"

#include "core/gemv_refusal.h"

namespace kb::gemv {

bool Bucket::holds(bool i8, int64_t N, int64_t K, int n_sel, Use u) const {
  if (i8 != int8 || (n_sel > 1) != gather || u != use) return false;
  if (N < 1 || K < 1 || n_sel < 1 || N < rows_min || N > rows_max) return false;
  // Bounds compared by division: an absurd shape's bytes may not fit an
  // int64_t, and wrapped they could land inside the bucket.
  const int64_t item = item_bytes(i8);
  if (K > row_bytes_max / item) return false;
  const int64_t row_bytes = K * item;  // at most row_bytes_max
  if (row_bytes < row_bytes_min) return false;
  return max_bytes == 0 || N <= max_bytes / n_sel / row_bytes;
}

const char* use_name(Use u) {
  static const char* const names[] = {"standalone", "decode", "swiglu", "combine"};
  return names[static_cast<int>(u)];
}

std::optional<Use> parse_use(const std::string& name) {
  for (Use u : {Use::standalone, Use::decode, Use::swiglu, Use::combine})
    if (name == use_name(u)) return u;
  return std::nullopt;
}

}  // namespace kb::gemv
