// The gate's rules (DESIGN.md "The gate's rules") applied to every key of
// the newest run of each GPU model (arch) in a History:
// 1. an `incorrect` or `failed` row fails;
// 2. a value worse than its target by more than the target's tolerance
//    fails (the target file matched by arch name, else the row's own
//    `target` column);
// 3. a drop against the key's earlier runs on the same arch fails when it
//    is larger than both --min-gap and what the history's noise explains
//    (history_rule.h); too little history or too much noise is
//    inconclusive, which fails only with --strict. Boards (boards.h): with
//    enough runs on the newest run's board, the baseline is those runs; on
//    a board new to the key, a drop the boards' spread explains is
//    inconclusive.
// `skipped` rows are not gated. A `throttled` row that would fail rule 2 or
// 3 is inconclusive instead: a hot GPU is not a code regression. A key that
// was in the arch's previous run but is missing from its newest one is
// inconclusive too.
#pragma once

#include <string>
#include <vector>

#include "reports/gate_result.h"
#include "suite/targets.h"
#include "tools/kgate/boards.h"
#include "tools/kgate/history.h"
#include "tools/kgate/history_rule.h"
#include "tools/kgate/siblings.h"

namespace kb {

struct GateOptions {
  HistoryRuleOptions rule;
  BoardOptions board;  // boards of one model differ (boards.h)
  bool strict = false;
  std::vector<TargetFile> targets;  // empty: only the rows' own targets
  SiblingOptions sibling;           // GPUs behind their siblings (findings, not failures)
};

GateReport run_gate(const History& history, const GateOptions& opt);

// Now, as ISO-8601 UTC ("2026-11-25T12:00:00Z"): when a report was made.
std::string utc_now();

}  // namespace kb
