// Simulated nightly histories: the evidence behind the history rule's
// defaults (docs/gate.md), run by the tests with a fixed seed and by the
// hidden `kgate simulate` for the figures in the docs.
//
// A night's value is 1000 * (1 + e) * (1 - drop) with e ~ N(0, noise^2):
// run-to-run noise as a relative standard deviation. The generator is
// written out here (SplitMix64 and Box-Muller) rather than taken from
// <random>, whose normal distribution differs between standard libraries:
// the same seed gives the same nights everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/kgate/history_rule.h"

namespace kb {

class SimRng {
 public:
  explicit SimRng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64();
  double uniform();  // in (0, 1)
  double normal();   // N(0, 1)

 private:
  uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0;
};

struct SimulationOptions {
  double noise = 0.02;  // relative standard deviation of a night
  uint64_t seed = 1;
  HistoryRuleOptions rule;
};

struct FalseFailureResult {
  int nights = 0;
  int failures = 0;      // nights the gate failed with nothing changed
  int inconclusive = 0;  // nights it said inconclusive
};

// One key gated every night for `nights` nights, nothing ever changing
// (after a first window of history).
FalseFailureResult simulate_false_failures(const SimulationOptions& opt, int nights);

// `trials` regressions of `drop` (0.05 = 5% worse): in each, a fresh history
// of `window` nights, then nights at the lower level, gated each night.
// Element j of the result: the fraction of trials caught by night j+1 (the
// first element is "caught on the night the drop landed").
std::vector<double> simulate_detection(const SimulationOptions& opt, double drop, int trials,
                                       int horizon);

}  // namespace kb
