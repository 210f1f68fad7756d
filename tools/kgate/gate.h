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
//    inconclusive. Hosts (boards.h HostLaunch): where the newest run's
//    probe launches slower than the key's baseline runs, a slowdown per
//    call within that rise is inconclusive.
// `skipped` rows are not gated. A `throttled` row that would fail rule 2 or
// 3 is inconclusive instead: a hot GPU is not a code regression. A key that
// was in the arch's previous run but is missing from its newest one is
// inconclusive too. The newest run is the one appended last (history.h);
// tonight's rows kgate cannot trust, and a newest run with fewer than half
// the keys of the one before it, fail the night (gate_input.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/targets.h"
#include "reports/gate_result.h"
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

// One run of one key: its attempts (consecutive in the key's series) taken
// together. The value is the median of the re-measurements where there are
// any (attempt 1 is left out: it was re-measured because it was low), else
// attempt 1's; throttled attempts count only when nothing else was measured.
struct RunValue {
  size_t first = 0;  // index into the series of the run's first row (its lowest attempt)
  // The first failed or incorrect row of the run's own measurement (attempt
  // 1, on any of its GPUs), SIZE_MAX if none: a crash on one GPU is a crash.
  size_t bad = SIZE_MAX;
  int attempts = 0;    // rows of this run (attempts)
  int remeasured = 0;  // measured re-measurements behind `value`
  bool measured = false, throttled = false;
  double value = 0;
  std::optional<double> first_value;  // attempt 1's, when measured
};

// A key's series (oldest first, a run's attempts consecutive) as one
// RunValue per run. The dashboard judges its past nights through this too.
void group_runs(const std::vector<Observation>& obs, const std::vector<uint32_t>& series,
                std::vector<RunValue>& out);

GateReport run_gate(const History& history, const GateOptions& opt);

// Now, as ISO-8601 UTC ("YYYY-MM-DDThh:mm:ssZ"): when a report was made.
std::string utc_now();

}  // namespace kb
