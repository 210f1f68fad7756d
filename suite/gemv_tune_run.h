// The timing half of `kbench tune gemv` (suite/gemv_tune.h says what it does).
#pragma once

#include <functional>
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

}  // namespace kb
