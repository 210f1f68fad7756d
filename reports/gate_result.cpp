#include "reports/gate_result.h"

#include <algorithm>
#include <cctype>
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

namespace {

// How much worse the newest run is than its baseline (negative: better).
double drop_of(const GateKeyResult& k) {
  if (!k.change) return -1e9;
  return k.lower_is_better ? *k.change : -*k.change;
}

std::string url_part(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%%%02X", c);
    o += std::isalnum(c) || c == '-' || c == '.' || c == '_' ? std::string(1, static_cast<char>(c))
                                                             : std::string(hex);
  }
  return o;
}

}  // namespace

std::vector<std::string> findings(const GateReport& r) {
  std::vector<double> drops;
  size_t judged = 0;
  for (const auto& k : r.keys) {
    judged += k.change.has_value();
    if (drop_of(k) > r.min_gap) drops.push_back(drop_of(k));
  }
  if (drops.size() < 2) return {};  // one key's drop is its own line below
  std::sort(drops.begin(), drops.end());
  const double edges[] = {r.min_gap, 0.05, 0.1, 0.2, 1e9};
  std::string sizes;
  for (int b = 0; b < 4; ++b) {
    size_t n = 0;
    for (double d : drops) n += d > edges[b] && d <= edges[b + 1];
    if (n)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(n) + " by " + percent(edges[b], 0) +
               (b < 3 ? "–" + percent(edges[b + 1], 0) : std::string(" or more"));
  }
  std::vector<std::string> out = {std::to_string(drops.size()) + " of " + std::to_string(judged) +
                                  " keys with a baseline dropped more than " + percent(r.min_gap) +
                                  ": " + sizes};
  if (drops.size() >= 5 && drops.size() * 4 >= judged)
    out.push_back("broad: " + std::to_string(drops.size()) + " of " + std::to_string(judged) +
                  " keys moved together (" + percent(drops.front()) + " to " +
                  percent(drops.back()) +
                  " worse in one run): more likely the machine, the driver or a shared "
                  "dependency than one kernel");
  return out;
}

std::string failing_since(const GateKeyResult& k) {
  if (k.status != GateStatus::fail || !k.last_good) return "";
  const auto& l = k.history_runs_labels;
  auto it = std::find(l.begin(), l.end(), k.last_good->run);
  if (it == l.end() || it + 1 == l.end()) return "";  // tonight only: "last good" says it
  return "failing since run " + *(it + 1);
}

std::string why_with_history(const GateKeyResult& k) {
  std::string why = k.why;
  if (!failing_since(k).empty()) why += "; " + failing_since(k);
  if (k.last_good) why += "; " + last_good_text(k);
  return why;
}

std::string chart_link(const GateReport& r, const GateKeyResult& k) {
  if (r.dashboard.empty()) return "";
  std::string q = k.shape + " " + k.metric + (k.device == "cuda" ? "" : " " + k.device);
  return r.dashboard + "#charts?q=" + url_part(q) + "&exp=" + url_part(k.name) +
         "&dtype=" + url_part(k.dtype) + "&gpu=" + url_part(k.arch);
}

void order_worst_first(GateReport& r) {
  std::stable_sort(r.keys.begin(), r.keys.end(), [](const auto& a, const auto& b) {
    return a.status != b.status ? a.status < b.status : drop_of(a) > drop_of(b);
  });
}

std::string show_value(double v) {
  const double a = std::fabs(v);
  return format_double(a >= 1000 && a < 1e7 ? "%.0f" : "%.4g", v);
}

std::string show_value(const std::optional<double>& v) { return v ? show_value(*v) : "-"; }

std::string host_target_met(double launch_us, double file_launch_us, double target_here) {
  return std::string(kHostLaunchesSlower) + " (" + show_value(launch_us) + " vs " +
         show_value(file_launch_us) + " us): the target here is " + show_value(target_here) +
         ", met";
}

std::string show_change(const std::optional<double>& rel) { return rel ? show_change(*rel) : "-"; }

std::string show_change(double rel) {
  if (std::fabs(rel * 100) < 0.05) return "0.0%";
  return format_double("%+.1f%%", rel * 100);
}

}  // namespace kb
