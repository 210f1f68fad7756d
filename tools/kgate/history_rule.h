// Rule 3 of the gate (DESIGN.md): is the newest value of a key a drop
// against the history of earlier runs, larger than both a minimum relative
// gap and what that history's own noise explains? Robust statistics (the
// median, Qn), the newest k runs tested together for a sustained drop, and
// a run's re-measurements judged on their median: docs/gate.md "The history
// rule" and "Confirmation" argue each choice with the simulation.
#pragma once

#include <vector>

namespace kb {

struct HistoryRuleOptions {
  // Defaults from the simulation (docs/gate.md).
  int window = 60;               // earlier runs in the baseline
  double min_gap = 0.03;         // one attempt's floor: a drop must be larger to fail
  double confirmed_gap = 0.015;  // a confirmed value's floor: at least this (gap_of)
  int min_history = 10;          // fewer earlier runs: inconclusive
  double max_noise = 0.05;       // history noise (relative) above this: inconclusive
  int max_recent = 8;            // newest runs tested together for a sustained drop
  double z = 4.25;               // noise multiplier (before the small-history widening)
  double suspect_z = 2.0;        // one attempt: re-measure a drop beyond its floor and this
  double confirm_z = 3.5;        // several attempts: their median fails beyond this
  double shared_noise = 0.5;     // share of the run-to-run variance attempts of one run share
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
  int history = 0;       // earlier runs in the newest run's baseline window
  double baseline = 0;   // their median (0 when there are none)
  double change = 0;     // (newest - baseline) / baseline; signed as the metric moves
  double drop = 0;       // change in the worse direction (> 0 = worse)
  double noise = 0;      // robust relative standard deviation of the window
  double explained = 0;  // the largest drop of one run the noise explains
  // For a fail: the newest `recent` runs tested together (1 = the newest
  // alone), their drop and what the noise explains for it.
  int recent = 1;
  double recent_drop = 0;
  double recent_explained = 0;
  int attempts = 1;  // The newest run's attempts behind its value (its median).
  double gap = 0;    // the floor the drop was held to (gap_of)
  // Earlier runs of the window as slow as the newest (a slow state seen
  // before): from kModeRuns on, a drop within --min-gap does not fail.
  int seen_before = 0;
  // One attempt, and a drop worth re-measuring: it fails, or it is beyond
  // the floor a confirmation would use and suspect_z standard deviations
  // (never too little history or too much noise: re-measuring cannot help).
  bool suspect = false;
};

// `series`: the key's values, oldest first, the newest run's value last
// (with attempts > 1: the median of its attempts 2..attempts).
// `history_attempts`: how many attempts (GPUs) the earlier values are
// medians of; their noise is then read as one attempt's (docs/gate.md
// "Several GPUs, siblings and shards"). `mid_spread`: the newest value's
// two middle attempts apart where it is the median of an even count: the
// floor must be held by a majority of them, the better middle one.
HistoryResult history_rule(const std::vector<double>& series, bool lower_is_better,
                           const HistoryRuleOptions& opt, int attempts = 1,
                           int history_attempts = 1, double mid_spread = 0);

// The floor a drop must pass. One attempt: --min-gap, a policy (a one-night
// transient is not in proportion to the noise). A value confirmed by
// re-measurements (or GPUs): kGapSigmas of the key's noise `unit_noise` (one
// attempt's), within [confirmed_gap, min_gap] (docs/gate.md "The floor").
inline constexpr double kGapSigmas = 4;
inline constexpr int kModeRuns = 2;
double gap_of(const HistoryRuleOptions& opt, double unit_noise, int attempts);

// The attempts (GPUs) behind a history's values, for history_rule: the
// lower median of each earlier run's count; 1 for none.
int history_attempts_of(std::vector<int> attempts);

// The variance of the median of m values of unit variance, m >= 1.
double median_variance(int m);

// The history's noise as a standard deviation: the larger of Qn and the
// interquartile range / 1.349; 0 for fewer than 2 values.
double noise_scale(std::vector<double> v);
// Qn, scaled to estimate a normal sample's standard deviation.
double qn_scale(std::vector<double> v);
// Median (0 for an empty vector).
double median_of(std::vector<double> v);
// 1.4826 * the median absolute deviation from the median.
double mad_scale(const std::vector<double>& v);

}  // namespace kb
