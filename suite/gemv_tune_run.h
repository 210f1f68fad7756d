// The timing half of `kbench tune gemv` (suite/gemv_tune.h says what it does).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/targets.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "suite/gemv_tune.h"
#include "suite/runner.h"

namespace kb {

// Times every candidate of every shape on the engine's device (warm-up,
// then `reps` interleaved cold rounds); `progress` sees each shape's result.
std::vector<GemvTuned> measure_gemv(Engine& engine, const std::vector<GemvShape>& shapes, int reps,
                                    const std::function<void(const GemvTuned&)>& progress = {});

// Measures the suite's shapes and writes the `gemv` section of the tuning
// file `out` (other sections kept; created if missing). Every candidate is
// screened in this process; with `rows`, each shape's finalists (the
// file's present choice, the generic one and the kGemvFinalists fastest)
// are then timed as rows are, in as many worker processes as its rows get
// (this process's CUDA context reset first), and those times decide: the
// present choice stays unless another beats it by kGemvTuneMinGain. Returns the shapes' results.
// Throws TuningError for an existing file it cannot parse.
std::vector<GemvTuned> tune_gemv_table(const DeviceInfo& dev, const TargetFile* tf,
                                       const std::string& out, int reps,
                                       const std::vector<GemvShape>& shapes,
                                       const WorkerConfig* rows);

// The screen's fastest that go on to be timed as rows (besides the generic choice).
constexpr int kGemvFinalists = 4;

// The decode step's projections tuned in the step (suite/gemv_tune_decode.cu)
// for the suite's decoders (Llama-2-7B bf16 and int8, Mixtral int8 at 16
// layers; one that does not fit is skipped with a message), under the
// installed table: `entries`, the gemv entries of the kept choices that are
// not the generic rule's, with what was measured; `tuned`, every projection
// measured (a re-tune replaces the file's entries of those buckets).
struct DecodeTuning {
  std::vector<DecodeProjection> tuned;
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
};
DecodeTuning tune_decode_step(Engine& engine, const DeviceInfo& dev, int reps);

}  // namespace kb
