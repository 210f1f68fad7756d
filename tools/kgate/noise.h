// `kgate noise`: the run-to-run noise of each key over several runs of the
// suite (docs/gate.md "The noise report").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

// On two or more boards (gpu_uuid), a nightly's noise is one board's: each
// run is taken against its board's median, modes looked for per board.
struct NoiseKey : Key {
  int runs = 0;
  double median = 0;
  double noise = 0;         // relative: 1.4826 * MAD of each run against its board's median
  double noise_all = 0;     // the same against the median of all runs (= noise on one board)
  int boards = 1;           // distinct boards the runs were on
  double board_spread = 0;  // (largest - smallest board median) / median, boards of >= 3 runs
  int variants = 0;         // distinct variants (an `inject=` field does not count)
  std::vector<std::string> mode_runs;
  std::vector<bool> mode_slow;     // per mode run: slower than the others (else faster)
  std::optional<double> timed_us;  // the runs' median median_us
  double bar = 0;                  // noise_bar(timed_us) for a rate key; 0: no bar
  bool meets_bar = false;          // noise <= bar, on kMinRunsForBar runs or more
};

// A rate row's noise bar: 0.5% from 20 us of timed work, 1.5% under.
inline constexpr double kBarBoundaryUs = 20;
inline constexpr int kMinRunsForBar = 3;
double noise_bar(double timed_us);

struct NoiseReport {
  std::vector<NoiseKey> keys;  // noisiest first
  size_t runs = 0;             // runs read
};

// Each run's attempt 1 of each key (re-measurements would look less noisy).
NoiseReport noise_report(const History& h);

// "<=0.5%", "<=1%", "<=3%", ">3%" (docs/gate.md, tools/gate-selftest.sh).
const char* noise_class(double noise);

std::string noise_console(const NoiseReport& r);
std::string noise_markdown(const NoiseReport& r);
// One line per key; new columns go last, for the older readers.
std::string noise_csv(const NoiseReport& r);

}  // namespace kb
