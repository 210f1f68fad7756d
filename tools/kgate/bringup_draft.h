// The target file `kgate bringup` drafts from a run (docs/bringup.md "The
// drafted target file"): peaks from the datasheet table; `measured` taken
// whole from the probe's draft target file (`--probe FILE`, its ladder
// included), else the run's probe rows; a target per rate key of the run at
// the roofline fraction it reached, rounded down to 0.01, with the
// measurement in its note, and a `*` entry per experiment, metric and dtype
// at the lowest of them, a floor for a shape added later.
#pragma once

#include <string>
#include <vector>

#include "core/datasheets.h"
#include "core/targets.h"
#include "tools/kgate/bringup_run.h"

namespace kb {

struct DraftInputs {
  const RunView& run;             // the run brought up
  const BringupReport& report;    // its GPU, run id, commit, driver and time
  const BringupInputs& in;        // --probe and the datasheet table's path
  const Datasheet* datasheet;     // the GPU's entry (nullptr: not in the table)
  const TargetFile* run_targets;  // where the run's rooflines came from (nullptr: none)
};

struct DraftedTargetFile {
  std::string json;                   // the file's text
  std::vector<std::string> notes;     // for the report
  std::vector<std::string> problems;  // input problems: kgate exits 2
};

DraftedTargetFile draft_target_file(const DraftInputs& in);

// A drafted target: the fraction rounded down to 0.01, at most 1, at least
// 0.01 (a target of 0 would never fail).
double drafted_fraction(double fraction);

}  // namespace kb
