// The formats of a gate report, each only reading the GateReport: console,
// Markdown (a CI step summary), JUnit XML (one testcase per key) and one
// self-contained HTML page. Every format names the gated run, the machine
// kgate ran on, each failing key's last good run and throttled rows as such;
// keys inconclusive only for too little history are one line, not one each.
#pragma once

#include <string>

#include "reports/gate_result.h"

namespace kb {

// Without `all`, passes, skipped and new keys are folded into counts.
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

// & < > " escaped; for XML also ', and the control characters XML 1.0
// does not allow dropped.
enum class Markup { html, xml };
std::string escape_markup(const std::string& s, Markup m);

}  // namespace kb
