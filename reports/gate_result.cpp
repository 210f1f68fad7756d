#include "reports/gate_result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "reports/format.h"

namespace kb {

const char* gate_status_name(GateStatus s) {
  static const char* const names[] = {"FAIL", "inconclusive", "pass", "skipped"};
  return names[static_cast<int>(s)];
}

size_t GateReport::count(GateStatus s) const {
  size_t n = 0;
  for (const auto& k : keys) n += k.status == s;
  return n;
}

int GateReport::exit_code() const {
  if (!input_failures.empty() || count(GateStatus::fail)) return 1;
  if (strict && count(GateStatus::inconclusive)) return 1;
  return 0;
}

std::string describe_run(const RunContext& r) {
  std::string s = "run " + r.run;
  std::string ctx;
  auto add = [&](const std::string& what, const std::string& v) {
    if (!v.empty()) ctx += (ctx.empty() ? "" : ", ") + what + v;
  };
  add("commit ", r.git_sha);
  add("driver ", r.driver);
  add("CUDA ", r.cuda);
  if (!r.timestamp.empty())
    s += " (" + r.timestamp + (ctx.empty() ? ")" : "; " + ctx + ")");
  else if (!ctx.empty())
    s += " (" + ctx + ")";
  return s;
}

std::string GatedRun::describe() const {
  return (arch.empty() ? std::string("(no arch)") : arch) + ": " + describe_run(context) + ", " +
         std::to_string(keys) + (keys == 1 ? " key" : " keys");
}

bool GateReport::folded(const GateKeyResult& k) const {
  return !strict && k.status == GateStatus::inconclusive && k.rule == "too little history";
}

size_t GateReport::count_folded() const {
  size_t n = 0;
  for (const auto& k : keys) n += folded(k);
  return n;
}

std::string GateReport::summary() const {
  size_t f = count(GateStatus::fail), i = count(GateStatus::inconclusive),
         p = count(GateStatus::pass), s = count(GateStatus::skipped);
  size_t fresh = count_folded(), on_target = 0, throttled = 0;
  for (const auto& k : keys) {
    on_target += folded(k) && k.target;
    throttled += k.throttled;
  }
  i -= fresh;
  std::string verdict = exit_code() ? "FAIL" : "PASS";
  std::string out = verdict + ": ";
  if (size_t n = input_failures.size())
    out += std::to_string(n) + (n == 1 ? " input failure" : " input failures") +
           " (tonight's input cannot be trusted), ";
  out += std::to_string(f) + (f == 1 ? " regression, " : " regressions, ") + std::to_string(i) +
         " inconclusive" + (strict && i ? " (failing: --strict)" : "") + ", " + std::to_string(p) +
         " passed, ";
  if (fresh) out += std::to_string(fresh) + " new (" + std::to_string(on_target) + " on target), ";
  out += std::to_string(s) + " skipped (" + std::to_string(keys.size()) +
         (keys.size() == 1 ? " key" : " keys");
  if (throttled) out += "; " + std::to_string(throttled) + " throttled";
  return out + ")";
}

std::string GateReport::history_note() const {
  size_t fresh = 0, on_target = 0;
  int lo = 0, hi = 0;
  for (const auto& k : keys) {
    if (!folded(k)) continue;
    lo = fresh ? std::min(lo, k.history_runs) : k.history_runs;
    hi = fresh ? std::max(hi, k.history_runs) : k.history_runs;
    ++fresh;
    on_target += k.target.has_value();
  }
  if (!fresh) return "";
  std::string runs =
      lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  const size_t none = fresh - on_target;
  return std::to_string(fresh) + (fresh == 1 ? " key has" : " keys have") +
         " too little history for the history rule (" + runs + " earlier run" +
         (hi == 1 ? "" : "s") + (fresh == 1 ? "" : " each") + "; it needs " +
         std::to_string(min_history) + "): judged against " +
         (fresh == 1 ? "its target" : "their targets") + " only: " + std::to_string(on_target) +
         (on_target == 1 ? " meets its target, " : " meet their target, ") + std::to_string(none) +
         (none == 1 ? " has none" : " have none");
}

std::string GateReport::provenance() const {
  if (host.empty() && generated_at.empty()) return "";
  std::string s = "kgate ran";
  if (!host.empty()) s += " on " + host;
  if (!generated_at.empty()) s += " at " + generated_at;
  return s;
}

std::string last_good_text(const GateKeyResult& k) {
  if (!k.last_good) return "";
  std::string s = "last good: " + describe_run(*k.last_good);
  if (k.last_good_value) s += ": " + show_value(*k.last_good_value);
  return s;
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
  const double a = std::fabs(v);
  return format_double(a >= 1000 && a < 1e7 ? "%.0f" : "%.4g", v);
}

std::string show_value(const std::optional<double>& v) { return v ? show_value(*v) : "-"; }

std::string show_change(const std::optional<double>& rel) { return rel ? show_change(*rel) : "-"; }

std::string show_change(double rel) {
  if (std::fabs(rel * 100) < 0.05) return "0.0%";
  return format_double("%+.1f%%", rel * 100);
}

}  // namespace kb
