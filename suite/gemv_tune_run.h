// The timing half of `kbench tune gemv` (suite/gemv_tune.h says what it does).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/targets.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "suite/gemv_tune.h"
#include "suite/runner.h"

namespace kb {

// Writes the `gemv` section of the tuning file `out` (other sections kept):
// every candidate screened here; with `rows`, the finalists timed as rows
// are, which decide; then the decode step's entries (docs/targets.md).
// Throws TuningError, before timing, for an existing file it cannot parse
// or one of another GPU.
std::vector<GemvTuned> tune_gemv_table(const DeviceInfo& dev, const TargetFile* tf,
                                       const std::string& out, int reps,
                                       const std::vector<GemvShape>& shapes,
                                       const WorkerConfig* rows);

// The screen's fastest that go on to be timed as rows (besides the generic choice).
constexpr int kGemvFinalists = 4;

// The suite decoders' projections tuned in the step, under the installed
// table (suite/gemv_tune_decode.cu): `entries`, the kept choices that are not
// the generic rule's; `tuned`, every projection measured (a re-tune replaces
// the file's entries of those buckets).
struct DecodeTuning {
  std::vector<DecodeProjection> tuned;
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
};
DecodeTuning tune_decode_step(Engine& engine, const DeviceInfo& dev, int reps);

}  // namespace kb
