// Attempts: re-measurements of a nightly run carry its run id and a suffix,
// `<base run_id>/<N>`, N >= 2 (docs/csv-schema.md); no suffix is attempt 1.
#pragma once

#include <cstdint>
#include <string_view>

namespace kb {

struct RunAttempt {
  std::string_view base;  // the run the rows belong to
  uint32_t attempt = 1;   // 1 = the nightly's own measurement
};

// "run/2" -> {"run", 2}. Only a suffix of digits without a leading zero,
// up to 1,000,000, after a non-empty base counts; else attempt 1.
inline RunAttempt split_attempt(std::string_view run_id) {
  RunAttempt r{run_id, 1};
  size_t slash = run_id.rfind('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == run_id.size()) return r;
  std::string_view digits = run_id.substr(slash + 1);
  if (digits.size() > 7 || digits[0] == '0') return r;
  uint32_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return r;
    n = n * 10 + static_cast<uint32_t>(c - '0');
  }
  if (n > 1000000) return r;
  return {run_id.substr(0, slash), n};
}

// A run id as kbench writes it: 1 to 128 of A-Z a-z 0-9 - _ . : +, then
// optionally an attempt `/<N>`; kgate cannot place a row with another.
inline bool well_formed_run_id(std::string_view run_id) {
  const RunAttempt a = split_attempt(run_id);
  if (a.base.empty() || a.base.size() > 128) return false;
  for (char c : a.base) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == ':' || c == '+';
    if (!ok) return false;
  }
  return true;
}

}  // namespace kb
