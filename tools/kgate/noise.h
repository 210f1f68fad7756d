// `kgate noise`: the run-to-run noise of each key over several runs of the
// suite (issue 24; tools/noise-report.sh runs the suite N times and calls
// it). Per key: the runs, the median, the robust noise 1.4826*MAD/median
// (what docs/gate.md calls a key's noise), how many distinct variants ran
// (a changing kernel choice is an event, not noise), and the modes: runs
// whose fastest call (min_us; the value where a row has none) lies beyond
// the other runs' range by more than their own noise explains.
#pragma once

#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

struct NoiseKey {
  std::string name, metric, dtype, shape, arch, device;
  int runs = 0;
  double median = 0;
  double noise = 0;  // relative: 1.4826 * MAD / median over the runs' values
  int variants = 0;  // distinct variants (an `inject=` field does not count)
  std::vector<std::string> mode_runs;
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
// name,metric,dtype,shape,arch,device,runs,median,noise_rel,noise_class,variants,modes,mode_runs
std::string noise_csv(const NoiseReport& r);

}  // namespace kb
