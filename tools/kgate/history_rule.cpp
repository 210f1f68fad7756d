#include "tools/kgate/history_rule.h"

#include <algorithm>
#include <cmath>

namespace kb {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Relative drop of `value` against `base`: > 0 means worse.
double drop_of(double value, double base, bool lower_is_better) {
  return lower_is_better ? (value - base) / base : (base - value) / base;
}

struct Window {
  int n = 0;
  double baseline = 0;
  double noise = 0;  // relative
};

Window window_stats(const std::vector<double>& series, size_t end, int window) {
  size_t begin = end > static_cast<size_t>(window) ? end - static_cast<size_t>(window) : 0;
  std::vector<double> w(series.begin() + static_cast<long>(begin),
                        series.begin() + static_cast<long>(end));
  Window s;
  s.n = static_cast<int>(w.size());
  if (w.empty()) return s;
  s.baseline = median_of(w);
  if (s.baseline > 0) s.noise = noise_scale(std::move(w)) / s.baseline;
  return s;
}

// The noise is estimated from n runs, so it is itself uncertain: a window
// that happens to look quiet would make the gate trigger-happy. As a
// Student-t quantile does, z widens as n shrinks: Cornish-Fisher expansion
// of t with the degrees of freedom of an estimate of 82% efficiency (Qn's).
// Without this, false failures at n = 15 are ten times those at n = 60.
double widened_z(double z, int n) {
  double nu = 0.82 * (n - 1);
  double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * nu) + (5 * z5 + 16 * z3 + 3 * z) / (96 * nu * nu);
}

// What the noise explains for the mean of k new runs against the median of
// n runs: z (widened) standard deviations of their difference.
double explained(const HistoryRuleOptions& opt, double noise, int k, int n) {
  return widened_z(opt.z, n) * noise * std::sqrt(1.0 / k + kPi / (2.0 * n));
}

}  // namespace

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
  return 0.5 * (lo + hi);
}

double noise_scale(std::vector<double> v) {
  // Qn alone says 0 when the runs sit on a few levels (two hosts, two clock
  // states: half the pairwise distances are 0), and the gate would then fail
  // on the first run at the other level. The range between the 10th and the
  // 90th percentile sees those levels (2.5631 of it is one standard
  // deviation of a normal sample), and ignores up to a tenth of bad nights.
  // The larger of the two errs on the side of not crying wolf.
  if (v.size() < 2) return 0;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    double pos = q * static_cast<double>(v.size() - 1);
    size_t lo = static_cast<size_t>(pos);
    size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  double decile_range = (at(0.9) - at(0.1)) / 2.5631;
  return std::max(qn_scale(std::move(v)), decile_range);
}

double qn_scale(std::vector<double> v) {
  const size_t n = v.size();
  if (n < 2) return 0;
  // The k-th smallest of the n(n-1)/2 pairwise distances, k = h(h-1)/2 with
  // h = n/2 + 1: about their first quartile. 2.2219 makes it estimate the
  // standard deviation of a normal sample; d_n corrects its small-sample bias
  // (Croux & Rousseeuw 1992).
  std::vector<double> d;
  d.reserve(n * (n - 1) / 2);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) d.push_back(std::fabs(v[i] - v[j]));
  size_t h = n / 2 + 1;
  size_t k = h * (h - 1) / 2;
  std::nth_element(d.begin(), d.begin() + static_cast<long>(k - 1), d.end());
  static const double small[] = {0, 0, 0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872};
  double dn = n <= 9 ? small[n] : n % 2 ? n / (n + 1.4) : n / (n + 3.8);
  return dn * 2.2219 * d[k - 1];
}

HistoryResult history_rule(const std::vector<double>& series, bool lower_is_better,
                           const HistoryRuleOptions& opt) {
  HistoryResult r;
  if (series.empty()) return r;
  const size_t last = series.size() - 1;
  const double newest = series[last];
  Window w1 = window_stats(series, last, opt.window);
  r.history = w1.n;
  r.baseline = w1.baseline;
  if (w1.n == 0 || w1.baseline <= 0) {
    r.outcome = HistoryOutcome::too_little_history;
    return r;
  }
  r.change = (newest - w1.baseline) / w1.baseline;
  r.drop = drop_of(newest, w1.baseline, lower_is_better);
  r.noise = w1.noise;
  r.explained = explained(opt, w1.noise, 1, w1.n);
  r.recent_drop = r.drop;
  r.recent_explained = r.explained;
  if (w1.n < opt.min_history) {
    r.outcome = HistoryOutcome::too_little_history;
    return r;
  }

  // The newest run alone, then the newest k runs together.
  for (int k = 1; k <= opt.max_recent && static_cast<size_t>(k) <= last; ++k) {
    Window wk = w1;
    if (k > 1) {
      // The baseline before the newest k runs; its noise (the costly part)
      // only where the cheap conditions below can still fail.
      size_t end = last + 1 - static_cast<size_t>(k);
      size_t begin = end > static_cast<size_t>(opt.window) ? end - opt.window : 0;
      wk.n = static_cast<int>(end - begin);
      if (wk.n < opt.min_history) break;
      wk.baseline = median_of(std::vector<double>(series.begin() + static_cast<long>(begin),
                                                  series.begin() + static_cast<long>(end)));
      if (wk.baseline <= 0) break;
    }
    double sum = 0;
    for (size_t i = last + 1 - k; i <= last; ++i) sum += series[i];
    double d = drop_of(sum / k, wk.baseline, lower_is_better);
    // A sustained drop only fails while the newest run is still low: a run
    // back at the baseline clears the gate the night the fix lands.
    bool newest_low = drop_of(newest, wk.baseline, lower_is_better) > opt.min_gap / 2;
    if (!(d > opt.min_gap && newest_low)) continue;
    if (k > 1) wk = window_stats(series, last + 1 - k, opt.window);
    double e = explained(opt, wk.noise, k, wk.n);
    if (d > e) {
      r.outcome = HistoryOutcome::fail;
      r.recent = k;
      r.recent_drop = d;
      r.recent_explained = e;
      return r;
    }
  }
  if (r.noise > opt.max_noise)
    r.outcome = HistoryOutcome::too_noisy;
  else if (r.drop > opt.min_gap)
    r.outcome = HistoryOutcome::within_noise;
  return r;
}

}  // namespace kb
