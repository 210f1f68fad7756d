// The timing half of `kbench tune gemv` (suite/gemv_tune.h says what it does).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/targets.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "suite/gemv_tune.h"

namespace kb {

// Times every candidate of every shape on the engine's device (warm-up,
// then `reps` interleaved cold rounds); `progress` sees each shape's result.
std::vector<GemvTuned> measure_gemv(Engine& engine, const std::vector<GemvShape>& shapes, int reps,
                                    const std::function<void(const GemvTuned&)>& progress = {});

// Measures the suite's shapes and writes the `gemv` section of the tuning
// file `out` (other sections kept; created if missing). Returns the entries
// written. Throws TuningError for an existing file it cannot parse.
std::vector<GemvTuned> tune_gemv_table(const DeviceInfo& dev, const TargetFile* tf,
                                       const std::string& out, int reps,
                                       const std::vector<GemvShape>& shapes);

}  // namespace kb
