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
  // Bad nights (a busy node, a throttled GPU): this fraction of the nights
  // before a drop come out `bad_drop` low. A night that is bad itself is not
  // counted as a false failure: no gate can tell it from a regression.
  double bad_nights = 0;
  double bad_drop = 0.25;

  // Confirmation (docs/gate.md "Confirmation"). With `confirm` > 0, each
  // night runs the nightly pipeline: attempt 1 is gated; if the key is a
  // suspect, `confirm` more attempts are measured and the night is judged
  // on the median of all of them (and enters the history so).
  int confirm = 0;
  // How attempts of one night relate. A night's deviation is
  // noise * (sqrt(shared) * e_night + sqrt(1 - shared) * e_attempt): the
  // `shared` share of the variance (the machine, the night) is common to
  // every attempt of the night; the rest is fresh in each process.
  double shared = 1;
  // Heavy tails: e is Student-t with this many degrees of freedom, scaled
  // to unit variance (0: normal).
  double tails_dof = 0;
  // A slow mode of one process: an attempt is `mode_size` slow with
  // probability `mode_rate`; a re-measurement of a night whose first
  // attempt was slow stays slow with probability `mode_stick`.
  double mode_rate = 0;
  double mode_size = 0.04;
  double mode_stick = 0.2;
};

struct FalseFailureResult {
  int nights = 0;                // nights gated (bad nights not counted)
  int failures = 0;              // nights the gate failed with nothing changed
  int inconclusive = 0;          // nights it said inconclusive
  int suspects = 0;              // nights the first stage re-measured (confirm > 0)
  int first_stage_failures = 0;  // nights attempt 1 alone would have failed
};

// One key gated every night for `nights` nights, nothing ever changing
// (after a first window of history).
FalseFailureResult simulate_false_failures(const SimulationOptions& opt, int nights);

// `trials` regressions of `drop` (0.05 = 5% worse): in each, a fresh history
// of `window` nights, then nights at the lower level, gated each night.
// Element j of the result: the fraction of trials caught by night j+1 (the
// first element is "caught on the night the drop landed"). The history
// nights are measured as the nightly measures them (with confirmation when
// confirm > 0); the drop applies to every attempt of the later nights.
std::vector<double> simulate_detection(const SimulationOptions& opt, double drop, int trials,
                                       int horizon);

}  // namespace kb
