// `kgate compare BASE NEW`: per key, each side's median over its runs and
// its uncertainty; FASTER or SLOWER beyond both min_change and z times the
// noise, SAME within both, else UNSURE (docs/gate.md "Comparing two runs").
#pragma once

#include "reports/compare_result.h"
#include "tools/kgate/history.h"

namespace kb {

struct CompareOptions {
  double min_change = 0.02;     // smaller changes are not called FASTER/SLOWER
  double default_noise = 0.02;  // a run's relative noise where nothing says it
  double z = 3;                 // noise multiplier
};

CompareReport compare_runs(const History& base, const History& next, const CompareOptions& opt);

}  // namespace kb
