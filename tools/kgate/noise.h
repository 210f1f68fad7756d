// `kgate noise`: the run-to-run noise of each key over several runs of the
// suite (issue 24; tools/noise-report.sh runs the suite N times and calls
// it). Per key: the runs, the median, the robust noise 1.4826*MAD/median
// (what docs/gate.md calls a key's noise), how many distinct variants ran
// (a changing kernel choice is an event, not noise), and the modes: runs
// whose fastest call (min_us; the value where a row has none) lies beyond
// the other runs' range by more than their own noise explains, each marked
// slow or fast (a lone fast sample is a state too, but not a slow night).
// And issue 24's acceptance bar: each rate key's noise against the bar its
// timed work sets (noise_bar), so that the verdict is read, not computed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

// Boards (CSV schema v2's gpu_uuid): where a key's runs are on two or more
// boards, boards of one model differ (H100: compute-bound rows
// 2-3.4% apart, each board's own noise 0.05-0.35%), and a nightly's noise is
// that of one board. So the noise is then each run against its own board's
// median, pooled; the modes are looked for within each board; and the
// spread between the boards' medians is reported beside it. Runs without a
// UUID (schema v1) make one board of all.
struct NoiseKey {
  std::string name, metric, dtype, shape, arch, device;
  int runs = 0;
  double median = 0;
  double noise = 0;         // relative: 1.4826 * MAD of each run against its board's median
  double noise_all = 0;     // the same against the median of all runs (= noise on one board)
  int boards = 1;           // distinct boards the runs were on
  double board_spread = 0;  // (largest - smallest board median) / median, boards of >= 3 runs
  int variants = 0;         // distinct variants (an `inject=` field does not count)
  std::vector<std::string> mode_runs;
  std::vector<bool> mode_slow;  // per mode run: slower than the others (else faster)
  // The timed work: the median over the runs of the rows' median_us (one
  // timed call); none where no run's row has one (seed-mean rows, the
  // probe's rows, gpt_fast files).
  std::optional<double> timed_us;
  // Issue 24's bar, noise_bar(timed_us), for a rate key (a higher-is-better
  // metric) with a timed work; 0: no bar (a time such as launch(us) or
  // latency(us) is not a rate, and a row without median_us has no timed work).
  double bar = 0;
  // noise <= bar, on kMinRunsForBar runs or more (fewer runs show no noise
  // to trust: one run reads 0%).
  bool meets_bar = false;
};

// Issue 24's acceptance bar for a rate row's run-to-run noise: 0.5% where
// its timed work is 20 us or more, 1.5% under 20 us (a short kernel's
// launch and clock jitter are a larger share of it).
inline constexpr double kBarBoundaryUs = 20;
inline constexpr int kMinRunsForBar = 3;
double noise_bar(double timed_us);

struct NoiseReport {
  std::vector<NoiseKey> keys;  // noisiest first
  size_t runs = 0;             // runs read
};

// Each run's attempt 1 of each key (re-measurements would make the noise
// look smaller than one nightly run's).
NoiseReport noise_report(const History& h);

// The noise class used by docs/gate.md and tools/gate-selftest.sh:
// "<=0.5%", "<=1%", "<=3%", ">3%".
const char* noise_class(double noise);

std::string noise_console(const NoiseReport& r);
std::string noise_markdown(const NoiseReport& r);
// name,metric,dtype,shape,arch,device,runs,median,noise_rel,noise_class,variants,modes,mode_runs,
// boards,board_spread,noise_all_boards,timed_us,bar,meets_bar (the last three
// appended, so that readers of the older columns keep working)
std::string noise_csv(const NoiseReport& r);

}  // namespace kb
