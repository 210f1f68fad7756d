// `kgate compare BASE NEW`: an A/B of two sets of runs (two builds, two
// drivers, or two GPU models as fractions of their rooflines).
//
// Per key, each side's value is the median over its runs (a file may hold
// several repeats), with a relative uncertainty:
// - 3 or more runs: their spread (Qn) / sqrt(runs) — the run-to-run noise;
// - else the rows' own noise_rel and samples: 1.2533 * noise_rel / sqrt(samples),
//   the standard error of a median of that many samples;
// - else `default_noise` (gpt_fast rows carry no noise).
// The change is judged against both sides' noise combined (u):
//   FASTER / SLOWER  when it is larger than both min_change and z * u;
//   SAME             when it is within min_change and z * u is too, so a
//                    change larger than min_change would have shown;
//   UNSURE           otherwise: the noise is too large to tell.
// When the files' GPU models differ, keys are matched without the arch and
// roofline_fraction is compared instead of the raw value.
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
