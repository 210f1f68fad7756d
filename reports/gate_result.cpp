#include "reports/gate_result.h"

#include <cmath>
#include <cstdio>

namespace kb {

const char* gate_status_name(GateStatus s) {
  switch (s) {
    case GateStatus::fail:
      return "FAIL";
    case GateStatus::inconclusive:
      return "inconclusive";
    case GateStatus::pass:
      return "pass";
    case GateStatus::skipped:
      return "skipped";
  }
  return "?";
}

size_t GateReport::count(GateStatus s) const {
  size_t n = 0;
  for (const auto& k : keys) n += k.status == s;
  return n;
}

int GateReport::exit_code() const {
  if (count(GateStatus::fail)) return 1;
  if (strict && count(GateStatus::inconclusive)) return 1;
  return 0;
}

std::string GateReport::summary() const {
  size_t f = count(GateStatus::fail), i = count(GateStatus::inconclusive),
         p = count(GateStatus::pass), s = count(GateStatus::skipped);
  std::string verdict = exit_code() ? "FAIL" : "PASS";
  std::string out = verdict + ": " + std::to_string(f) +
                    (f == 1 ? " regression, " : " regressions, ") + std::to_string(i) +
                    " inconclusive" + (strict && i ? " (failing: --strict)" : "") + ", " +
                    std::to_string(p) + " passed, " + std::to_string(s) + " skipped (" +
                    std::to_string(keys.size()) + (keys.size() == 1 ? " key)" : " keys)");
  return out;
}

std::string key_label(const GateKeyResult& k) {
  std::string s = k.name;
  if (!k.shape.empty()) s += " [" + k.shape + "]";
  s += " " + k.dtype + " " + k.metric;
  if (!k.arch.empty()) s += " @ " + k.arch;
  if (!k.device.empty() && k.device != "cuda") s += " (" + k.device + ")";
  return s;
}

std::string show_value(double v) {
  char buf[64];
  double a = std::fabs(v);
  if (a != 0 && (a >= 1e7 || a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.4g", v);
  else if (a >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string show_change(double rel) {
  char buf[32];
  double pct = rel * 100;
  if (std::fabs(pct) < 0.05) return "0.0%";
  std::snprintf(buf, sizeof buf, "%+.1f%%", pct);
  return buf;
}

}  // namespace kb
