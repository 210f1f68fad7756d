// The rules of the gate for one key of the newest run (DESIGN.md "The
// gate's rules" 1 to 4), each a function named after its rule; run_gate
// (gate.cpp) walks the keys and adds rule 5's input failures.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/kgate/gate.h"
#include "tools/kgate/history.h"

namespace kb {

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
