#include "tests/support/simulate.h"

#include <algorithm>
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

// A unit-variance deviate: normal, or Student-t with `dof` degrees of
// freedom (a normal over the root of a chi-square), scaled to unit variance.
double deviate(SimRng& rng, double dof) {
  double z = rng.normal();
  if (dof <= 0) return z;
  double chi = 0;
  int k = static_cast<int>(dof);
  for (int i = 0; i < k; ++i) {
    double g = rng.normal();
    chi += g * g;
  }
  double t = z / std::sqrt(chi / k);
  return k > 2 ? t * std::sqrt((k - 2.0) / k) : t;
}

double night(SimRng& rng, double noise, double drop) {
  return kLevel * (1.0 + noise * rng.normal()) * (1.0 - drop);
}

// A night before any drop, bad now and then; `bad` says whether it was.
double history_night(SimRng& rng, const SimulationOptions& opt, bool* bad = nullptr) {
  double v = night(rng, opt.noise, 0);
  bool b = opt.bad_nights > 0 && rng.uniform() < opt.bad_nights;
  if (bad) *bad = b;
  return b ? v * (1 - opt.bad_drop) : v;
}

// The series the gate sees on a night: the last window + max_recent runs
// are all the rule reads.
size_t kept(const HistoryRuleOptions& r) {
  return static_cast<size_t>(r.window + r.max_recent + 1);
}

// One night of the nightly pipeline, for the noise model with attempts.
class Night {
 public:
  Night(SimRng& rng, const SimulationOptions& opt, double drop)
      : rng_(rng), opt_(opt), drop_(drop) {
    shared_ = opt.noise * std::sqrt(opt.shared) * deviate(rng, opt.tails_dof);
    bad_ = opt.bad_nights > 0 && drop == 0 && rng.uniform() < opt.bad_nights;
  }
  // Attempt 1, then the re-measurements.
  double attempt() {
    double own = opt_.shared < 1
                     ? opt_.noise * std::sqrt(1 - opt_.shared) * deviate(rng_, opt_.tails_dof)
                     : 0;
    bool slow = false;
    if (opt_.mode_rate > 0) {
      double p = n_ == 0 || !first_slow_ ? opt_.mode_rate : opt_.mode_stick;
      slow = rng_.uniform() < p;
      if (n_ == 0) first_slow_ = slow;
    }
    ++n_;
    double v = kLevel * (1 + shared_ + own) * (1 - drop_);
    if (slow) v *= 1 - opt_.mode_size;
    if (bad_) v *= 1 - opt_.bad_drop;  // a bad night is bad for every attempt
    return v;
  }
  bool bad() const { return bad_; }

 private:
  SimRng& rng_;
  const SimulationOptions& opt_;
  double drop_;
  double shared_ = 0;
  bool bad_ = false, first_slow_ = false;
  int n_ = 0;
};

bool plain_model(const SimulationOptions& o) {
  return o.confirm == 0 && o.shared >= 1 && o.tails_dof <= 0 && o.mode_rate <= 0;
}

struct Judged {
  HistoryResult first, last;  // attempt 1 alone; the final verdict
  double value = 0;           // what enters the history
};

// The pipeline on one night: `series` holds the history; the night's value
// is appended to it.
Judged judge_night(Night& n, std::vector<double>& series, const SimulationOptions& opt) {
  Judged j;
  series.push_back(n.attempt());
  j.first = history_rule(series, false, opt.rule, 1);
  j.last = j.first;
  if (opt.confirm > 0 && j.first.suspect) {
    // The re-measurements alone: attempt 1 was chosen for being low.
    std::vector<double> a;
    for (int i = 0; i < opt.confirm; ++i) a.push_back(n.attempt());
    series.back() = median_of(a);
    std::sort(a.begin(), a.end());
    const double spread = a.size() % 2 ? 0 : a[a.size() / 2] - a[a.size() / 2 - 1];
    j.last = history_rule(series, false, opt.rule, static_cast<int>(a.size()) + 1, 1, spread);
  }
  j.value = series.back();
  return j;
}

}  // namespace

FalseFailureResult simulate_false_failures(const SimulationOptions& opt, int nights) {
  SimRng rng(opt.seed);
  std::vector<double> series;
  FalseFailureResult res;
  if (plain_model(opt)) {
    for (int i = 0; i < opt.rule.window; ++i) series.push_back(history_night(rng, opt));
    for (int t = 0; t < nights; ++t) {
      bool bad = false;
      series.push_back(history_night(rng, opt, &bad));
      if (series.size() > kept(opt.rule)) series.erase(series.begin());
      if (bad) continue;
      HistoryResult h = history_rule(series, false, opt.rule);
      ++res.nights;
      if (h.outcome == HistoryOutcome::fail) ++res.failures;
      if (h.outcome == HistoryOutcome::too_noisy || h.outcome == HistoryOutcome::within_noise ||
          h.outcome == HistoryOutcome::too_little_history)
        ++res.inconclusive;
    }
    return res;
  }
  // The history itself is measured as the nightly measures it.
  for (int t = -opt.rule.window; t < nights; ++t) {
    Night n(rng, opt, 0);
    Judged j = judge_night(n, series, opt);
    if (series.size() > kept(opt.rule)) series.erase(series.begin());
    if (t < 0 || n.bad()) continue;
    ++res.nights;
    res.suspects += j.first.suspect && opt.confirm > 0;
    res.first_stage_failures += j.first.outcome == HistoryOutcome::fail;
    if (j.last.outcome == HistoryOutcome::fail) ++res.failures;
    if (j.last.outcome == HistoryOutcome::too_noisy ||
        j.last.outcome == HistoryOutcome::within_noise ||
        j.last.outcome == HistoryOutcome::too_little_history)
      ++res.inconclusive;
  }
  return res;
}

std::vector<double> simulate_detection(const SimulationOptions& opt, double drop, int trials,
                                       int horizon) {
  SimRng rng(opt.seed);
  std::vector<int> first(static_cast<size_t>(horizon), 0);
  std::vector<double> series;
  const bool plain = plain_model(opt);
  for (int t = 0; t < trials; ++t) {
    series.clear();
    for (int i = 0; i < opt.rule.window; ++i) {
      if (plain) {
        series.push_back(history_night(rng, opt));
      } else {
        Night n(rng, opt, 0);
        judge_night(n, series, opt);
      }
    }
    for (int j = 0; j < horizon; ++j) {
      bool failed;
      if (plain) {
        series.push_back(night(rng, opt.noise, drop));
        failed = history_rule(series, false, opt.rule).outcome == HistoryOutcome::fail;
      } else {
        Night n(rng, opt, drop);
        failed = judge_night(n, series, opt).last.outcome == HistoryOutcome::fail;
      }
      if (failed) {
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
