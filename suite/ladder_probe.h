// The empirical speed of light (docs/metrics.md "The roofline"): the probe's
// ideal kernels (suite/ideal_kernels.h) timed exactly as experiments' samples
// are (Engine::time_cold: L2 flushed, CUDA events around the launch on the
// engine's stream), over a ladder of byte counts from 4 KB to 2 GB (ladder_bytes), round-
// robin over as many buffer sets as the engine builds for a point of those
// bytes (buffer_sets), after half a second that takes the GPU out of its idle
// state; per count the fastest kernel's median. Then chains of 8 ideal reads (stream launches, and
// one replayed graph), measured as the rows of `roofline_ideal` are (Engine::measure_point on that
// experiment's chain points), give what each further launch or node costs. `kbench probe` writes it
// as the target file's `measured.ladder`.
#pragma once

#include <string>
#include <vector>

#include "suite/engine.h"
#include "suite/roofline.h"

namespace kb {

// One rung as measured: every kernel's median, for the report.
struct LadderRung {
  double bytes = 0;
  std::vector<std::pair<std::string, double>> median_s;  // kernel name, seconds
};

struct LadderProbe {
  SpeedOfLight sol;  // monotone (each rung's time the fastest at its count or above)
  std::vector<LadderRung> read, copy;
  std::vector<std::string> chain_report;  // "stream x8 64 MB: 31.2 us (ladder 25.0 us): +0.89 us"
};

// Measures on the engine's device (`sms` streaming multiprocessors, `mem_bytes`
// of memory). `quick`: 5 samples a kernel a rung instead of 15. Throws kb::CudaError.
LadderProbe probe_ladder(Engine& engine, int sms, size_t mem_bytes, bool quick);

}  // namespace kb
