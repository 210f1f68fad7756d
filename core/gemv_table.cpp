#include "core/gemv_table.h"

namespace kb::gemv {

bool Bucket::holds(bool i8, int64_t N, int64_t K, int n_sel, Use u) const {
  const int64_t row_bytes = K * (i8 ? 1 : 2);
  return i8 == int8 && (n_sel > 1) == gather && u == use && N >= rows_min && N <= rows_max &&
         row_bytes >= row_bytes_min && row_bytes <= row_bytes_max &&
         (max_bytes == 0 || n_sel * N * row_bytes <= max_bytes);
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
