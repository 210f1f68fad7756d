#include "core/gemv_config.h"

#include <cstdio>
#include <cstring>

namespace kb::gemv {

namespace {

// sscanf that must consume the whole of `s` (n: the fields it must fill).
template <typename... Ints>
bool scan_all(const char* s, const char* fmt, int n, Ints*... out) {
  int used = -1;
  const std::string f = std::string(fmt) + "%n";
  const int got = std::sscanf(s, f.c_str(), out..., &used);
  return got == n && used >= 0 && s[used] == '\0';
}

// Whether every count is 1 or more: a name with a count of 0 (warps, stages,
// rows a warp) is no configuration, and a divisor in refusal().
template <typename... Ints>
bool counts(Ints... v) {
  return ((v >= 1) && ...);
}
}  // namespace

const char* family_name(const Kernel& k) {
  return std::visit(
      overloaded{[](const General&) { return "general"; },
                 [](const OneLoad&) { return "one_load"; }, [](const Tile&) { return "tile"; },
                 [](const Mma&) { return "mma"; }, [](const Bulk&) { return "bulk"; },
                 [](const RowBlock&) { return "row_block"; }, [](const Dp4a&) { return "dp4a"; }},
      k);
}

std::string kernel_name(const Kernel& k) {
  char b[64];
  std::visit(overloaded{[&](const General& c) {
                          std::snprintf(b, sizeof b, "R%dU%dW%dP%dK%d", c.rows_per_warp, c.unroll,
                                        c.warps, c.pipeline ? 1 : 0, c.k_split);
                          if (c.min_blocks > 0)
                            std::snprintf(b + std::strlen(b), sizeof b - std::strlen(b), "B%d",
                                          c.min_blocks);
                        },
                        [&](const OneLoad& c) { std::snprintf(b, sizeof b, "one%d", c.warps); },
                        [&](const Tile& c) { std::snprintf(b, sizeof b, "T%d", c.warps); },
                        [&](const Mma& c) {
                          std::snprintf(b, sizeof b, "%sM%dW%dK%d%s", c.diag ? "G" : "", c.unroll,
                                        c.warps, c.k_split, c.depth == 3 ? "D3" : "");
                        },
                        [&](const Bulk& c) {
                          std::snprintf(b, sizeof b, "%sB%dW%dS%dO%dR%d", c.mma ? "M" : "",
                                        c.stages, c.warps, c.blocks_per_sm, c.rows,
                                        c.rows_per_buffer);
                        },
                        [&](const RowBlock& c) { std::snprintf(b, sizeof b, "RB%d", c.loads); },
                        [&](const Dp4a& c) {
                          std::snprintf(b, sizeof b, "DP%dU%dK%dW%d", c.rows_per_warp, c.unroll,
                                        c.k_split, c.warps);
                        }},
             k);
  std::string s = b;
  if (s.rfind("MB", 0) == 0) s = "BM" + s.substr(2);  // tensor-core consumers: "BM3W8S2O2R2"
  return s;
}

std::optional<Kernel> parse_kernel(const std::string& name) {
  const char* s = name.c_str();
  if (name == "one" || name == "one4") return OneLoad{4};
  if (name == "one8") return OneLoad{8};
  int a = 0, b = 0, c = 0, d = 0, e = 0;
  if (scan_all(s, "T%d", 1, &a) && counts(a)) return Tile{a};
  if (scan_all(s, "RB%d", 1, &a) && counts(a)) return RowBlock{a};
  if (scan_all(s, "DP%dU%dK%dW%d", 4, &a, &b, &c, &d) && counts(a, b, c, d))
    return Dp4a{a, b, c, d};
  if (name.rfind("GM", 0) == 0 || name.rfind("M", 0) == 0) {
    const bool diag = name[0] == 'G';
    const char* m = s + (diag ? 1 : 0);
    Mma k;
    k.diag = diag;
    if (scan_all(m, "M%dW%dK%dD%d", 4, &a, &b, &c, &d) && counts(a, b, c, d)) {
      k.unroll = a, k.warps = b, k.k_split = c, k.depth = d;
      return k;
    }
    if (scan_all(m, "M%dW%dK%d", 3, &a, &b, &c) && counts(a, b, c)) {
      k.unroll = a, k.warps = b, k.k_split = c, k.depth = 2;
      return k;
    }
    return std::nullopt;
  }
  if (name[0] == 'B') {
    const bool mma = name.rfind("BM", 0) == 0;
    const char* m = s + (mma ? 2 : 1);
    Bulk k;
    k.mma = mma;
    // O0 (contiguous rows) and R0 (rows per buffer by size) are choices, not counts.
    if (scan_all(m, "%dW%dS%dO%dR%d", 5, &a, &b, &c, &d, &e) && counts(a, b, c) && d >= 0 &&
        e >= 0) {
      k.stages = a, k.warps = b, k.blocks_per_sm = c, k.rows = d, k.rows_per_buffer = e;
      return k;
    }
    if (scan_all(m, "%dW%dS%dO%d", 4, &a, &b, &c, &d) && counts(a, b, c) && d >= 0) {
      k.stages = a, k.warps = b, k.blocks_per_sm = c, k.rows = d;
      return k;
    }
    if (scan_all(m, "%dW%dS%d", 3, &a, &b, &c) && counts(a, b, c)) {
      k.stages = a, k.warps = b, k.blocks_per_sm = c;
      return k;
    }
    return std::nullopt;
  }
  int f = 0;
  if (scan_all(s, "R%dU%dW%dP%dK%dB%d", 6, &a, &b, &c, &d, &e, &f) && (d == 0 || d == 1) &&
      counts(a, b, c, e, f))
    return General{a, b, c, d == 1, e, f};
  if (scan_all(s, "R%dU%dW%dP%dK%d", 5, &a, &b, &c, &d, &e) && (d == 0 || d == 1) &&
      counts(a, b, c, e))
    return General{a, b, c, d == 1, e};
  return std::nullopt;
}

}  // namespace kb::gemv
