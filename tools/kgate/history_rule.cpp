#include "tools/kgate/history_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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

std::vector<double> slice(const std::vector<double>& series, size_t end, int window) {
  size_t begin = end > static_cast<size_t>(window) ? end - static_cast<size_t>(window) : 0;
  return std::vector<double>(series.begin() + static_cast<long>(begin),
                             series.begin() + static_cast<long>(end));
}

Window window_stats(const std::vector<double>& series, size_t end, const HistoryRuleOptions& opt) {
  std::vector<double> w = slice(series, end, opt.window);
  Window s;
  s.n = static_cast<int>(w.size());
  if (w.empty()) return s;
  s.baseline = median_of(w);
  if (s.baseline > 0) s.noise = noise_scale(std::move(w)) / s.baseline;
  return s;
}

// The noise estimated from n runs is itself uncertain: z widens as n
// shrinks, as a Student-t quantile does (Cornish-Fisher expansion of t with
// the degrees of freedom of Qn's 82% efficiency; docs/gate.md says why).
double widened_z(double z, int n) {
  double nu = std::max(0.82 * (n - 1), 1.0);  // n < 3 is never gated; keep it finite
  double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * nu) + (5 * z5 + 16 * z3 + 3 * z) / (96 * nu * nu);
}

// The value of the newest k runs taken together, robust to one bad night
// among them: the newest run alone, the better of two, the median of more.
double recent_value(const std::vector<double>& series, int k, bool lower_is_better) {
  auto first = series.end() - k;
  if (k == 1) return series.back();
  if (k == 2) return lower_is_better ? std::min(first[0], first[1]) : std::max(first[0], first[1]);
  return median_of(std::vector<double>(first, series.end()));
}

// Variance of recent_value for k runs of unit variance (Monte Carlo): the
// median's but for the better of two.
double recent_variance(int k) { return k == 2 ? 0.682 : median_variance(k); }

// What the noise explains for the newest k runs against the median of n
// runs: z (widened for a noise estimated from `dof` runs, n's own by
// default) standard deviations of their difference.
double explained(const HistoryRuleOptions& opt, double noise, int k, int n, int dof = 0) {
  return widened_z(opt.z, dof ? dof : n) * noise * std::sqrt(recent_variance(k) + kPi / (2.0 * n));
}

// The same for the newest run of m attempts, judged on the median of its
// m - 1 re-measurements: the shared part of the noise stays whole, the rest
// shrinks as a median does.
double explained_attempts(const HistoryRuleOptions& opt, double noise, int m, int n, int dof = 0) {
  double v = opt.shared_noise + (1 - opt.shared_noise) * median_variance(m - 1);
  return widened_z(opt.confirm_z, dof ? dof : n) * noise * std::sqrt(v + kPi / (2.0 * n));
}

// The first stage's eager line: a drop beyond it is re-measured.
double suspect_line(const HistoryRuleOptions& opt, double noise, int n, int dof = 0) {
  return widened_z(opt.suspect_z, dof ? dof : n) * noise * std::sqrt(1 + kPi / (2.0 * n));
}

// The k-th smallest pairwise distance of the sorted x without listing them
// (kgate compare may pass a million runs): Croux & Rousseeuw's selection
// with a seeded random pivot; exactly the k-th of all distances listed.
double kth_distance(const std::vector<double>& x, uint64_t k) {
  const size_t n = x.size();
  std::vector<size_t> lo(n), hi(n), below_p(n), upto_p(n);  // row i's candidates: j in [lo, hi)
  for (size_t i = 0; i < n; ++i) lo[i] = i + 1, hi[i] = n;
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  for (;;) {
    uint64_t left = 0, before = 0;  // candidates; distances left of them (all smaller)
    for (size_t i = 0; i < n; ++i) left += hi[i] - lo[i], before += lo[i] - (i + 1);
    if (left <= std::max<uint64_t>(4 * n, 4096)) {
      std::vector<double> d;
      d.reserve(left);
      for (size_t i = 0; i < n; ++i)
        for (size_t j = lo[i]; j < hi[i]; ++j) d.push_back(x[j] - x[i]);
      const auto r = static_cast<long>(k - 1 - before);
      std::nth_element(d.begin(), d.begin() + r, d.end());
      return d[static_cast<size_t>(r)];
    }
    // SplitMix64: the pivot is the r-th candidate.
    seed += 0x9E3779B97F4A7C15ull;
    uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    uint64_t r = (z ^ (z >> 31)) % left;
    size_t row = 0;
    while (r >= hi[row] - lo[row]) r -= hi[row] - lo[row], ++row;
    const double p = x[lo[row] + r] - x[row];
    // below_p[i] / upto_p[i]: the first j whose distance is >= p / > p.
    uint64_t n_below = 0, n_upto = 0;
    size_t a = 0, b = 0;
    for (size_t i = 0; i < n; ++i) {
      a = std::max(a, i + 1);
      b = std::max(b, i + 1);
      while (a < n && x[a] - x[i] < p) ++a;
      while (b < n && x[b] - x[i] <= p) ++b;
      below_p[i] = a;
      upto_p[i] = b;
      n_below += a - (i + 1);
      n_upto += b - (i + 1);
    }
    if (k > n_below && k <= n_upto) return p;
    for (size_t i = 0; i < n; ++i) {
      if (k <= n_below)
        hi[i] = std::max(lo[i], std::min(hi[i], below_p[i]));
      else
        lo[i] = std::min(hi[i], std::max(lo[i], upto_p[i]));
    }
  }
}

}  // namespace

double median_variance(int m) {
  // Monte Carlo (4e6 draws) for small m; pi/(2m) beyond.
  static const double v[] = {0, 1, 0.5, 0.449, 0.298, 0.287, 0.215, 0.210, 0.168};
  if (m < 1) return 1;
  return m <= 8 ? v[m] : kPi / (2.0 * m);
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
  return 0.5 * (lo + hi);
}

double mad_scale(const std::vector<double>& v) {
  double m = median_of(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - m));
  return 1.4826 * median_of(std::move(dev));
}

double noise_scale(std::vector<double> v) {
  // Qn alone says 0 when the runs sit on a few levels (two hosts, two clock
  // states); the interquartile range sees such levels once the smaller holds
  // a quarter of the runs, and ignores bad nights as Qn does.
  if (v.size() < 2) return 0;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    double pos = q * static_cast<double>(v.size() - 1);
    size_t lo = static_cast<size_t>(pos);
    size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  double iqr = (at(0.75) - at(0.25)) / 1.349;
  return std::max(qn_scale(std::move(v)), iqr);
}

double qn_scale(std::vector<double> v) {
  const size_t n = v.size();
  if (n < 2) return 0;
  // The k-th smallest pairwise distance, k = h(h-1)/2 with h = n/2 + 1;
  // 2.2219 and the small-sample d_n (Croux & Rousseeuw 1992).
  std::sort(v.begin(), v.end());
  const uint64_t h = n / 2 + 1;
  static const double small[] = {0, 0, 0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872};
  double dn = n <= 9 ? small[n] : n % 2 ? n / (n + 1.4) : n / (n + 3.8);
  return dn * 2.2219 * kth_distance(v, h * (h - 1) / 2);
}

double gap_of(const HistoryRuleOptions& opt, double unit_noise, int attempts) {
  if (attempts <= 1) return opt.min_gap;
  return std::min(opt.min_gap, std::max(opt.confirmed_gap, kGapSigmas * unit_noise));
}

int history_attempts_of(std::vector<int> attempts) {
  if (attempts.empty()) return 1;
  std::sort(attempts.begin(), attempts.end());
  return std::max(1, attempts[(attempts.size() - 1) / 2]);
}

HistoryResult history_rule(const std::vector<double>& series, bool lower_is_better,
                           const HistoryRuleOptions& opt, int attempts, int history_attempts,
                           double mid_spread, const PooledNoise* pooled) {
  HistoryResult r;
  r.attempts = std::max(attempts, 1);
  if (series.empty()) return r;
  const size_t last = series.size() - 1;
  const double newest = series[last];
  // Earlier values that are medians of several attempts: the thresholds
  // read their noise as one attempt's (r.noise stays the history's own).
  const double unit = history_attempts > 1
                          ? 1 / std::sqrt(opt.shared_noise + (1 - opt.shared_noise) *
                                                                 median_variance(history_attempts))
                          : 1;
  Window w1 = window_stats(series, last, opt);
  r.history = w1.n;
  r.baseline = w1.baseline;
  if (w1.n == 0 || w1.baseline <= 0) {
    r.outcome = HistoryOutcome::too_little_history;
    return r;
  }
  r.change = (newest - w1.baseline) / w1.baseline;
  r.drop = drop_of(newest, w1.baseline, lower_is_better);
  if (pooled) w1.noise = pooled->noise;
  const int dof = pooled ? pooled->runs : w1.n;
  r.noise = w1.noise;
  const double s = w1.noise * unit;
  r.explained = r.attempts > 1 ? explained_attempts(opt, s, r.attempts, w1.n, dof)
                               : explained(opt, s, 1, w1.n, dof);
  r.gap = gap_of(opt, s, r.attempts);
  // A confirmation would hold the newest run to this floor.
  const double confirm_gap = gap_of(opt, s, 2);
  // A drop within --min-gap that kModeRuns earlier runs of the window
  // reached too (within two of the key's standard deviations) is a slow
  // state of the machine seen before, not a new one.
  if (r.drop > confirm_gap && r.drop <= opt.min_gap) {
    int slow = 0;
    for (double v : slice(series, last, opt.window))
      slow += drop_of(v, w1.baseline, lower_is_better) > std::max(confirm_gap, r.drop - 2 * s);
    if (slow >= kModeRuns) r.seen_before = slow;
  }
  r.recent_drop = r.drop;
  r.recent_explained = r.explained;
  if (dof < opt.min_history) {
    r.outcome = HistoryOutcome::too_little_history;
    return r;
  }

  // The newest run alone, then the newest k runs together.
  for (int k = 1; k <= opt.max_recent && static_cast<size_t>(k) <= last; ++k) {
    Window wk = w1;
    if (k > 1) {
      // The baseline before the newest k runs; its noise (the costly part)
      // only where the cheap conditions below can still fail.
      std::vector<double> w = slice(series, last + 1 - static_cast<size_t>(k), opt.window);
      wk.n = static_cast<int>(w.size());
      if (wk.n < opt.min_history) break;
      wk.baseline = median_of(w);
      if (wk.baseline <= 0) break;
    }
    double d = drop_of(recent_value(series, k, lower_is_better), wk.baseline, lower_is_better);
    // A sustained drop only fails while the newest run is still low: a run
    // back at the baseline clears the gate the night the fix lands.
    bool newest_low = k == 1 || drop_of(newest, wk.baseline, lower_is_better) > opt.min_gap / 2;
    const double held = k == 1 ? d - mid_spread / (2 * wk.baseline) : d;
    if (!(held > (k == 1 ? r.gap : opt.min_gap) && newest_low) || (k == 1 && r.seen_before))
      continue;
    if (k > 1) wk = window_stats(series, last + 1 - k, opt);
    double e = k == 1 ? r.explained : explained(opt, wk.noise * unit, k, wk.n);
    if (d > e) {
      r.outcome = HistoryOutcome::fail;
      r.recent = k;
      r.recent_drop = d;
      r.recent_explained = e;
      r.suspect = r.attempts == 1;
      return r;
    }
  }
  if (r.noise > opt.max_noise) {
    r.outcome = HistoryOutcome::too_noisy;
    return r;
  }
  if (r.seen_before) return r;
  if (r.drop > r.gap) r.outcome = HistoryOutcome::within_noise;
  r.suspect = r.attempts == 1 && r.drop > confirm_gap && r.drop > suspect_line(opt, s, w1.n, dof);
  return r;
}

}  // namespace kb
