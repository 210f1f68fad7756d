// The formats of a gate report; each only reads the GateReport.
// Every format names the gated run (commit, driver, CUDA), the machine kgate
// ran on, each failing key's last good run, and throttled rows as such;
// keys inconclusive only for too little history are one line, not one each.
// - console: one line per failure and per inconclusive key (key, value,
//   baseline, change, why), the rest folded into counts (or, with `all`, a
//   table of every key), then the summary;
// - Markdown: fits a CI step summary ($GITHUB_STEP_SUMMARY, GitLab notes):
//   the summary as a heading, failures and inconclusive keys in a table,
//   passes and warnings folded away;
// - JUnit XML: one testcase per key; a failure carries the reason, a
//   failed (crashed) row is an <error>, inconclusive and skipped keys are
//   <skipped> (a failure under --strict), a new key that meets its target
//   passes; the testsuite carries timestamp, hostname and the run's context
//   as properties;
// - HTML: one self-contained file (inline CSS, SVG and a few lines of JS, no
//   external resources): per key its history as a sparkline and its status.
#pragma once

#include <string>

#include "reports/gate_result.h"

namespace kb {

// Without `all`, passes, skipped keys and keys too new for the history rule
// are folded into counts (`kgate check --all` lists every key in a table).
std::string gate_console(const GateReport& r, bool all = false);
// The console's per-key line: "FAIL <key>: <value> (baseline <b>, <change>): <why>".
std::string gate_line(const GateKeyResult& k);
// One line naming every key too noisy to gate ("" when none).
std::string too_noisy_line(const GateReport& r);
// The status as the reports show it: "FAIL", "inconclusive", "pass",
// "pass (throttled)", "new", "skipped".
std::string shown_status(const GateReport& r, const GateKeyResult& k);
std::string gate_markdown(const GateReport& r);
std::string gate_junit(const GateReport& r);
std::string gate_html(const GateReport& r);

// & < > " escaped for HTML text and attributes; for XML (JUnit) also ',
// and control characters other than tab and line ends dropped (XML 1.0
// does not allow them at all).
enum class Markup { html, xml };
std::string escape_markup(const std::string& s, Markup m);

}  // namespace kb
