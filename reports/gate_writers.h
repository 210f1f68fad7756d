// The formats of a gate report; each only reads the GateReport.
// - console: a table of every key, then one line per failure and per
//   inconclusive key (key, value, baseline, change, why), then the summary;
// - Markdown: fits a CI step summary ($GITHUB_STEP_SUMMARY, GitLab notes):
//   the summary as a heading, failures and inconclusive keys in a table,
//   passes and warnings folded away;
// - JUnit XML: one testcase per key; a failure carries the reason,
//   inconclusive and skipped keys are <skipped> (a failure under --strict);
// - HTML: one self-contained file (inline CSS, SVG and a few lines of JS, no
//   external resources): per key its history as a sparkline and its status.
#pragma once

#include <string>

#include "reports/gate_result.h"

namespace kb {

std::string gate_console(const GateReport& r);
// The console's per-key line: "FAIL <key>: <value> (baseline <b>, <change>): <why>".
std::string gate_line(const GateKeyResult& k);
// One line naming every key too noisy to gate ("" when none).
std::string too_noisy_line(const GateReport& r);
std::string gate_markdown(const GateReport& r);
std::string gate_junit(const GateReport& r);
std::string gate_html(const GateReport& r);

// & < > " escaped for HTML text and attributes; for XML (JUnit) also ',
// and control characters other than tab and line ends dropped (XML 1.0
// does not allow them at all).
enum class Markup { html, xml };
std::string escape_markup(const std::string& s, Markup m);

}  // namespace kb
