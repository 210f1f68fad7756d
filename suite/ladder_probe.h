// The empirical speed of light (docs/metrics.md "The roofline"): the probe's
// ideal kernels (suite/ideal_kernels.h) timed exactly as experiments' samples
// are (Engine::time_cold: L2 flushed, CUDA events around the launch on the
// engine's stream), over a ladder of byte counts from 4 KB to 2 GB (ladder_bytes), round-
// robin over as many buffer sets as the engine builds for a point of those
// bytes (buffer_sets), after half a second that takes the GPU out of its idle
// state; per count the fastest kernel's median. `kbench probe` writes it as
// the target file's `measured.ladder`. What each further launch or graph
// node costs comes from chains of 8 ideal reads, measured as the rows of
// `roofline_ideal` are (suite/chain_probe.h): in worker processes
// (suite/runner.h's measure_points_isolated).
#pragma once

#include <string>
#include <vector>

#include "core/roofline.h"
#include "suite/engine.h"
#include "suite/experiment.h"

namespace kb {

// One rung as measured: every kernel's median, for the report.
struct LadderRung {
  double bytes = 0;
  std::vector<std::pair<std::string, double>> median_s;  // kernel name, seconds
};

struct LadderProbe {
  // The ladders, monotone (each rung's time the fastest at its count or
  // above); the further-launch tables are set_further_launches' (suite/chain_probe.h).
  SpeedOfLight sol;
  std::vector<LadderRung> read, copy;
  double max_bytes = 0;  // the largest rung: chain_points(max_bytes) are the chains
  // set_further_launches' lines: "stream x8 64 MB: 31.2 us (one launch 25.0 us): +0.89 us a launch"
  std::vector<std::string> chain_report;
};

// Measures the read and copy ladders on the engine's device (`sms`
// streaming multiprocessors, `mem_bytes` of memory); not the chains.
// `quick`: 5 samples a kernel a rung instead of 15. Throws kb::CudaError.
LadderProbe probe_ladder(Engine& engine, int sms, size_t mem_bytes, bool quick);

// The experiment whose points the chains are (roofline_ideal), checked to
// have both chain variants. Throws std::runtime_error naming what is missing.
const Experiment& chain_experiment();

}  // namespace kb
