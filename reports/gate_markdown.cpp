#include "reports/format.h"
#include "reports/gate_result.h"

namespace kb {

namespace {

std::string cell(const std::string& s) { return markdown_text(s); }

// GitHub caps a step summary at 1 MiB: a suite of thousands of passing keys
// must not push the failures out of it.
constexpr size_t kMaxPassRows = 500;

}  // namespace

std::string gate_markdown(const GateReport& r) {
  std::string out = "## kgate: " + r.summary() + "\n\n";
  out += "History window " + std::to_string(r.window) + " runs, min gap " + percent(r.min_gap) +
         (r.strict ? ", strict" : "") + ", " + std::to_string(r.rows) + " rows read.";
  for (const auto& g : r.gated_runs) out += " Gated " + cell(g.describe()) + ".";
  if (!r.provenance().empty()) out += " " + cell(r.provenance()) + ".";
  out += "\n\n";
  for (const auto& f : findings(r))
    out += "- **" + cell(f.substr(0, f.find(':'))) + "**" + cell(f.substr(f.find(':'))) + "\n";
  if (!findings(r).empty()) out += "\n";
  if (!r.history_note().empty()) out += cell(r.history_note()) + ".\n\n";

  if (!r.input_failures.empty()) {
    out += "**Input that fails the night** (tonight's rows kgate cannot trust):\n\n";
    for (const auto& f : r.input_failures)
      out += "- **" + cell(f.rule) + "** " + cell(f.text()) + "\n";
    out += "\n";
  }

  // Failures and inconclusive keys in the table, except the keys too new
  // (one line above) and too noisy (one line below) to gate; the rest folded.
  auto shown = [&](const GateKeyResult& k) {
    return (k.status == GateStatus::fail || k.status == GateStatus::inconclusive) && !r.folded(k);
  };
  auto listed = [&](const GateKeyResult& k) { return shown(k) && k.rule != "too noisy"; };
  size_t n_shown = 0, n_listed = 0;
  for (const auto& k : r.keys) {
    n_shown += shown(k);
    n_listed += listed(k);
  }
  if (n_listed) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& k : r.keys) {
      if (!listed(k)) continue;
      std::string link = chart_link(r, k), label = cell(key_label(k));
      if (!link.empty()) label = "[" + label + "](" + link + ")";
      rows.push_back({k.status == GateStatus::fail ? "**FAIL**" : "inconclusive", label,
                      show_value(k.value), show_value(k.baseline), show_change(k.change),
                      cell(why_with_history(k))});
    }
    out += markdown_table({"status", "key", "value", "baseline", "change", "why"}, "llrrr", rows) +
           "\n";
  }
  if (std::string noisy = too_noisy_line(r); !noisy.empty()) out += cell(noisy) + "\n\n";
  bool any_note = false;
  for (const auto& k : r.keys) {
    if (k.note.empty()) continue;
    if (!any_note) out += "Notes:\n\n";
    any_note = true;
    out += "- " + cell(key_label(k)) + ": " + cell(k.note) + "\n";
  }
  if (any_note) out += "\n";

  size_t rest = r.keys.size() - n_shown;
  if (rest) {
    size_t fresh = r.count_folded();
    out += "<details><summary>" + std::to_string(r.count(GateStatus::pass)) + " passed, " +
           (fresh ? std::to_string(fresh) + " new, " : std::string()) +
           std::to_string(r.count(GateStatus::skipped)) + " skipped</summary>\n\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& k : r.keys) {
      if (shown(k)) continue;
      if (rows.size() == kMaxPassRows) break;
      rows.push_back({shown_status(r, k), cell(key_label(k)), show_value(k.value),
                      show_value(k.baseline), show_change(k.change), show_value(k.target)});
    }
    out +=
        markdown_table({"status", "key", "value", "baseline", "change", "target"}, "llrrrr", rows);
    if (rest > kMaxPassRows)
      out += "\n" + std::to_string(rest - kMaxPassRows) + " more not shown.\n";
    out += "\n</details>\n\n";
  }

  if (!r.gpu_findings.empty()) {
    out +=
        "**GPU findings** (a board behind its siblings of the same model in the run; not a "
        "code regression):\n\n";
    for (const auto& g : r.gpu_findings)
      out += "- slow GPU **" + cell(g.gpu) + "** (" + cell(g.arch) + "): " + cell(g.why) + "\n";
    out += "\n";
  }

  if (!r.warnings.empty()) {
    out += "<details><summary>" + std::to_string(r.warnings.size()) +
           " input warning(s)</summary>\n\n";
    for (const auto& w : r.warnings) out += "- " + cell(w) + "\n";
    out += "\n</details>\n";
  }
  return out;
}

std::string gate_html(const GateReport& r) {
  return html_page("kgate: " + r.summary(), "td b, h2 b { color: #b3261e; }\n",
                   markdown_html(gate_markdown(r)));
}

}  // namespace kb
