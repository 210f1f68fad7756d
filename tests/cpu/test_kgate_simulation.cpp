// The evidence behind the history rule's defaults (docs/decisions/0015 to 0017):
// simulated nightly histories with 2% run-to-run noise, fixed seeds.
//
// "2% noise" is read two ways and both are tested:
// - a band: every night within about +-2% of the true value (2% = 3 sigma).
//   The issue's three numbers hold on the night a drop lands: no false
//   failure in 1000 nights, a 5% drop caught in >= 95% of trials, 10% always.
// - a standard deviation of 2% (what noise_rel would report). Then a single
//   night cannot separate a 5% drop (2.5 sigma) from noise at zero false
//   failures: no rule can; the test below shows the bound. kgate keeps the
//   false failures at zero and catches the drop over the next nights.
//
// Rates are asserted over enough nights that a worse rule fails (issue 21,
// defect 5): z = 3.5 or 2.0 fails the false-failure rates, a gate that never
// fails fails the catch rates (docs/decisions/0015 lists what each rule gives).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/simulate.h"
#include "tools/kgate/history_rule.h"

namespace {

kb::SimulationOptions sim(double noise) {
  kb::SimulationOptions o;  // the defaults of `kgate check`
  o.noise = noise;
  o.seed = 1;
  o.rule.max_noise = 1;  // the question is the rule, not the noise cap
  return o;
}

TEST(KgateSimulation, DefaultsAreTheOnesSimulated) {
  kb::HistoryRuleOptions d;
  EXPECT_EQ(d.window, 60);
  EXPECT_EQ(d.min_gap, 0.03);
  EXPECT_EQ(d.z, 4.25);
  EXPECT_EQ(d.max_recent, 8);
  EXPECT_EQ(d.min_history, 10);
  EXPECT_EQ(d.suspect_z, 2.0);
  EXPECT_EQ(d.confirm_z, 3.5);
  EXPECT_EQ(d.shared_noise, 0.5);
}

TEST(KgateSimulation, BandNoiseMeetsTheIssueOnTheFirstNight) {
  // Here --min-gap decides (3% is 4.5 sigma): the false-failure rate that
  // tells rules apart is the sigma = 2% one below.
  auto o = sim(0.02 / 3);
  auto ff = kb::simulate_false_failures(o, 20000);
  EXPECT_EQ(ff.nights, 20000);
  EXPECT_EQ(ff.failures, 0);
  auto five = kb::simulate_detection(o, 0.05, 1000, 1);
  EXPECT_GE(five[0], 0.95);
  auto ten = kb::simulate_detection(o, 0.10, 1000, 1);
  EXPECT_EQ(ten[0], 1.0);
}

TEST(KgateSimulation, SigmaNoiseFalseFailureRateAndDropsCaughtWithinDays) {
  auto o = sim(0.02);
  // 100,000 nights (the window slides, so they are not independent; the
  // rate is what matters): z = 4.25 fails 0.065 per 1000 nights here
  // (docs/decisions/0015), z = 4.0 0.165, z = 3.5 0.885, z = 2.0 dozens.
  auto ff = kb::simulate_false_failures(o, 100000);
  EXPECT_LE(ff.failures, 12) << "per 100,000 nights";
  // 10% (5 sigma): most on the first two nights, every trial by the fourth.
  auto ten = kb::simulate_detection(o, 0.10, 2000, 4);
  EXPECT_GE(ten[0], 0.5);
  EXPECT_GE(ten[1], 0.9);
  EXPECT_EQ(ten[3], 1.0);
  // 5% (2.5 sigma): three in four by the 8th night, most by the 12th.
  auto five = kb::simulate_detection(o, 0.05, 2000, 12);
  EXPECT_GE(five[7], 0.78);
  EXPECT_GE(five[11], 0.85);
}

TEST(KgateSimulation, RobustStatisticsSurviveBadNights) {
  // Band noise, and 5% of the nights bad (25% low). The median and the
  // robust noise still catch a 5% drop on its first night (the mean and
  // standard deviation missed nearly all: decisions/0015).
  auto o = sim(0.02 / 3);
  o.bad_nights = 0.05;
  auto ff = kb::simulate_false_failures(o, 5000);
  EXPECT_LE(ff.failures, ff.nights / 1000);  // under 1 in 1000 (bad nights not counted)
  EXPECT_GE(kb::simulate_detection(o, 0.05, 1000, 1)[0], 0.95);
}

TEST(KgateSimulation, NoSingleNightRuleSeparates2point5SigmaAtZeroFalseFailures) {
  // The bound, with the true mean and sigma known (better than any rule
  // can know them): the threshold that keeps false failures under 1 in
  // 1000 nights (3.1 sigma) catches a 2.5-sigma drop in under 30% of nights.
  double z_fp = 3.09;  // P(N(0,1) > 3.09) = 0.001
  double caught = 0.5 * std::erfc((z_fp - 2.5) / std::sqrt(2.0));
  EXPECT_LT(caught, 0.30);
  // kgate, which must estimate both, catches fewer on the first night, but
  // not none (a gate that never fails would pass the bound).
  auto first = kb::simulate_detection(sim(0.02), 0.05, 4000, 1);
  EXPECT_LT(first[0], caught);
  EXPECT_GT(first[0], 0.005);
}

// Confirmation (docs/gate.md "Confirmation"): the nightly's two stages on the
// stress model of issue 15: Student-t tails (5 degrees of freedom), a slow
// mode (0.5% of processes 4% slow; a re-measurement stays in it 1 time in
// 5), a history of 20 nights, 4 re-measurements of each suspect.
kb::SimulationOptions stress(double noise, double shared) {
  kb::SimulationOptions o = sim(noise);
  o.rule.window = 20;
  o.confirm = 4;
  o.shared = shared;
  o.tails_dof = 5;
  o.mode_rate = 0.005;
  return o;
}

TEST(KgateSimulation, ConfirmationMeasuresTransientsAwayOnQuietKeys) {
  // A quiet key (0.3%): every slow mode is a 4% drop, beyond --min-gap and
  // far beyond the noise. One attempt fails on each (issue 15's A/A nights);
  // re-measured, only modes that stick in 3 of 4 fresh processes remain.
  auto once = stress(0.003, 0);
  once.confirm = 0;
  auto today = kb::simulate_false_failures(once, 50000);
  EXPECT_GE(today.failures, 150) << "per 50,000 nights, one attempt";
  auto o = stress(0.003, 0);
  auto ff = kb::simulate_false_failures(o, 50000);
  EXPECT_LE(ff.failures, 15) << "per 50,000 nights, confirmed";  // 0.14 per 1000
  EXPECT_LE(ff.suspects, 50000 / 50);                            // re-measured: under 2%
  // Re-measuring 3 times keeps about four times as many: a mode that sticks
  // in 2 of 3 processes is a majority, in 2 of 4 it is not.
  o.confirm = 3;
  EXPECT_GE(kb::simulate_false_failures(o, 50000).failures, 25);
}

TEST(KgateSimulation, ConfirmationCatchesDropsOnTheFirstNight) {
  // Issue 15's acceptance: 5% on keys of noise <= 1%, 10% on keys of <= 3%
  // (these at 2%: at 3% a 20-night history cannot do it, docs/decisions/0017).
  // Without confirmation (one attempt, z = 4.25) the first night catches
  // 5% at 1% noise in about a third of trials.
  EXPECT_GE(kb::simulate_detection(stress(0.003, 0), 0.05, 2000, 1)[0], 0.99);
  EXPECT_GE(kb::simulate_detection(stress(0.01, 0), 0.05, 2000, 1)[0], 0.90);
  EXPECT_GE(kb::simulate_detection(stress(0.02, 0), 0.10, 2000, 1)[0], 0.92);
  auto once = stress(0.01, 0);
  once.confirm = 0;
  EXPECT_LE(kb::simulate_detection(once, 0.05, 2000, 1)[0], 0.5);
}

TEST(KgateSimulation, ConfirmationKeepsNoisyKeysHonest) {
  // Half the noise shared by the attempts of a night (the machine, the
  // night): re-measuring cannot remove it, and the rule assumes as much
  // (shared_noise 0.5). False failures stay near one attempt's rate.
  auto o = stress(0.02, 0.5);
  auto ff = kb::simulate_false_failures(o, 50000);
  EXPECT_LE(ff.failures, 110) << "per 50,000 nights";  // about 1.6 per 1000
  EXPECT_LE(ff.suspects, 50000 / 20);                  // under 5% re-measured
  // A rule that believed re-measurements independent fails far more often.
  o.rule.shared_noise = 0;
  EXPECT_GE(kb::simulate_false_failures(o, 50000).failures, 200);
}

TEST(KgateSimulation, FewEarlierRunsDoNotMakeTheGateTriggerHappy) {
  // A fresh history (10 to 20 runs): the noise estimate is shaky, and the
  // Student-t widening must keep false failures about as rare as with a full
  // window (1 in 12,000 nights or fewer; without the widening, 1 in 500 to 800).
  for (int n : {10, 15, 20}) {
    kb::HistoryRuleOptions r;
    r.max_noise = 1;
    kb::SimRng rng(static_cast<uint64_t>(n));
    int fails = 0;
    for (int t = 0; t < 20000; ++t) {
      std::vector<double> s;
      for (int i = 0; i <= n; ++i) s.push_back(1000 * (1 + 0.02 * rng.normal()));
      fails += kb::history_rule(s, false, r).outcome == kb::HistoryOutcome::fail;
    }
    EXPECT_LE(fails, 5) << n << " earlier runs";  // 1 in 4000 at most
  }
}

TEST(KgateSimulation, BadNightsInTheHistoryNeitherMoveNorBlindTheGate) {
  // 60 nights at 1000 +-0.5%, four of them bad nights (a busy node: -25%).
  // A mean/standard-deviation gate would see a baseline 1.7% low and a noise
  // of 6%, and miss a 10% drop; the median and the robust noise see neither.
  kb::SimRng rng(3);
  std::vector<double> s;
  for (int i = 0; i < 60; ++i)
    s.push_back(1000 * (1 + 0.005 * rng.normal()) * (i % 15 == 3 ? 0.75 : 1));
  double mean = 0, sd = 0;
  for (double x : s) mean += x / 60;
  for (double x : s) sd += (x - mean) * (x - mean) / 59;
  sd = std::sqrt(sd);
  EXPECT_GT(sd / mean, 0.05);  // what a non-robust gate would take for the noise
  s.push_back(900);
  auto h = kb::history_rule(s, false, kb::HistoryRuleOptions());
  EXPECT_EQ(h.outcome, kb::HistoryOutcome::fail);
  EXPECT_NEAR(h.baseline, 1000, 5);
  EXPECT_LT(h.noise, 0.01);
}

TEST(KgateSimulation, QnEstimatesTheStandardDeviation) {
  kb::SimRng rng(9);
  std::vector<double> v;
  for (int i = 0; i < 2000; ++i) v.push_back(5 + 2 * rng.normal());
  EXPECT_NEAR(kb::qn_scale(v), 2.0, 0.1);
  EXPECT_EQ(kb::qn_scale({1.0}), 0);
  EXPECT_EQ(kb::qn_scale({3.0, 3.0, 3.0}), 0);
  EXPECT_EQ(kb::median_of({3, 1, 2}), 2);
  EXPECT_EQ(kb::median_of({4, 1, 3, 2}), 2.5);
}

}  // namespace
