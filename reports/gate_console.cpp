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

std::string too_noisy_line(const GateReport& r) {
  std::string keys;
  size_t n = 0;
  for (const auto& k : r.keys) {
    if (k.rule != "too noisy") continue;
    keys += (n++ ? ", " : "") + key_label(k) + " (" + percent(k.noise) + ")";
  }
  if (!n) return "";
  return "inconclusive: " + std::to_string(n) + (n == 1 ? " key" : " keys") +
         " too noisy to gate (history noise above --max-noise; quieten the measurement): " + keys;
}

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

  // One line per failure and per inconclusive key; the keys too noisy to
  // gate say so in one line (they would say it every night), and notes
  // (a changed variant, an injected slowdown, re-measurements) one each.
  std::string lines;
  for (const auto& k : r.keys) {
    if (k.status != GateStatus::fail && k.status != GateStatus::inconclusive) continue;
    if (k.rule == "too noisy") continue;
    lines += gate_line(k) + "\n";
  }
  std::string noisy = too_noisy_line(r);
  if (!noisy.empty()) lines += noisy + "\n";
  for (const auto& k : r.keys)
    if (!k.note.empty()) lines += "note " + key_label(k) + ": " + k.note + "\n";
  if (!lines.empty()) out += "\n" + lines;
  return out + "\n" + r.summary() + "\n";
}

}  // namespace kb
