// Rule 3 of the gate (DESIGN.md): is the newest value of a key a drop
// against the history of earlier runs, larger than both a minimum relative
// gap and what that history's own noise explains?
//
// Robust statistics, because nightly histories have bad nights (a busy
// node, a clock dip) that must neither move the baseline nor inflate the
// noise (docs/gate.md argues the choice with the simulation):
// - baseline: the median of the last `window` earlier runs;
// - noise: a robust standard deviation of those runs, relative to the
//   baseline: Qn (Rousseeuw & Croux, from the pairwise distances), or the
//   10-90% range where that is larger (runs on two levels; noise_scale());
// - the newest value fails when it is worse than the baseline by more than
//   `min_gap` and more than z * noise * sqrt(1 + pi/(2n)) (the spread of one
//   new run around the median of n runs), z widened like a Student-t
//   quantile when n is small, because the noise itself is then uncertain;
// - a drop that lands below that line on its first night is caught on the
//   next ones: the mean of the newest k runs (k = 2..max_recent) is tested
//   the same way against the window before them, with the k-run spread
//   sqrt(1/k + pi/(2n)), as long as the newest run itself is still low.
#pragma once

#include <vector>

namespace kb {

struct HistoryRuleOptions {
  // Defaults from the simulation (docs/gate.md, `kgate simulate`).
  int window = 60;          // earlier runs in the baseline
  double min_gap = 0.03;    // a drop must be larger than this (relative) to fail
  int min_history = 10;     // fewer earlier runs: inconclusive
  double max_noise = 0.05;  // history noise (relative) above this: inconclusive
  int max_recent = 8;       // newest runs tested together for a sustained drop
  double z = 4.25;          // noise multiplier (before the small-history widening)
};

enum class HistoryOutcome {
  pass,                // no drop beyond min_gap, or none the noise leaves unexplained
  fail,                // a drop beyond min_gap and beyond the noise
  too_little_history,  // fewer than min_history earlier runs
  too_noisy,           // the history's noise is above max_noise
  within_noise,        // a drop beyond min_gap that the noise explains
};

struct HistoryResult {
  HistoryOutcome outcome = HistoryOutcome::pass;
  int history = 0;         // earlier runs in the newest run's baseline window
  double baseline = 0;     // their median (0 when there are none)
  double change = 0;       // (newest - baseline) / baseline; signed as the metric moves
  double drop = 0;         // change in the worse direction (> 0 = worse)
  double noise = 0;        // robust relative standard deviation of the window
  double explained = 0;    // the largest drop of one run the noise explains
  // For a fail: the newest `recent` runs were tested together (1 = the
  // newest alone), with their mean's drop and what the noise explains for it.
  int recent = 1;
  double recent_drop = 0;
  double recent_explained = 0;
};

// `series`: the key's values, oldest first, the newest run's value last.
HistoryResult history_rule(const std::vector<double>& series, bool lower_is_better,
                           const HistoryRuleOptions& opt);

// The history's noise as a standard deviation: the larger of Qn and the
// 10-90% range / 2.5631; 0 for fewer than 2 values.
double noise_scale(std::vector<double> v);
// Qn (scaled to estimate the standard deviation of a normal sample, with
// the small-sample correction); 0 for fewer than 2 values.
double qn_scale(std::vector<double> v);
// Median (0 for an empty vector).
double median_of(std::vector<double> v);

}  // namespace kb
