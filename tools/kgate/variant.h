// A row's variant as the gate reads it: the kernel it names, and the
// `inject=` fields kbench --inject-slowdown adds (a gate self-test of the
// same kernel, not another kernel).
#pragma once

#include <string>
#include <string_view>

namespace kb {

inline bool injected_field(std::string_view f) { return f.rfind("inject=", 0) == 0; }

// The `;` fields of a variant that are (`injected`) or are not `inject=`
// fields, joined again in their order.
inline std::string variant_fields(std::string_view variant, bool injected) {
  std::string out;
  size_t start = 0;
  while (start <= variant.size()) {
    size_t end = variant.find(';', start);
    if (end == std::string_view::npos) end = variant.size();
    std::string_view f = variant.substr(start, end - start);
    if (injected_field(f) == injected) out += (out.empty() ? "" : ";") + std::string(f);
    start = end + 1;
  }
  return out;
}

// The kernel a row's variant names: the variant without `inject=` fields
// (kbench --inject-slowdown marks its rows so; the kernel is the same).
inline std::string kernel_identity(std::string_view variant) {
  if (variant.find("inject=") == std::string_view::npos) return std::string(variant);
  return variant_fields(variant, false);
}

// The `inject=` fields of a variant, "" where it has none.
inline std::string injected_part(std::string_view variant) { return variant_fields(variant, true); }

}  // namespace kb
