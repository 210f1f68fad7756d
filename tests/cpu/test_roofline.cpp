// Roofline math and every metric formula (docs/metrics.md).
#include <gtest/gtest.h>

#include "suite/roofline.h"

namespace {

kb::Ceilings h100() {
  kb::Ceilings c;
  c.read_gbps = 3000;
  c.copy_gbps = 2800;
  c.bf16_tflops = 800;
  c.int8_tops = 1600;
  c.launch_us = 5;
  c.graph_node_us = 1;
  return c;
}

TEST(Roofline, MemoryBoundIncludesLaunchFloor) {
  kb::Work w;
  w.bytes = 3e9;  // 1 ms at 3000 GB/s
  w.bound = kb::Bound::read;
  auto r = kb::roofline(w, h100());
  EXPECT_NEAR(r.t_min_s, 1e-3 + 5e-6, 1e-12);
  EXPECT_EQ(r.limiter, kb::Limiter::memory);
  w.bound = kb::Bound::copy;
  EXPECT_NEAR(kb::roofline(w, h100()).t_min_s, 3e9 / 2800e9 + 5e-6, 1e-12);
}

TEST(Roofline, ComputeBoundUsesDtypePeak) {
  kb::Work w;
  w.bytes = 1e6;
  w.flops = 8e12;  // 10 ms at 800 TFLOP/s
  w.flop_dtype = kb::DType::bf16;
  auto r = kb::roofline(w, h100());
  EXPECT_NEAR(r.t_min_s, 10e-3 + 5e-6, 1e-12);
  EXPECT_EQ(r.limiter, kb::Limiter::compute);
  w.flop_dtype = kb::DType::i8;
  EXPECT_NEAR(kb::roofline(w, h100()).t_min_s, 5e-3 + 5e-6, 1e-12);
}

TEST(Roofline, LaunchBoundAndGraphNodes) {
  kb::Work w;
  w.bytes = 3e3;  // 1 ns of traffic
  w.launches = 10;
  auto r = kb::roofline(w, h100());
  EXPECT_EQ(r.limiter, kb::Limiter::launch);
  EXPECT_NEAR(r.t_min_s, 1e-9 + 50e-6, 1e-12);
  w.graph = true;
  EXPECT_NEAR(kb::roofline(w, h100()).t_min_s, 1e-9 + 10e-6, 1e-12);
}

TEST(Roofline, EachLaunchThatMovesBytesPaysOneHbmRoundTrip) {
  kb::Ceilings c = h100();
  c.mem_latency_us = 0.75;
  kb::Work w;
  w.bytes = 3e6;  // 1 us at 3000 GB/s
  w.launches = 2;
  EXPECT_NEAR(kb::roofline(w, c).t_min_s, 1e-6 + 2 * (5e-6 + 0.75e-6), 1e-12);
  w.graph = true;
  EXPECT_NEAR(kb::roofline(w, c).t_min_s, 1e-6 + 2 * (1e-6 + 0.75e-6), 1e-12);
  // Pure compute moves no bytes: no round trip.
  kb::Work f;
  f.flops = 8e9;
  EXPECT_NEAR(kb::roofline(f, c).t_min_s, 10e-6 + 5e-6, 1e-12);
}

TEST(Roofline, MissingCeilingIsAnError) {
  kb::Work w;
  w.flops = 1e9;
  w.flop_dtype = kb::DType::fp8_e4m3;  // no fp8 peak in h100()
  EXPECT_THROW(kb::roofline(w, h100()), std::invalid_argument);
  kb::Ceilings none;
  kb::Work b;
  b.bytes = 1;
  EXPECT_THROW(kb::roofline(b, none), std::invalid_argument);
}

TEST(Metrics, Formulas) {
  const auto c = h100();
  kb::Work w;
  w.bytes = 2e9;
  w.flops = 4e12;
  w.steps = 200;
  w.kv_bytes = 1e9;
  const double t = 0.01;  // 10 ms
  EXPECT_DOUBLE_EQ(*kb::metric_value(kb::Metric::memory_bandwidth, w, t, 0, c), 200.0);
  EXPECT_DOUBLE_EQ(*kb::metric_value(kb::Metric::memory_bandwidth_kv, w, t, 0, c), 300.0);
  EXPECT_DOUBLE_EQ(*kb::metric_value(kb::Metric::tflops, w, t, 0, c), 400.0);
  EXPECT_DOUBLE_EQ(*kb::metric_value(kb::Metric::flops_utilization, w, t, 0, c), 0.5);
  EXPECT_DOUBLE_EQ(*kb::metric_value(kb::Metric::token_per_sec, w, t, 0, c), 20000.0);
  EXPECT_DOUBLE_EQ(*kb::metric_value(kb::Metric::latency_us, w, t, 0, c), 50.0);
  EXPECT_DOUBLE_EQ(*kb::metric_value(kb::Metric::compilation_time, w, t, 3.5, c), 3.5);
  EXPECT_FALSE(kb::metric_value(kb::Metric::memory_bandwidth, w, 0, 0, c).has_value());
  kb::Work f8 = w;
  f8.flop_dtype = kb::DType::fp8_e4m3;
  EXPECT_FALSE(kb::metric_value(kb::Metric::flops_utilization, f8, t, 0, c).has_value());
}

TEST(Metrics, RooflineValueAndFraction) {
  const auto c = h100();
  kb::Work w;
  w.bytes = 3e9;
  auto roof = kb::roofline_value(kb::Metric::memory_bandwidth, w, c);
  ASSERT_TRUE(roof);
  EXPECT_NEAR(*roof, 3e9 / (1e-3 + 5e-6) / 1e9, 1e-9);
  EXPECT_NEAR(*kb::roofline_fraction(kb::Metric::memory_bandwidth, *roof * 0.9, *roof), 0.9, 1e-12);
  // Times: a faster (smaller) actual is a larger fraction; 1.0 is the limit for both.
  auto lat = kb::roofline_value(kb::Metric::latency_us, w, c);
  ASSERT_TRUE(lat);
  EXPECT_NEAR(*kb::roofline_fraction(kb::Metric::latency_us, *lat / 0.9, *lat), 0.9, 1e-12);
  EXPECT_FALSE(kb::roofline_value(kb::Metric::compilation_time, w, c).has_value());
  EXPECT_FALSE(kb::roofline_fraction(kb::Metric::tflops, 0, 1).has_value());
}

// The seed's flops_utilization is `us_per_iter * flops / 1e9 / 312`: it
// multiplies by time, so a slower kernel scores higher. Ours divides.
TEST(Metrics, SeedFlopsUtilizationIsInvertedOursIsNot) {
  const double flops = 2.0 * 4096 * 14336 * 2;  // the seed MLP at D=4096, one token
  auto seed_formula = [&](double us_per_iter) { return us_per_iter * flops / 1e9 / 312; };
  const double fast_us = 100, slow_us = 200;
  EXPECT_GT(seed_formula(slow_us), seed_formula(fast_us));  // the defect

  kb::Ceilings a100;
  a100.bf16_tflops = 312;
  kb::Work w;
  w.flops = flops;
  auto ours = [&](double us) {
    return *kb::metric_value(kb::Metric::flops_utilization, w, us * 1e-6, 0, a100);
  };
  EXPECT_GT(ours(fast_us), ours(slow_us));  // the fix
  EXPECT_NEAR(ours(fast_us), flops / 100e-6 / 312e12, 1e-15);
}

}  // namespace
