// Rule 3 of the gate (DESIGN.md): is the newest value of a key a drop
// against earlier runs larger than both a minimum gap and what their noise
// explains? docs/gate.md "The history rule" and "Confirmation" argue each
// choice with the simulation.
#pragma once

#include <vector>

namespace kb {

struct HistoryRuleOptions {      // defaults from the simulation (docs/gate.md)
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
  // For a fail: the newest `recent` runs tested together, their drop and
  // what the noise explains for it.
  int recent = 1;
  double recent_drop = 0;
  double recent_explained = 0;
  int attempts = 1;  // the newest run's attempts behind its value (its median)
  double gap = 0;    // the floor the drop was held to (gap_of)
  // Earlier runs of the window as slow as the newest: from kModeRuns on, a
  // drop within --min-gap is a slow state seen before and does not fail.
  int seen_before = 0;
  // One attempt, and a drop beyond the floor a confirmation would use and
  // suspect_z standard deviations: worth re-measuring.
  bool suspect = false;
};

// The run-to-run noise of a key measured elsewhere than its series (the
// window's boards, each run against its own board's): relative, and the
// runs (degrees of freedom) it was estimated from.
struct PooledNoise {
  double noise = 0;
  int runs = 0;
};

// `series`: the key's values, oldest first, the newest run's last (with
// attempts > 1: the median of its re-measurements). `history_attempts`: how
// many attempts (GPUs) the earlier values are medians of. `mid_spread`: the
// newest value's two middle attempts apart (an even count): the floor must
// be held by the better middle one. `pooled`: the noise to judge with where
// the series is too short to show its own (then only the newest run alone
// is tested, and --min-history counts the pooled runs).
HistoryResult history_rule(const std::vector<double>& series, bool lower_is_better,
                           const HistoryRuleOptions& opt, int attempts = 1,
                           int history_attempts = 1, double mid_spread = 0,
                           const PooledNoise* pooled = nullptr);

// The floor a drop must pass: --min-gap for one attempt; for a confirmed
// value kGapSigmas of one attempt's noise, within [confirmed_gap, min_gap]
// (docs/gate.md "The floor").
inline constexpr double kGapSigmas = 4;
inline constexpr int kModeRuns = 2;
double gap_of(const HistoryRuleOptions& opt, double unit_noise, int attempts);

// The lower median of the earlier runs' attempt counts; 1 for none.
int history_attempts_of(std::vector<int> attempts);

// The variance of the median of m values of unit variance, m >= 1.
double median_variance(int m);

// The larger of Qn and the interquartile range / 1.349; 0 under 2 values.
double noise_scale(std::vector<double> v);
double qn_scale(std::vector<double> v);          // scaled to a normal sample's standard deviation
double median_of(std::vector<double> v);         // 0 for none
double mad_scale(const std::vector<double>& v);  // 1.4826 * the median absolute deviation

}  // namespace kb
