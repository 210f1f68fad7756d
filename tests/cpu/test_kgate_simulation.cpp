// The evidence behind the history rule's defaults (docs/gate.md):
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
#include <gtest/gtest.h>

#include <cmath>

#include "tools/kgate/history_rule.h"
#include "tools/kgate/simulate.h"

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
}

TEST(KgateSimulation, BandNoiseMeetsTheIssueOnTheFirstNight) {
  auto o = sim(0.02 / 3);
  auto ff = kb::simulate_false_failures(o, 1000);
  EXPECT_EQ(ff.nights, 1000);
  EXPECT_EQ(ff.failures, 0);
  auto five = kb::simulate_detection(o, 0.05, 1000, 1);
  EXPECT_GE(five[0], 0.95);
  auto ten = kb::simulate_detection(o, 0.10, 1000, 1);
  EXPECT_EQ(ten[0], 1.0);
}

TEST(KgateSimulation, SigmaNoiseNoFalseFailuresAndDropsCaughtWithinDays) {
  auto o = sim(0.02);
  auto ff = kb::simulate_false_failures(o, 1000);
  EXPECT_EQ(ff.failures, 0);
  // 10% (5 sigma): most on the first two nights, every trial by the fourth.
  auto ten = kb::simulate_detection(o, 0.10, 1000, 4);
  EXPECT_GE(ten[0], 0.5);
  EXPECT_GE(ten[1], 0.9);
  EXPECT_EQ(ten[3], 1.0);
  // 5% (2.5 sigma): three in four by the 8th night, most by the 12th.
  auto five = kb::simulate_detection(o, 0.05, 1000, 12);
  EXPECT_GE(five[7], 0.75);
  EXPECT_GE(five[11], 0.85);
}

TEST(KgateSimulation, RobustStatisticsSurviveBadNights) {
  // Band noise, and 5% of the nights bad (25% low). The median and the
  // robust noise still catch a 5% drop on its first night; the mean and
  // standard deviation, pulled down and blown up by the bad nights, miss
  // nearly all of them.
  auto o = sim(0.02 / 3);
  o.bad_nights = 0.05;
  auto ff = kb::simulate_false_failures(o, 5000);
  EXPECT_LE(ff.failures, ff.nights / 1000);  // under 1 in 1000 (bad nights not counted)
  EXPECT_GE(kb::simulate_detection(o, 0.05, 1000, 1)[0], 0.95);
  o.rule.stats = kb::Statistics::mean_sd;
  EXPECT_LT(kb::simulate_detection(o, 0.05, 1000, 1)[0], 0.2);
  EXPECT_LT(kb::simulate_detection(o, 0.10, 1000, 1)[0], 0.2);
}

TEST(KgateSimulation, NoSingleNightRuleSeparates2point5SigmaAtZeroFalseFailures) {
  // The bound, with the true mean and sigma known (better than any rule
  // can know them): the threshold that keeps false failures under 1 in
  // 1000 nights (3.1 sigma) catches a 2.5-sigma drop in under 30% of nights.
  double z_fp = 3.09;  // P(N(0,1) > 3.09) = 0.001
  double caught = 0.5 * std::erfc((z_fp - 2.5) / std::sqrt(2.0));
  EXPECT_LT(caught, 0.30);
  // kgate, which must estimate both, catches fewer on the first night.
  auto first = kb::simulate_detection(sim(0.02), 0.05, 1000, 1);
  EXPECT_LT(first[0], caught);
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
