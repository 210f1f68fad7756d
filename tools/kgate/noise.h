// `kgate noise`: the run-to-run noise of each key over several runs of the
// suite (issue 24; tools/noise-report.sh runs the suite N times and calls
// it). Per key: the runs, the median, the robust noise 1.4826*MAD/median
// (what docs/gate.md calls a key's noise), how many distinct variants ran
// (a changing kernel choice is an event, not noise), and the modes: runs
// whose fastest call (min_us; the value where a row has none) lies beyond
// the other runs' range by more than their own noise explains, each marked
// slow or fast (a lone fast sample is a state too, but not a slow night).
#pragma once

#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

// Boards (CSV schema v2's gpu_uuid): where a key's runs are on two or more
// boards, boards of one model differ (H100, 2026-11-25: compute-bound rows
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
};

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
// boards,board_spread,noise_all_boards
std::string noise_csv(const NoiseReport& r);

}  // namespace kb
