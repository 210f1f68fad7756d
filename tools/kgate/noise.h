// `kgate noise`: the run-to-run noise of each key over several runs of the
// suite (tools/noise-report.sh; docs/gate.md "The noise report"). Per key:
// the runs, the median, the robust noise 1.4826*MAD/median, the distinct
// variants, the modes (runs beyond the others' range by more than their
// noise explains), and a rate key's noise against its bar (noise_bar).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

// Where a key's runs are on two or more boards (gpu_uuid), a nightly's
// noise is that of one board: each run is taken against its own board's
// median and the modes are looked for within each board; the spread
// between the boards' medians is reported beside it.
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
  // The median over the runs of the rows' median_us; none where no row has one.
  std::optional<double> timed_us;
  // noise_bar(timed_us) for a rate key (higher is better) with a timed_us; 0: no bar.
  double bar = 0;
  bool meets_bar = false;  // noise <= bar, on kMinRunsForBar runs or more (one run reads 0%).
};

// The bar for a rate row's run-to-run noise: 0.5% where its timed work is
// 20 us or more, 1.5% under (launch and clock jitter weigh more).
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
// One line per key; new columns are appended (readers of the older keep working).
std::string noise_csv(const NoiseReport& r);

}  // namespace kb
