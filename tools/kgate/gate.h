// The gate's rules (DESIGN.md "The gate's rules", docs/gate.md "What each
// rule does") applied to every key of the newest run of each GPU model:
// failed or incorrect rows, targets, the history rule with its board and
// host rules (gate_rules.cpp), and the input that fails the night.
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
  double mid_spread = 0;              // an even count behind `value`: its two middle values apart
  std::optional<double> first_value;  // attempt 1's, when measured
};

// The keys that differ only in their device label (cuda:0, cuda:1, ...)
// are one key of the gate (History key indices), their rows merged in run
// and attempt order.
std::vector<std::vector<uint32_t>> key_groups(const std::vector<Key>& keys);
void merge_series(const History& hist, const std::vector<uint32_t>& group,
                  std::vector<uint32_t>& merged);

// A key's series (oldest first, a run's attempts consecutive) as one
// RunValue per run. The dashboard judges its past nights through this too.
void group_runs(const std::vector<Observation>& obs, const std::vector<uint32_t>& series,
                std::vector<RunValue>& out);

GateReport run_gate(const History& history, const GateOptions& opt);

// The suspects file (`kgate check --suspects FILE`, then `kbench run --rerun
// FILE`; docs/gate.md "Confirmation"): run_id,name,dtype,shape,variant,
// metric,arch,reason, a line per suspect key of the newest run. By default at
// most this share of the gated keys are suspects: beyond, the night is a broad
// regression or a broken machine, and the first stage's verdict stands.
constexpr double kMaxSuspectShare = 0.25;

// The suspects of `rep` (from runs with an id), strongest first, capped at
// `max_share` of the gated keys (at least one); `capped`: how many were left out.
std::string suspects_csv(const GateReport& rep, size_t* capped = nullptr,
                         double max_share = kMaxSuspectShare);

// Now, as ISO-8601 UTC ("YYYY-MM-DDThh:mm:ssZ"): when a report was made.
std::string utc_now();

// The rules of the gate for one key of the newest run (gate_rules.cpp), each
// a function named after its rule.

// The gate's view of a history: its options, the probe's launch(us) of
// each run per arch (for the host rule) and how many earlier runs a key keeps.
struct GateContext {
  const History& hist;
  const GateOptions& opt;
  const std::map<std::string, std::vector<double>>& launch_of;
  size_t keep;
};

// One key's rows (its GPUs merged), grouped by run; `now` is the run judged
// and `last` its row that speaks for it (the failed one, if any).
struct KeyRuns {
  const Key& key;
  const std::vector<uint32_t>& series;
  const std::vector<RunValue>& runs;
  const RunValue& now;
  const Observation& last;
};

// Rule 2's target for a row: its entry in the GPU's target file `tf`
// (nullptr: none), else the row's own target column.
// The note of a target met only with the host's slower launch allowed.
inline constexpr const char* kHostTargetNote = "this host launches slower";

struct TargetCheck {
  std::optional<double> target;
  double tolerance = 0.05;  // TargetEntry's default, for the rows' own targets
  std::string source;
};
TargetCheck find_target(const Key& key, const Observation& o, const TargetFile* tf);

// A key's result before any rule: its identity.
GateKeyResult result_of(const Key& key);

RunContext context_of(const Run& run);

// One key of the newest run through rules 1 to 4.
GateKeyResult judge_key(const GateContext& g, const KeyRuns& k);

}  // namespace kb
