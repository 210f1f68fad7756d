// The empirical speed of light (docs/metrics.md "The roofline"): the ideal
// kernels timed as experiments' samples are, over a ladder of byte counts
// and as many buffer sets as a point of those bytes gets; per count the
// fastest kernel's median. The further launches: suite/chain_probe.h.
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
  SpeedOfLight sol;  // monotone ladders
  std::vector<LadderRung> read, copy;
  double max_bytes = 0;  // the largest rung: chain_points(max_bytes) are the chains
  std::vector<std::string> chain_report;  // set_further_launches' lines
};

// The read and copy ladders, not the chains (`quick`: 5 samples a kernel a
// rung instead of 15). Throws kb::CudaError.
LadderProbe probe_ladder(Engine& engine, int sms, size_t mem_bytes, bool quick);

// roofline_ideal, checked to have both chains (std::runtime_error).
const Experiment& chain_experiment();

}  // namespace kb
