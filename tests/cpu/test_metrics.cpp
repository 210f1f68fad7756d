// The metrics (core/roofline.h's kb::Metric, and those experiments declare
// in their own files): every existing experiment's metric keeps its CSV
// name, direction, value and roofline as its rows carry them
// (docs/csv-schema.md), and a new one needs no edit of the generic layers.
#include <gtest/gtest.h>

#include <string>

#include "core/metrics.h"
#include "core/roofline.h"
#include "suite/experiments/decode_metrics.h"
#include "suite/experiments/mlp_metrics.h"
#include "suite/rows.h"

namespace {

using kb::Metric;

kb::Ceilings h100() {
  kb::Ceilings c;
  c.read_gbps = 3000;
  c.copy_gbps = 2800;
  c.bf16_tflops = 800;
  c.launch_us = 5;
  c.graph_node_us = 1;
  c.datasheet.bf16_tflops = 1000;  // what flops_utilization divides by
  return c;
}

// 2 GB read and 0.4 TFLOP in one run(), with decode's counts: memory-bound
// at 2 GB / 3000 GB/s + the 5 us launch.
kb::Work work() {
  kb::Work w;
  w.bytes = 2e9;
  w.flops = 4e11;
  w.counts = {{"tokens", 200}, {"kv_bytes", 1e9}};
  return w;
}

struct Pinned {
  const Metric& metric;
  std::string name;
  double value;                  // at t = 10 ms, a setup of 3.5 s, a companion ratio of 0.81
  std::optional<double> at_min;  // the value at t_min (the roofline), none where it has none
};

// The names, values and rooflines of each existing experiment's metrics, as
// the formulas before kb::Metric was open computed them (docs/metrics.md).
TEST(Metrics, ExistingExperimentsKeepTheirNamesValuesAndRooflines) {
  const kb::Ceilings c = h100();
  const kb::Work w = work();
  const double t = 0.01;
  const double t_min = 2e9 / 3000e9 + 5e-6;
  const double t_min_kv = 3e9 / 3000e9 + 5e-6;  // the KV cache read too
  namespace dm = kb::decode_metrics;
  const Pinned pins[] = {
      {Metric::memory_bandwidth, "memory_bandwidth(GB/s)", 200, 2e9 / t_min / 1e9},
      {Metric::flops_utilization, "flops_utilization", 0.04, 4e11 / t_min / 1e15},
      {Metric::tflops, "tflops", 40, 4e11 / t_min / 1e12},
      {Metric::latency_us, "latency(us)", 1e4, t_min * 1e6},
      {Metric::compilation_time, "compilation_time(s)", 3.5, std::nullopt},
      {dm::kTokenPerSec, "token_per_sec", 2e4, 200 / t_min},
      {dm::kLatencyPerToken, "latency(us)", 50, t_min * 1e6 / 200},
      {dm::kMemoryBandwidthKv, "memory_bandwidth_kv(GB/s)", 300, 3e9 / t_min_kv / 1e9},
      {kb::mlp_metrics::kGemmShare, "gemm_share", 0.81, std::nullopt},
  };
  for (const Pinned& p : pins) {
    EXPECT_EQ(p.metric.name, p.name);
    auto v = kb::metric_value(p.metric, {w, t, c, 3.5, 0.81});
    ASSERT_TRUE(v) << p.name;
    EXPECT_DOUBLE_EQ(*v, p.value) << p.name;
    auto roof = kb::roofline_value(p.metric, w, c);
    EXPECT_EQ(roof.has_value(), p.at_min.has_value()) << p.name;
    if (roof && p.at_min) EXPECT_NEAR(*roof / *p.at_min, 1.0, 1e-12) << p.name;
  }
  // Only the setup time is not of the timed run() (no injection mark).
  EXPECT_FALSE(Metric::compilation_time.timed);
  EXPECT_TRUE(kb::mlp_metrics::kGemmShare.timed);
  // Undefined, each saying why: no datasheet peak of the dtype, no companion.
  kb::Work f8 = w;
  f8.flop_dtype = kb::DType::fp8_e4m3;
  EXPECT_FALSE(kb::metric_value(Metric::flops_utilization, {f8, t, c}));
  EXPECT_NE(std::string(Metric::flops_utilization.undefined).find("no peak"), std::string::npos);
  EXPECT_FALSE(kb::metric_value(kb::mlp_metrics::kGemmShare, {w, t, c}));
  EXPECT_NE(std::string(kb::mlp_metrics::kGemmShare.undefined).find("no companion"),
            std::string::npos);
  EXPECT_FALSE(kb::metric_value(Metric::memory_bandwidth, {w, 0, c}));
}

// kgate reads each row's direction from its metric's name alone: every name
// rows have carried keeps its direction; a name with no unit it knows is
// refused.
TEST(Metrics, DirectionFromTheName) {
  for (const char* higher :
       {"memory_bandwidth(GB/s)", "memory_bandwidth_kv(GB/s)", "flops_utilization", "tflops",
        "token_per_sec", "bus_bandwidth(GB/s)", "read_bandwidth(GB/s)", "copy_bandwidth(GB/s)",
        "gemm_share", "algorithm_bandwidth(GB/s)", "link_bandwidth(GB/s)", "tops"})
    EXPECT_EQ(kb::metric_direction(higher), kb::Direction::higher_is_better) << higher;
  for (const char* lower :
       {"compilation_time(s)", "latency(us)", "launch(us)", "graph_node(us)", "mem_latency(us)"})
    EXPECT_EQ(kb::metric_direction(lower), kb::Direction::lower_is_better) << lower;
  EXPECT_EQ(kb::metric_direction("rows_per_second(1/s)"), kb::Direction::higher_is_better);
  EXPECT_EQ(kb::metric_direction("step(ms)"), kb::Direction::lower_is_better);
  for (const char* unknown : {"furlongs_per_fortnight", "speed", "x()", "(s)", "", "a(s"})
    EXPECT_FALSE(kb::metric_direction(unknown)) << unknown;
}

std::optional<double> rows_per_second(const kb::MetricInput& in) {
  return in.work.counts.at("rows") / in.t_s;
}

// A counter of an experiment's own, declared where the experiment is: its
// rows get its name, value, roofline and fraction from the generic layers.
TEST(Metrics, AnExperimentsOwnCounterNeedsNoGenericEdit) {
  const Metric rows_rate("rows_per_second(1/s)", &rows_per_second);
  kb::RowSource src;
  src.name = "toy_norm";
  src.metrics = {Metric::memory_bandwidth, rows_rate};
  kb::Work w;
  w.bytes = 3e9;
  w.counts["rows"] = 4096;
  kb::Measurement m;
  m.summary = kb::summarize(std::vector<double>(10, 2e-3));
  m.value_s = 2e-3;
  kb::Point p;
  p.shape.set("D", 1);
  auto rows = kb::measured_rows(src, p, "", w, m, h100(), {}, {}, nullptr);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].metric, "rows_per_second(1/s)");
  EXPECT_DOUBLE_EQ(*rows[1].actual, 4096 / 2e-3);
  EXPECT_NEAR(*rows[1].roofline, 4096 / (1e-3 + 5e-6), 1e-6);
  EXPECT_NEAR(*rows[1].roofline_fraction, *rows[0].roofline_fraction, 1e-12);
}

TEST(Metrics, RooflineFractionIsOneAtTheLimitForRatesAndTimes) {
  const kb::Ceilings c = h100();
  const kb::Work w = work();
  auto roof = kb::roofline_value(Metric::memory_bandwidth, w, c);
  EXPECT_NEAR(*kb::roofline_fraction("memory_bandwidth(GB/s)", *roof * 0.9, *roof), 0.9, 1e-12);
  // Times: a faster (smaller) actual is a larger fraction.
  auto lat = kb::roofline_value(Metric::latency_us, w, c);
  EXPECT_NEAR(*kb::roofline_fraction("latency(us)", *lat / 0.9, *lat), 0.9, 1e-12);
  EXPECT_FALSE(kb::roofline_fraction("tflops", 0, 1));
}

}  // namespace
