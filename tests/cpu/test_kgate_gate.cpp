// The gate's rules on small histories: failed/incorrect rows, targets (from
// target files by arch, else the row's own), the history window with its
// direction, inconclusive cases, throttled and skipped rows, missing keys,
// several GPU models, and gpt_fast files where file order is run order.
#include <gtest/gtest.h>

#include "kgate_test_util.h"
#include "tools/kgate/gate.h"

namespace {

using namespace kgt;

kb::GateReport gate(const std::vector<std::string>& files, kb::GateOptions opt = {}) {
  kb::History h;
  for (size_t i = 0; i < files.size(); ++i) h.add_text(files[i], "f" + std::to_string(i) + ".csv");
  h.finish();
  return kb::run_gate(h, opt);
}

// By value: the report is usually a temporary.
kb::GateKeyResult only(const kb::GateReport& r) {
  EXPECT_EQ(r.keys.size(), 1u);
  return r.keys.at(0);
}

TEST(KgateGate, SteadyHistoryPasses) {
  auto r = gate({csv(series("layer_norm", steady(30, 1000, 1001)))});
  const auto& k = only(r);
  EXPECT_EQ(k.status, kb::GateStatus::pass) << k.why;
  EXPECT_EQ(k.history_runs, 30);
  ASSERT_TRUE(k.baseline && k.value && k.change);
  EXPECT_NEAR(*k.baseline, 1000, 5);
  EXPECT_EQ(*k.value, 1001);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(KgateGate, DropBeyondGapAndNoiseFails) {
  auto r = gate({csv(series("layer_norm", steady(30, 1000, 900)))});
  const auto& k = only(r);
  EXPECT_EQ(k.status, kb::GateStatus::fail);
  EXPECT_EQ(k.rule, "history");
  EXPECT_NEAR(*k.change, -0.10, 0.006);
  EXPECT_TRUE(contains(k.why,
                       "worse than the median of the last 30 runs: more than --min-gap 3.0% "
                       "and than the history's noise explains"))
      << k.why;
  EXPECT_EQ(k.run, "r30");
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(KgateGate, DropUnderTheGapPassesEvenOnAQuietHistory) {
  // 2% down on a history that wobbles by 0.2%: real, but under --min-gap.
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) v.push_back(1000 + (i % 5 - 2));
  v.push_back(980);
  const auto& k = only(gate({csv(series("layer_norm", v))}));
  EXPECT_EQ(k.status, kb::GateStatus::pass) << k.why;
  kb::GateOptions tight;
  tight.rule.min_gap = 0.01;
  EXPECT_EQ(only(gate({csv(series("layer_norm", v))}, tight)).status, kb::GateStatus::fail);
}

TEST(KgateGate, DirectionComesFromTheMetric) {
  auto rows = series("launch", steady(30, 10, 11));  // 10% slower
  for (auto& x : rows) x.metric = "latency(us)";
  const auto& slower = only(gate({csv(rows)}));
  EXPECT_EQ(slower.status, kb::GateStatus::fail) << slower.why;
  EXPECT_TRUE(slower.lower_is_better);
  rows.back().actual = 9;  // 10% faster
  EXPECT_EQ(only(gate({csv(rows)})).status, kb::GateStatus::pass);
  // And a rate going up is no regression either.
  EXPECT_EQ(only(gate({csv(series("gemv", steady(30, 1000, 1200)))})).status, kb::GateStatus::pass);
}

TEST(KgateGate, TooLittleHistoryIsInconclusiveAndFailsOnlyWhenStrict) {
  std::string f = csv(series("gemv", {1000, 1000, 1000, 700}));
  auto r = gate({f});
  const auto& k = only(r);
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive);
  EXPECT_EQ(k.rule, "too little history");
  EXPECT_EQ(k.why, "only 3 earlier runs on this GPU: the history rule needs 10");
  EXPECT_EQ(r.exit_code(), 0);
  kb::GateOptions strict;
  strict.strict = true;
  EXPECT_EQ(gate({f}, strict).exit_code(), 1);
}

TEST(KgateGate, NoisyHistoryIsInconclusive) {
  // +-10% swings: nothing can be said about a 12% drop.
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) v.push_back(1000 * (i % 2 ? 1.1 : 0.9));
  v.push_back(880);
  const auto& k = only(gate({csv(series("gemv", v))}));
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive);
  EXPECT_EQ(k.rule, "too noisy");
  EXPECT_TRUE(contains(k.why, "history too noisy to gate: noise")) << k.why;
}

TEST(KgateGate, DropWithinTheNoiseIsInconclusive) {
  // +-3% swings (noise about 3%): a 5% drop is beyond the gap but not the noise.
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) v.push_back(1000 * (1 + 0.03 * ((i % 3) - 1)));
  v.push_back(950);
  const auto& k = only(gate({csv(series("gemv", v))}));
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive) << k.why;
  EXPECT_EQ(k.rule, "within noise");
  EXPECT_TRUE(contains(k.why,
                       "5.0% worse than the median of the last 30 runs, but the history's "
                       "noise"))
      << k.why;
}

TEST(KgateGate, SustainedDropIsCaughtOverSeveralRuns) {
  // Noise of about 2%: one run 4.5% down is within it; six in a row are not.
  std::vector<double> v;
  const double wobble[] = {-0.025, 0.02, -0.01, 0.015, 0, -0.02, 0.025, 0.01, -0.015, 0.005};
  for (int i = 0; i < 60; ++i) v.push_back(1000 * (1 + wobble[i % 10]));
  std::vector<double> one = v;
  one.push_back(955);
  EXPECT_NE(only(gate({csv(series("gemv", one))})).status, kb::GateStatus::fail);
  std::vector<double> six = v;
  for (double x : {955.0, 950.0, 958.0, 952.0, 956.0, 954.0}) six.push_back(x);
  const auto& k = only(gate({csv(series("gemv", six))}));
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_TRUE(contains(k.why, "runs are")) << k.why;
  // The night the fix lands, the gate clears.
  six.push_back(1001);
  EXPECT_EQ(only(gate({csv(series("gemv", six))})).status, kb::GateStatus::pass);
}

TEST(KgateGate, FailedAndIncorrectRowsFail) {
  auto rows = series("gemv", steady(30, 1000, 1000));
  rows.back().status = "incorrect";
  rows.back().actual.reset();
  rows.back().message = "max abs error 3.1 at [17]";
  const auto& k = only(gate({csv(rows)}));
  EXPECT_EQ(k.status, kb::GateStatus::fail);
  EXPECT_EQ(k.rule, "incorrect");
  EXPECT_EQ(k.why, "the output is incorrect (it failed its check): max abs error 3.1 at [17]");
  rows.back().status = "failed";
  rows.back().message = "out of GPU memory";
  EXPECT_EQ(only(gate({csv(rows)})).why, "the run failed: out of GPU memory");
}

TEST(KgateGate, SkippedRowsAreNotGated) {
  auto rows = series("gemv", {1000});
  rows.back().status = "skipped";
  rows.back().actual.reset();
  rows.back().message = "fp8 needs sm_89";
  auto r = gate({csv(rows)});
  EXPECT_EQ(only(r).status, kb::GateStatus::skipped);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(KgateGate, ThrottledDropIsInconclusive) {
  auto rows = series("gemv", steady(30, 1000, 800));
  rows.back().status = "throttled";
  const auto& k = only(gate({csv(rows)}));
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive);
  EXPECT_EQ(k.rule, "throttled");
  EXPECT_TRUE(contains(k.why, "the run was throttled")) << k.why;
}

TEST(KgateGate, ThrottledRunsStayOutOfTheBaseline) {
  auto rows = series("gemv", steady(30, 1000, 1000));
  for (size_t i = 0; i < 20; ++i) {
    rows[i].status = "throttled";
    rows[i].actual = 500;
  }
  const auto& k = only(gate({csv(rows)}));
  EXPECT_EQ(k.history_runs, 10);
  EXPECT_NEAR(*k.baseline, 1000, 5);
}

TEST(KgateGate, RowTargetWhenNoTargetFileMatches) {
  auto rows = series("gemv", {1000});
  rows.back().target = 1100;  // 9% short: beyond the default 5% tolerance
  auto r = gate({csv(rows)});
  const auto& k = only(r);
  EXPECT_EQ(k.status, kb::GateStatus::fail);
  EXPECT_EQ(k.rule, "target");
  EXPECT_EQ(k.why,
            "below target: 1000 vs 1100 (9.1% worse, tolerance 5.0%; the row's target column)");
  rows.back().target = 1040;  // within tolerance; too little history: inconclusive, not failed
  EXPECT_EQ(gate({csv(rows)}).exit_code(), 0);
}

#ifdef KBENCH_SOURCE_DIR
TEST(KgateGate, TargetFileMatchedByArchWins) {
  kb::GateOptions opt;
  opt.targets = kb::load_target_dir(std::string(KBENCH_SOURCE_DIR) + "/targets");
  // The seed's A100 target for layer_norm bfloat16 (mean) is 950 GB/s, 5%.
  std::string gpt_fast =
      "name,metric,target,actual,dtype,device,arch,is_model\n"
      "layer_norm,memory_bandwidth(GB/s),1,900.0,bfloat16,cuda," +
      std::string(kA100) + ",False\n";
  const auto& k = only(gate({gpt_fast}, opt));
  EXPECT_EQ(k.status, kb::GateStatus::fail);
  EXPECT_EQ(*k.target, 950);
  EXPECT_TRUE(contains(k.why, "below target: 900 vs 950 (5.3% worse, tolerance 5.0%; ")) << k.why;
  EXPECT_TRUE(contains(k.why, "a100-sxm4-40gb.json)")) << k.why;
  // A relative target: 0.85 of the row's roofline (H100 gemv int8, any shape).
  auto rows = series("gemv", {2500});
  rows.back().dtype = "int8";
  rows.back().roofline = 3107;
  const auto& rel = only(gate({csv(rows)}, opt));
  EXPECT_EQ(rel.status, kb::GateStatus::fail) << rel.why;
  EXPECT_NEAR(*rel.target, 0.85 * 3107, 1e-9);
  rows.back().actual = 2700;
  EXPECT_EQ(gate({csv(rows)}, opt).count(kb::GateStatus::fail), 0u);
}
#endif

TEST(KgateGate, KeyMissingFromTheNewestRun) {
  std::vector<kb::Record> rows;
  for (int i = 0; i < 12; ++i) {
    rows.push_back(row("layer_norm", 1000, "r" + std::to_string(i)));
    if (i < 11) rows.push_back(row("gemv", 900, "r" + std::to_string(i)));
  }
  auto r = gate({csv(rows)});
  ASSERT_EQ(r.keys.size(), 2u);
  EXPECT_EQ(r.keys[0].name, "gemv");
  EXPECT_EQ(r.keys[0].status, kb::GateStatus::inconclusive);
  EXPECT_EQ(r.keys[0].why, "not in the newest run r11 (was in r10)");
}

TEST(KgateGate, EachGpuModelIsGatedOnItsOwnNewestRunAndHistory) {
  auto h100 = series("gemv", steady(30, 2000, 2000), kH100);
  auto a100 = series("gemv", steady(30, 1000, 800), kA100);
  for (auto& x : a100) x.run_id = "a" + x.run_id;
  auto r = gate({csv(h100), csv(a100)});
  ASSERT_EQ(r.keys.size(), 2u);
  EXPECT_EQ(r.keys[0].arch, kA100);
  EXPECT_EQ(r.keys[0].status, kb::GateStatus::fail);
  EXPECT_EQ(r.keys[1].arch, kH100);
  EXPECT_EQ(r.keys[1].status, kb::GateStatus::pass);
  EXPECT_NEAR(*r.keys[1].baseline, 2000, 10);
  EXPECT_EQ(r.gated_runs.size(), 2u);
}

// Runs are ordered as they were appended, never by their clocks: a file
// written newest first gates the run appended last, and says that its
// stamps disagree (docs/gate.md "Which run is tonight's").
TEST(KgateGate, RunsAreOrderedByAppendNotByTimestamp) {
  auto rows = series("gemv", steady(30, 1000, 700));
  std::reverse(rows.begin(), rows.end());  // newest first in the file
  const auto r = gate({csv(rows)});
  const auto& k = only(r);
  EXPECT_EQ(k.run, "r0");
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_TRUE(contains(r.warnings.back(),
                       "r0 (2026-01-01T00:00:00Z), appended last and gated, "
                       "is stamped earlier than run r30"))
      << r.warnings.back();
}

// gpt_fast files: no run id, so each repeat of a key in a file is its next run.
std::string gpt_fast_file(bool with_arch, const std::vector<double>& layer_norm, double gemv) {
  std::string s = with_arch ? "name,metric,target,actual,dtype,device,arch,is_model\n"
                            : "name,metric,target,actual,dtype,device,is_model\n";
  for (double v : layer_norm) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "layer_norm,memory_bandwidth(GB/s),950,%.6f,bfloat16,cuda,%sFalse\n", v,
                  with_arch ? "NVIDIA A100-SXM4-40GB," : "");
    s += buf;
    std::snprintf(buf, sizeof buf, "gemv,memory_bandwidth(GB/s),870,%.6f,int8,cuda,%sFalse\n", gemv,
                  with_arch ? "NVIDIA A100-SXM4-40GB," : "");
    s += buf;
  }
  return s;
}

TEST(KgateGate, GptFastFileOrderIsRunOrder) {
  for (bool with_arch : {true, false}) {
    auto r = gate({gpt_fast_file(with_arch, steady(20, 1000, 880), 900)});
    ASSERT_EQ(r.keys.size(), 2u);
    EXPECT_EQ(r.keys[0].name, "layer_norm");
    EXPECT_EQ(r.keys[0].status, kb::GateStatus::fail) << r.keys[0].why;
    EXPECT_EQ(r.keys[0].shape, "mean");
    EXPECT_EQ(r.keys[0].history_runs, 20);
    EXPECT_EQ(r.keys[0].run, "f0.csv#21");
    EXPECT_EQ(r.keys[1].status, kb::GateStatus::pass);
    EXPECT_EQ(r.keys[1].arch, with_arch ? kA100 : "");
  }
}

TEST(KgateGate, GptFastHistoryThenNewFile) {
  // History in one file, tonight's run in another: files are taken in order.
  auto r =
      gate({gpt_fast_file(true, steady(20, 1000, 1000), 900), gpt_fast_file(true, {700}, 900)});
  EXPECT_EQ(r.keys[0].name, "layer_norm");
  EXPECT_EQ(r.keys[0].status, kb::GateStatus::fail);
  EXPECT_EQ(r.keys[0].run, "f1.csv#1");
  EXPECT_EQ(r.keys[0].history_runs, 21);
}

}  // namespace
