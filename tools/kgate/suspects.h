// The suspects file: what the first stage of the nightly asks kbench to
// measure again (`kgate check --suspects FILE`, then
// `kbench run --rerun FILE --repeat N`; docs/gate.md "Confirmation").
//
//   run_id,name,dtype,shape,variant,metric,arch,reason
//
// One line per suspect key of the newest run: run_id is the run to attach
// the attempts to (rows `<run_id>/<N>`), variant the row's full variant;
// kbench maps a line to its point by (name, dtype, shape) and the variant,
// and measures each point once however many of its metrics are listed.
// The header alone when there is nothing to re-measure.
#pragma once

#include <string>

#include "reports/gate_result.h"

namespace kb {

// By default at most this share of a run's gated keys are suspects
// (`--max-suspects`). Beyond it the night is a broad regression or a broken
// machine: re-measuring them all would be the whole suite again, and the
// first stage's verdict stands. The GPU self-test injects a slowdown into
// every key at once and lifts the cap, so that each key is judged as it
// would be alone.
constexpr double kMaxSuspectShare = 0.25;

// The suspects of `rep` (GateKeyResult::suspect, from runs with an id),
// strongest first (failures, then the largest drop against the noise),
// capped at `max_share` of the gated keys (at least one). `capped`
// receives how many were left out.
std::string suspects_csv(const GateReport& rep, size_t* capped = nullptr,
                         double max_share = kMaxSuspectShare);

}  // namespace kb
