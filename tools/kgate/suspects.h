// The suspects file: what the first stage of the nightly asks kbench to
// measure again (`kgate check --suspects FILE`, then `kbench run --rerun
// FILE`; docs/gate.md "Confirmation"): a header,
//   run_id,name,dtype,shape,variant,metric,arch,reason
// then one line per suspect key of the newest run.
#pragma once

#include <string>

#include "reports/gate_result.h"

namespace kb {

// By default at most this share of a run's gated keys are suspects
// (`--max-suspects`): beyond it the night is a broad regression or a broken
// machine, and the first stage's verdict stands.
constexpr double kMaxSuspectShare = 0.25;

// The suspects of `rep` (from runs with an id), strongest first, capped at
// `max_share` of the gated keys (at least one); `capped`: how many were left out.
std::string suspects_csv(const GateReport& rep, size_t* capped = nullptr,
                         double max_share = kMaxSuspectShare);

}  // namespace kb
