#include <algorithm>
#include <cstdio>

#include "reports/gate_writers.h"

namespace kb {

namespace {

std::string opt_value(const std::optional<double>& v) { return v ? show_value(*v) : "-"; }

std::string percent(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", rel * 100);
  return buf;
}

}  // namespace

std::string gate_line(const GateKeyResult& k) {
  std::string s = std::string(gate_status_name(k.status)) + " " + key_label(k) + ": ";
  if (k.value) {
    s += show_value(*k.value);
    if (k.baseline && k.change)
      s += " (baseline " + show_value(*k.baseline) + ", " + show_change(*k.change) + ")";
    else
      s += " (no baseline)";
  } else {
    s += "no value";
  }
  return s + ": " + k.why;
}

std::string gate_console(const GateReport& r) {
  const std::vector<std::string> head = {"status", "name",     "shape",  "dtype", "metric",
                                         "arch",   "value",    "baseline", "change", "target"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& k : r.keys) {
    std::string arch = k.arch;
    if (!k.device.empty() && k.device != "cuda") arch += " (" + k.device + ")";
    cells.push_back({gate_status_name(k.status), k.name, k.shape.empty() ? "-" : k.shape, k.dtype,
                     k.metric, arch.empty() ? "-" : arch, opt_value(k.value),
                     opt_value(k.baseline), k.change ? show_change(*k.change) : "-",
                     opt_value(k.target)});
  }
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      const bool numeric = i >= 6;
      std::string pad(w[i] - c[i].size(), ' ');
      s += numeric ? pad + c[i] : c[i] + pad;
      if (i + 1 < c.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };

  std::string out = "kgate check: " + std::to_string(r.inputs.size()) + " file(s), " +
                    std::to_string(r.rows) + " rows; window " + std::to_string(r.window) +
                    " runs, min gap " + percent(r.min_gap) + (r.strict ? ", strict" : "") + "\n";
  for (const auto& g : r.gated_runs) out += "gated " + g + "\n";
  out += "\n" + line(head);
  std::vector<std::string> rule;
  for (size_t x : w) rule.push_back(std::string(x, '-'));
  out += line(rule);
  for (const auto& c : cells) out += line(c);

  bool any = false;
  for (const auto& k : r.keys) {
    if (k.status != GateStatus::fail && k.status != GateStatus::inconclusive) continue;
    if (!any) out += "\n";
    any = true;
    out += gate_line(k) + "\n";
  }
  return out + "\n" + r.summary() + "\n";
}

}  // namespace kb
