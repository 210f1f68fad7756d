#include <algorithm>
#include <cstdio>

#include "reports/console_table.h"
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
  const std::vector<std::string> head = {"status", "name",  "shape",    "dtype",  "metric",
                                         "arch",   "value", "baseline", "change", "target"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& k : r.keys) {
    std::string arch = k.arch;
    if (!k.device.empty() && k.device != "cuda") arch += " (" + k.device + ")";
    cells.push_back({gate_status_name(k.status), k.name, k.shape.empty() ? "-" : k.shape, k.dtype,
                     k.metric, arch.empty() ? "-" : arch, opt_value(k.value), opt_value(k.baseline),
                     k.change ? show_change(*k.change) : "-", opt_value(k.target)});
  }
  std::string out = "kgate check: " + std::to_string(r.inputs.size()) + " file(s), " +
                    std::to_string(r.rows) + " rows; window " + std::to_string(r.window) +
                    " runs, min gap " + percent(r.min_gap) + (r.strict ? ", strict" : "") + "\n";
  for (const auto& g : r.gated_runs) out += "gated " + g + "\n";
  out += "\n" + text_table(head, cells, 6, head.size() - 1);

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
