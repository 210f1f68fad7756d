#include "tools/kgate/simulate.h"

#include <cmath>

namespace kb {

uint64_t SimRng::next_u64() {
  // SplitMix64 (Steele, Lea & Flood 2014): small, fast, fully specified.
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SimRng::uniform() {
  // 53 random bits, shifted off zero so that log() below is finite.
  return (static_cast<double>(next_u64() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double SimRng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double r = std::sqrt(-2.0 * std::log(uniform()));
  double t = 2.0 * 3.14159265358979323846 * uniform();
  spare_ = r * std::sin(t);
  has_spare_ = true;
  return r * std::cos(t);
}

namespace {

constexpr double kLevel = 1000;  // GB/s, say: the level does not matter, only ratios

double night(SimRng& rng, double noise, double drop) {
  return kLevel * (1.0 + noise * rng.normal()) * (1.0 - drop);
}

// The series the gate sees on a night: the last window + max_recent runs
// are all the rule reads.
size_t kept(const HistoryRuleOptions& r) {
  return static_cast<size_t>(r.window + r.max_recent + 1);
}

}  // namespace

FalseFailureResult simulate_false_failures(const SimulationOptions& opt, int nights) {
  SimRng rng(opt.seed);
  std::vector<double> series;
  for (int i = 0; i < opt.rule.window; ++i) series.push_back(night(rng, opt.noise, 0));
  FalseFailureResult res;
  for (int t = 0; t < nights; ++t) {
    series.push_back(night(rng, opt.noise, 0));
    if (series.size() > kept(opt.rule)) series.erase(series.begin());
    HistoryResult h = history_rule(series, false, opt.rule);
    ++res.nights;
    if (h.outcome == HistoryOutcome::fail) ++res.failures;
    if (h.outcome == HistoryOutcome::too_noisy || h.outcome == HistoryOutcome::within_noise ||
        h.outcome == HistoryOutcome::too_little_history)
      ++res.inconclusive;
  }
  return res;
}

std::vector<double> simulate_detection(const SimulationOptions& opt, double drop, int trials,
                                       int horizon) {
  SimRng rng(opt.seed);
  std::vector<int> first(static_cast<size_t>(horizon), 0);
  std::vector<double> series;
  for (int t = 0; t < trials; ++t) {
    series.clear();
    for (int i = 0; i < opt.rule.window; ++i) series.push_back(night(rng, opt.noise, 0));
    for (int j = 0; j < horizon; ++j) {
      series.push_back(night(rng, opt.noise, drop));
      if (history_rule(series, false, opt.rule).outcome == HistoryOutcome::fail) {
        ++first[static_cast<size_t>(j)];
        break;
      }
    }
  }
  std::vector<double> caught;
  int sum = 0;
  for (int f : first) {
    sum += f;
    caught.push_back(static_cast<double>(sum) / trials);
  }
  return caught;
}

}  // namespace kb
