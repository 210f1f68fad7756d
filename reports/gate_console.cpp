#include "reports/console_table.h"
#include "reports/format.h"
#include "reports/gate_result.h"

namespace kb {

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

std::string shown_status(const GateReport& r, const GateKeyResult& k) {
  if (r.folded(k)) return "new";
  std::string s = gate_status_name(k.status);
  // An inconclusive throttled key already says so in its reason.
  if (k.throttled && k.status != GateStatus::inconclusive) s += " (throttled)";
  return s;
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

std::string gate_console(const GateReport& r, bool all) {
  std::string out = "kgate check: " + std::to_string(r.inputs.size()) + " file(s), " +
                    std::to_string(r.rows) + " rows; window " + std::to_string(r.window) +
                    " runs, min gap " + percent(r.min_gap) + (r.strict ? ", strict" : "") + "\n";
  for (const auto& g : r.gated_runs) out += "gated " + g.describe() + "\n";
  if (!r.provenance().empty()) out += r.provenance() + "\n";

  if (all) {
    const std::vector<std::string> head = {"status", "name",  "shape",    "dtype",  "metric",
                                           "arch",   "value", "baseline", "change", "target"};
    std::vector<std::vector<std::string>> cells;
    for (const auto& k : r.keys) {
      std::string arch = k.arch;
      if (!k.device.empty() && k.device != "cuda") arch += " (" + k.device + ")";
      cells.push_back({shown_status(r, k), k.name, k.shape.empty() ? "-" : k.shape, k.dtype,
                       k.metric, arch.empty() ? "-" : arch, show_value(k.value),
                       show_value(k.baseline), show_change(k.change), show_value(k.target)});
    }
    out += "\n" + text_table(head, cells, 6, head.size() - 1);
  }

  // A line per failure and inconclusive key (the keys too noisy to gate in
  // one: they would say it every night), per note, per throttled pass.
  std::string lines;
  for (const auto& f : r.input_failures) lines += "FAIL " + f.rule + " " + f.text() + "\n";
  for (const auto& k : r.keys) {
    if (k.status != GateStatus::fail && k.status != GateStatus::inconclusive) continue;
    if (r.folded(k) || k.rule == "too noisy") continue;
    lines += gate_line(k) + "\n";
    if (k.status == GateStatus::fail && k.last_good) lines += "    " + last_good_text(k) + "\n";
  }
  std::string noisy = too_noisy_line(r);
  if (!noisy.empty()) lines += noisy + "\n";
  for (const auto& k : r.keys)
    if (!k.note.empty()) lines += "note " + key_label(k) + ": " + k.note + "\n";
  for (const auto& k : r.keys)
    if (k.throttled && (k.status == GateStatus::pass || r.folded(k)))
      lines += "throttled " + key_label(k) + ": " + show_value(k.value) +
               ": the run was throttled (SM clock low): its value may be low\n";
  if (!lines.empty()) out += "\n" + lines;
  if (!r.gpu_findings.empty()) {
    out += "\nGPU findings (a board behind its siblings, not a code regression):\n";
    for (const auto& g : r.gpu_findings)
      out += "slow GPU " + g.gpu + " (" + g.arch + "): " + g.why + "\n";
  }

  std::string note = r.history_note();
  size_t pass = r.count(GateStatus::pass), skipped = r.count(GateStatus::skipped);
  if (!note.empty() || (!all && pass + skipped)) out += "\n";
  if (!note.empty()) out += note + "\n";
  if (!all && pass + skipped)
    out += std::to_string(pass) + " passed, " + std::to_string(skipped) +
           " skipped: not listed (kgate check --all lists every key)\n";
  return out + "\n" + r.summary() + "\n";
}

}  // namespace kb
