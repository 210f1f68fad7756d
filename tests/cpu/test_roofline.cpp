// Roofline math (docs/metrics.md); the metrics' formulas: test_metrics.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "core/roofline.h"

namespace {

kb::Ceilings h100() {
  kb::Ceilings c;
  c.read_gbps = 3000;
  c.copy_gbps = 2800;
  c.bf16_tflops = 800;
  c.int8_tops = 1600;
  c.launch_us = 5;
  c.graph_node_us = 1;
  c.datasheet.bf16_tflops = 1000;  // what flops_utilization divides by
  c.datasheet.int8_tops = 2000;
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

// The seed's flops_utilization is `us_per_iter * flops / 1e9 / 312`: it
// multiplies by time, so a slower kernel scores higher. Ours divides.
TEST(Metrics, SeedFlopsUtilizationIsInvertedOursIsNot) {
  const double flops = 2.0 * 4096 * 14336 * 2;  // the seed MLP at D=4096, one token
  auto seed_formula = [&](double us_per_iter) { return us_per_iter * flops / 1e9 / 312; };
  const double fast_us = 100, slow_us = 200;
  EXPECT_GT(seed_formula(slow_us), seed_formula(fast_us));  // the defect

  kb::Ceilings a100;
  a100.datasheet.bf16_tflops = 312;
  kb::Work w;
  w.flops = flops;
  auto ours = [&](double us) {
    return *kb::metric_value(kb::Metric::flops_utilization, {w, us * 1e-6, a100});
  };
  EXPECT_GT(ours(fast_us), ours(slow_us));  // the fix
  EXPECT_NEAR(ours(fast_us), flops / 100e-6 / 312e12, 1e-15);
}

}  // namespace

// ---- Version 2: the speed-of-light ladder --------------------------------

namespace {

// A toy ladder: 4 us floor, then 1000 GB/s reads; copies of small outputs
// as fast as reads (write-back after the window), of large ones at 800 GB/s.
kb::Ceilings with_ladder() {
  kb::Ceilings c = h100();
  c.ladder.read.rungs = {{4096, 4e-6}, {1e6, 5e-6}, {1e9, 1.004e-3}};
  c.ladder.copy.rungs = {{4096, 4e-6}, {2e6, 6e-6}, {2e9, 2.504e-3}};
  c.ladder.launch_extra_us = 2;
  c.ladder.graph_node_extra_us = 0.5;
  return c;
}

}  // namespace

// Further launches by the link's bytes: the table made non-increasing, the
// first entry at or above the link, the last beyond; the scalar without one.
TEST(Ladder, FurtherLaunchCostByTheLinksBytes) {
  kb::SpeedOfLight l;
  l.launch_extra_us = 2.9;
  l.graph_node_extra_us = 1.9;
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 1e6), 2.9);  // no table
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, true, 1e6), 1.9);
  // H100-like: +3.7 at 1 MB links, 3.4 at 2 MB, 2.9 at 8 MB, 3.0 at 64 MB.
  l.launch_extra_by_link = {{1 << 20, 3.7}, {2 << 20, 3.4}, {8 << 20, 2.9}, {64 << 20, 3.0}};
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 64 << 10), 3.7);         // below the first
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 1 << 20), 3.7);          // measured
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 1.5 * (1 << 20)), 3.4);  // the next size up
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 2 << 20), 3.4);
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 8 << 20), 2.9);
  // 64 MB measured 3.0, more than 8 MB's 2.9: the envelope keeps 2.9 (a bound).
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 64 << 20), 2.9);
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, false, 1e12), 2.9);    // beyond the last
  EXPECT_DOUBLE_EQ(kb::further_launch_us(l, true, 1 << 20), 1.9);  // no graph table
  // In the roofline: a chain of 8 launches of 2 MB pays 7 x 3.4 us.
  kb::Ceilings c = with_ladder();
  c.ladder.launch_extra_by_link = l.launch_extra_by_link;
  kb::Work w;
  w.bytes = 16 << 20;
  w.launches = 8;
  const double base = c.ladder.read.seconds(16 << 20);
  EXPECT_NEAR(kb::roofline(w, c).t_min_s, base + 7 * 3.4e-6, 1e-12);
  c.ladder.launch_extra_by_link.clear();
  EXPECT_NEAR(kb::roofline(w, c).t_min_s, base + 7 * 2e-6, 1e-12);  // the toy's scalar
}

// The further-launch cost from a chain's time: (chain - one launch) / 7 for
// 8 links, never below 0; a row of the same chain then gets t_min = the
// chain's time at every measured link size (the bound is the probe's chain
// median, which is why the probe times the rows' own chain points), and a
// bound at sizes whose cost the envelope lowers.
TEST(Ladder, FurtherLaunchFromAChainGivesTheChainBackAsTMin) {
  EXPECT_DOUBLE_EQ(kb::further_launch_seconds(38.2e-6, 24.9e-6, 8), 1.9e-6);
  EXPECT_DOUBLE_EQ(kb::further_launch_seconds(20e-6, 24.9e-6, 8), 0.0);  // never below 0
  EXPECT_DOUBLE_EQ(kb::further_launch_seconds(3e-6, 1e-6, 2), 2e-6);
  EXPECT_THROW(kb::further_launch_seconds(3e-6, 1e-6, 1), std::invalid_argument);
  EXPECT_THROW(kb::further_launch_seconds(0, 1e-6, 8), std::invalid_argument);
  EXPECT_THROW(kb::further_launch_seconds(3e-6, -1, 8), std::invalid_argument);
  // H100-like: one launch of 8/16/64/512 MB (the committed rungs) and graph
  // chains of 8 nodes as the rows measured them.
  const double mb = 1 << 20;
  const double sizes[] = {8 * mb, 16 * mb, 64 * mb, 512 * mb};
  const double one[] = {6.432e-6, 9.056e-6, 24.992e-6, 173.584e-6};
  const double chain[] = {24.912e-6, 24.92e-6, 36.70e-6, 185.5e-6};
  kb::Ceilings c = h100();
  c.ladder.copy.rungs = {{4096, 4e-6}, {2e9, 2.504e-3}};
  for (int i = 0; i < 4; ++i) {
    c.ladder.read.rungs.push_back({sizes[i], one[i]});
    c.ladder.graph_node_extra_by_link.push_back(
        {sizes[i] / 8, kb::further_launch_seconds(chain[i], one[i], 8) * 1e6});
  }
  ASSERT_EQ(kb::ladder_problem(c.ladder.read), "");
  for (int i = 0; i < 4; ++i) {
    kb::Work w;
    w.bytes = sizes[i];
    w.bound = kb::Bound::read;
    w.launches = 8;
    w.graph = true;
    const double t_min = kb::roofline(w, c).t_min_s;
    if (i < 3) {
      EXPECT_NEAR(t_min, chain[i], 1e-12) << sizes[i] / mb << " MB";
    } else {
      // 512 MB's +1.702 us a node is above 64 MB's +1.673: the envelope
      // keeps 1.673, a bound below the chain.
      EXPECT_NEAR(t_min, one[i] + 7 * (chain[2] - one[2]) / 7, 1e-12);
      EXPECT_LT(t_min, chain[i]);
    }
  }
}

TEST(Ladder, InterpolatesBetweenRungsAndExtendsTheEndSegments) {
  kb::Ladder l;
  l.rungs = {{1000, 2e-6}, {3000, 4e-6}, {7000, 12e-6}};
  EXPECT_DOUBLE_EQ(l.seconds(1000), 2e-6);
  EXPECT_DOUBLE_EQ(l.seconds(2000), 3e-6);    // halfway along the first segment
  EXPECT_DOUBLE_EQ(l.seconds(3000), 4e-6);    // a rung
  EXPECT_DOUBLE_EQ(l.seconds(5000), 8e-6);    // second segment
  EXPECT_DOUBLE_EQ(l.seconds(11000), 20e-6);  // beyond: the last segment's slope
  EXPECT_DOUBLE_EQ(l.seconds(0), 1e-6);       // below: the first segment extended
  kb::Ladder steep;
  steep.rungs = {{1000, 1e-6}, {2000, 10e-6}};
  EXPECT_DOUBLE_EQ(steep.seconds(0), 0.0);  // floored at 0, never negative
  kb::Ladder one;
  one.rungs = {{1000, 1e-6}};
  EXPECT_THROW(one.seconds(10), std::invalid_argument);
}

TEST(Ladder, ProblemsAreNamedAndMonotoneFixesNoise) {
  kb::Ladder l;
  EXPECT_NE(kb::ladder_problem(l).find("at least 2 rungs"), std::string::npos);
  l.rungs = {{4096, 4e-6}, {8192, 5e-6}};
  EXPECT_EQ(kb::ladder_problem(l), "");
  l.rungs = {{4096, 4e-6}, {4096, 5e-6}};
  EXPECT_NE(kb::ladder_problem(l).find("rung 1: bytes not above"), std::string::npos);
  l.rungs = {{4096, 4e-6}, {8192, 3e-6}};
  EXPECT_NE(kb::ladder_problem(l).find("rung 1: faster than the previous"), std::string::npos);
  l.rungs = {{0, 4e-6}, {8192, 5e-6}};
  EXPECT_NE(kb::ladder_problem(l).find("rung 0: bytes"), std::string::npos);
  l.rungs = {{4096, NAN}, {8192, 5e-6}};
  EXPECT_NE(kb::ladder_problem(l).find("rung 0: time"), std::string::npos);
  // A dip from noise: the smaller count takes the larger count's faster time.
  l.rungs = {{4096, 4.1e-6}, {8192, 4.0e-6}, {16384, 4.2e-6}};
  kb::make_monotone(l);
  EXPECT_DOUBLE_EQ(l.rungs[0].second, 4.0e-6);
  EXPECT_DOUBLE_EQ(l.rungs[2].second, 4.2e-6);
  EXPECT_EQ(kb::ladder_problem(l), "");
  const auto b = kb::ladder_bytes(double(1 << 20));
  ASSERT_EQ(b.size(), 9u);  // 4 KB .. 1 MB, powers of two
  EXPECT_DOUBLE_EQ(b.front(), 4096);
  EXPECT_DOUBLE_EQ(b.back(), double(1 << 20));
  const auto c = kb::ladder_bytes(double(4 << 20));
  ASSERT_EQ(c.size(), 13u);  // ..., 1 MB, 1.5 MB, 2 MB, 3 MB, 4 MB
  EXPECT_DOUBLE_EQ(c[9], 1.5 * (1 << 20));
  EXPECT_DOUBLE_EQ(c[11], 3.0 * (1 << 20));
  for (size_t i = 1; i < c.size(); ++i) EXPECT_GT(c[i], c[i - 1]);
}

TEST(Ladder, MemoryTimeOfReadsAndWrites) {
  const auto c = with_ladder();
  const auto& l = c.ladder;
  // Reads only: the read ladder.
  EXPECT_DOUBLE_EQ(kb::ladder_memory_seconds(l, 1e6, 0), 5e-6);
  // Reads = writes: the copy ladder at their sum.
  EXPECT_DOUBLE_EQ(kb::ladder_memory_seconds(l, 1e6, 1e6), 6e-6);
  // More reads than writes: the copy of the writes, plus what the further
  // reads add on the read ladder (1e6 -> 1e9 read: +999 us).
  EXPECT_NEAR(kb::ladder_memory_seconds(l, 1e9, 1e6), 6e-6 + 999e-6, 1e-15);
  // More writes than reads: the copy ladder at their sum.
  EXPECT_DOUBLE_EQ(kb::ladder_memory_seconds(l, 0.5e6, 1.5e6), 6e-6);
}

TEST(Ladder, RooflineIsVersionTwoAndBounds) {
  const auto c = with_ladder();
  kb::Work w;
  w.bytes = 1e9;  // reads
  auto r = kb::roofline(w, c);
  EXPECT_EQ(r.version, 2);
  EXPECT_EQ(r.limiter, kb::Limiter::memory);
  EXPECT_DOUBLE_EQ(r.t_min_s, 1.004e-3);  // the ladder itself: no launch floor added on top
  // Bound::copy without write_bytes: half of the bytes are writes.
  w.bound = kb::Bound::copy;
  w.bytes = 2e6;
  EXPECT_DOUBLE_EQ(kb::roofline(w, c).t_min_s, 6e-6);
  // Declared writes win over the bound.
  w.write_bytes = 0;
  EXPECT_DOUBLE_EQ(kb::roofline(w, c).t_min_s, c.ladder.read.seconds(2e6));
  // Further launches and graph nodes add their measured extra cost.
  kb::Work chain;
  chain.bytes = 1e9;
  chain.launches = 8;
  EXPECT_NEAR(kb::roofline(chain, c).t_min_s, 1.004e-3 + 7 * 2e-6, 1e-15);
  chain.graph = true;
  EXPECT_NEAR(kb::roofline(chain, c).t_min_s, 1.004e-3 + 7 * 0.5e-6, 1e-15);
  // Small work: the floor dominates: launch-bound.
  kb::Work tiny;
  tiny.bytes = 8192;
  EXPECT_EQ(kb::roofline(tiny, c).limiter, kb::Limiter::launch);
  // Compute: the flops at the roofline's (measured) peak, no launch floor.
  kb::Work gemm;
  gemm.bytes = 1e6;
  gemm.flops = 8e12;  // 10 ms at 800
  auto g = kb::roofline(gemm, c);
  EXPECT_EQ(g.limiter, kb::Limiter::compute);
  EXPECT_DOUBLE_EQ(g.t_min_s, 10e-3);
  // The fraction of a kernel as fast as the ladder's own kernel is 1.0.
  auto roof = kb::roofline_value(kb::Metric::memory_bandwidth, w, c);
  auto ideal = kb::metric_value(kb::Metric::memory_bandwidth, {w, c.ladder.read.seconds(2e6), c});
  EXPECT_NEAR(*kb::roofline_fraction(kb::metric_name::memory_bandwidth, *ideal, *roof), 1.0, 1e-12);
}

TEST(Ladder, WithoutALadderTheModelOfVersionOne) {
  kb::Ceilings c = with_ladder();
  c.ladder.copy.rungs.clear();  // half a ladder is no ladder
  kb::Work w;
  w.bytes = 3e9;
  auto r = kb::roofline(w, c);
  EXPECT_EQ(r.version, 1);
  EXPECT_NEAR(r.t_min_s, 1e-3 + 5e-6, 1e-12);  // today's model
}

TEST(Probe, AnUnresolvedRoundTripIsSaidNotWrittenAsZero) {
  EXPECT_EQ(kb::unresolved_latency(3.456, 3.104), "");
  const std::string same = kb::unresolved_latency(3.104, 3.104);
  EXPECT_NE(same.find("not resolved this run"), std::string::npos) << same;
  EXPECT_NE(same.find("3.104 us"), std::string::npos) << same;
  EXPECT_NE(kb::unresolved_latency(3.072, 3.104), "");
}
