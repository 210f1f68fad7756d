// The gate's rules (DESIGN.md "The gate's rules", docs/gate.md) applied to
// every key of the newest run of each GPU model; the rules of one key are in
// gate_rules.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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

// One run of one key, its attempts taken together: the median of the
// re-measurements where there are any (attempt 1 was re-measured because it
// was low), else attempt 1's; throttled rows only where nothing else is.
struct RunValue {
  size_t first = 0;       // index into the series of the run's first row (its lowest attempt)
  size_t bad = SIZE_MAX;  // its first failed or incorrect attempt-1 row (any GPU)
  int attempts = 0;       // rows of this run (attempts)
  int remeasured = 0;     // measured re-measurements behind `value`
  bool measured = false, throttled = false;
  double value = 0;
  double mid_spread = 0;              // an even count behind `value`: its two middle values apart
  std::optional<double> first_value;  // attempt 1's, when measured
};

// Keys that differ only in their device (cuda:0, cuda:1, ...) are one key of
// the gate, their rows merged in run and attempt order.
std::vector<std::vector<uint32_t>> key_groups(const std::vector<Key>& keys);
void merge_series(const History& hist, const std::vector<uint32_t>& group,
                  std::vector<uint32_t>& merged);

// A key's series (oldest first) as one RunValue per run.
void group_runs(const std::vector<Observation>& obs, const std::vector<uint32_t>& series,
                std::vector<RunValue>& out);

GateReport run_gate(const History& history, const GateOptions& opt);

// At most this share of the gated keys are suspects: beyond, the night is a
// broad regression or a broken machine (docs/gate.md "Confirmation").
constexpr double kMaxSuspectShare = 0.25;

// The suspects file of `rep` (`kbench run --rerun FILE`), strongest first,
// capped at `max_share` of the gated keys; `capped`: how many were left out.
std::string suspects_csv(const GateReport& rep, size_t* capped = nullptr,
                         double max_share = kMaxSuspectShare);

// The gate's view of a history: its options, the probe's launch(us) of
// each run per arch (the host rule) and how many earlier runs a key keeps.
struct GateContext {
  const History& hist;
  const GateOptions& opt;
  std::map<std::string, std::vector<double>> launch_of;
  size_t keep;
};
GateContext gate_context(const History& hist, const GateOptions& opt);

// One key's rows (its GPUs merged), grouped by run; `now` is the run judged
// and `last` its row that speaks for it (the failed one, if any).
struct KeyRuns {
  const Key& key;
  const std::vector<uint32_t>& series;
  const std::vector<RunValue>& runs;
  const RunValue& now;
  const Observation& last;
};

// Rule 2's target for a row: its entry in the target file `tf`, else the
// row's own target column.
struct TargetCheck {
  std::optional<double> target;
  double tolerance = 0.05;             // TargetEntry's default, for the rows' own targets
  std::optional<double> board_spread;  // the entry's, where it has one
  std::string source;
};
TargetCheck find_target(const Key& key, const Observation& o, const TargetFile* tf);

GateKeyResult result_of(const Key& key);  // its identity, before any rule
RunContext context_of(const Run& run);
// Rules 1 to 4; `history`, where given, gets rule 3's result.
GateKeyResult judge_key(const GateContext& g, const KeyRuns& k, HistoryResult* history = nullptr);

}  // namespace kb
