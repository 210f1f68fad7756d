// Attempts: the re-measurements of one nightly run (docs/csv-schema.md).
// `kbench run --rerun` appends rows for the points kgate suspects, with the
// run id of the night they confirm and a suffix: `<base run_id>/<N>`, N >= 2
// the attempt. A run id without such a suffix is attempt 1. No column was
// added for this, so history files written before attempts keep appending.
// kgate and the dashboard both read run ids through this one function.
#pragma once

#include <cstdint>
#include <string_view>

namespace kb {

struct RunAttempt {
  std::string_view base;  // the run the rows belong to
  uint32_t attempt = 1;   // 1 = the nightly's own measurement
};

// "20261125T101500Z-3fa9c1/2" -> {"20261125T101500Z-3fa9c1", 2}. Only a
// suffix of decimal digits without a leading zero, after a non-empty base,
// counts ("/1" is attempt 1 spelled out); anything else ("a/", "/2", "a/02",
// "a/x") is a plain run id, attempt 1. Attempts above 1,000,000 are not
// attempts either (no rerun makes that many).
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

// A run id as kbench writes it: 1 to 128 characters of A-Z a-z 0-9 - _ . :
// + (kbench's --run-id takes no others), then optionally `/<N>`, an attempt
// split_attempt reads (N from 1 to 1,000,000, no leading zero). Anything
// else ("", "a/02", "a/x", "/2", a space) is a row kgate cannot place in a
// run, so it cannot trust it.
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
