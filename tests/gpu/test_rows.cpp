// Row building without a GPU (it lives in the engine library): the seed's
// mean rows, targets and statuses. Runs on CI too (no KB_REQUIRE_GPU).
#include <gtest/gtest.h>

#include "suite/rows.h"

namespace {

kb::Experiment two_shape_experiment() {
  return kb::Experiment("toy")
      .axis("D", {1024, 4096})
      .point(kb::Shape{{"D", 999}})  // extra: not in the mean
      .dtypes({kb::DType::bf16, kb::DType::i8})
      .metrics({kb::Metric::memory_bandwidth, kb::Metric::latency_us})
      .seed_mean()
      .work([](const kb::Point&) { return kb::Work{}; })
      .make([](const kb::Point&) { return std::unique_ptr<kb::Case>(); });
}

std::vector<kb::Record> measured(const kb::Experiment& e, const kb::Point& p, double bw,
                                 double roof) {
  kb::RunInfo info;
  kb::DeviceInfo dev;
  dev.name = "Toy GPU";
  std::vector<kb::Record> rows;
  for (kb::Metric m : e.metric_list()) {
    kb::Record r = kb::make_record(e, p, m, info, dev);
    r.actual = m == kb::Metric::memory_bandwidth ? bw : 1e6 / bw;
    r.roofline = m == kb::Metric::memory_bandwidth ? roof : 1e6 / roof;
    rows.push_back(r);
  }
  return rows;
}

TEST(Rows, PointsAreTheSeedProductThenExtras) {
  auto pts = two_shape_experiment().points();
  ASSERT_EQ(pts.size(), 6u);  // (2 seed + 1 extra) x 2 dtypes
  EXPECT_TRUE(pts[0].in_seed_mean);
  EXPECT_EQ(pts[0].shape.str(), "D=1024");
  EXPECT_FALSE(pts[2].in_seed_mean);
  EXPECT_EQ(pts[3].dtype, kb::DType::i8);
}

TEST(Rows, SeedMeanIsTheArithmeticMeanOfSeedShapesOnly) {
  auto e = two_shape_experiment();
  auto pts = e.points();
  std::vector<std::vector<kb::Record>> rows = {
      measured(e, pts[0], 100, 200), measured(e, pts[1], 300, 400), measured(e, pts[2], 5000, 6000),
      measured(e, pts[3], 10, 20),   measured(e, pts[4], 30, 40),   measured(e, pts[5], 1, 2)};
  auto means = kb::seed_mean_rows(e, pts, rows, nullptr);
  ASSERT_EQ(means.size(), 4u);  // 2 dtypes x 2 metrics
  const auto& bf16_bw = means[0];
  EXPECT_EQ(bf16_bw.shape, "mean");
  EXPECT_EQ(bf16_bw.dtype, "bfloat16");
  EXPECT_EQ(bf16_bw.metric, "memory_bandwidth(GB/s)");
  EXPECT_DOUBLE_EQ(*bf16_bw.actual, 200);     // (100 + 300) / 2, not the extra 5000
  EXPECT_DOUBLE_EQ(*bf16_bw.roofline, 300);   // (200 + 400) / 2
  EXPECT_DOUBLE_EQ(*bf16_bw.roofline_fraction, 200.0 / 300);
  // Unknown GPU (no target file): the fallback target is 0.7 x roofline.
  EXPECT_DOUBLE_EQ(*bf16_bw.target, 0.7 * 300);
  EXPECT_EQ(bf16_bw.status, "ok");  // 200 misses 210 by 4.8%: within the default 5% tolerance
}

TEST(Rows, MeanFailsWhenASeedShapeFailed) {
  auto e = two_shape_experiment();
  auto pts = e.points();
  kb::RunInfo info;
  kb::DeviceInfo dev;
  std::vector<std::vector<kb::Record>> rows = {
      measured(e, pts[0], 100, 200),
      kb::status_rows(e, pts[1], kb::status::failed, "boom", info, dev, nullptr),
      measured(e, pts[2], 1, 2), measured(e, pts[3], 10, 20), measured(e, pts[4], 30, 40),
      measured(e, pts[5], 1, 2)};
  auto means = kb::seed_mean_rows(e, pts, rows, nullptr);
  EXPECT_EQ(means[0].status, "failed");
  EXPECT_FALSE(means[0].actual.has_value());
  EXPECT_NE(means[0].message.find("1 of 2 seed shapes"), std::string::npos) << means[0].message;
  EXPECT_EQ(means[2].status, "ok");  // the int8 mean is unaffected
}

TEST(Rows, TargetsFromFileAndStatus) {
  auto file = kb::parse_target_file(R"J({"gpu": "Toy GPU", "peaks": {"hbm_gbps": 1},
    "targets": [{"name": "toy", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16", "shape": "*",
                 "roofline_fraction": 0.85},
                {"name": "toy", "metric": "latency(us)", "dtype": "bfloat16", "shape": "D=1024",
                 "target": 5000, "tolerance": 0.1}]})J",
                                    "toy.json");
  auto e = two_shape_experiment();
  auto rows = measured(e, e.points()[0], 100, 200);  // 0.5 of the roofline
  kb::apply_target(rows[0], kb::Metric::memory_bandwidth, &file);
  EXPECT_DOUBLE_EQ(*rows[0].target, 170);
  EXPECT_EQ(rows[0].status, "below_target");
  kb::apply_target(rows[1], kb::Metric::latency_us, &file);  // 10000 us vs 5000 target, lower is better
  EXPECT_DOUBLE_EQ(*rows[1].target, 5000);
  EXPECT_EQ(rows[1].status, "below_target");
  auto good = measured(e, e.points()[0], 190, 200);
  kb::apply_target(good[0], kb::Metric::memory_bandwidth, &file);
  EXPECT_EQ(good[0].status, "ok");
  auto failed = kb::status_rows(e, e.points()[0], kb::status::failed, "x", {}, {}, &file);
  EXPECT_EQ(failed[0].status, "failed");  // a failed row never becomes below_target
}

// A variant that exists at some shapes only: applies() drops the other
// points (no skipped rows), and each variant's seed mean covers exactly the
// seed points it applies to (mlp_layer_norm_gelu: gemv at tokens=1 only).
TEST(Rows, AppliesDropsPointsAndTheMeanFollows) {
  auto e = kb::Experiment("paths")
               .axis("tokens", {1})
               .axis("D", {1024, 4096})
               .point(kb::Shape{{"tokens", 16}, {"D", 1024}})
               .variants({"gemv", "cublaslt"})
               .metrics({kb::Metric::memory_bandwidth})
               .seed_mean()
               .applies([](const kb::Point& p) { return (p.variant == "gemv") == (p["tokens"] == 1); })
               .work([](const kb::Point&) { return kb::Work{}; })
               .make([](const kb::Point&) { return std::unique_ptr<kb::Case>(); });
  auto pts = e.points();
  ASSERT_EQ(pts.size(), 3u);  // gemv at the two seed shapes, cublaslt at the extra one
  EXPECT_EQ(pts[0].variant, "gemv");
  EXPECT_EQ(pts[0].shape.str(), "tokens=1;D=1024");
  EXPECT_TRUE(pts[1].in_seed_mean);
  EXPECT_EQ(pts[2].variant, "cublaslt");
  EXPECT_EQ(pts[2].shape.str(), "tokens=16;D=1024");
  EXPECT_FALSE(pts[2].in_seed_mean);
  std::vector<std::vector<kb::Record>> rows = {measured(e, pts[0], 100, 200),
                                               measured(e, pts[1], 300, 400),
                                               measured(e, pts[2], 7, 8)};
  auto means = kb::seed_mean_rows(e, pts, rows, nullptr);
  ASSERT_EQ(means.size(), 1u);  // no mean for cublaslt: none of its points is a seed point
  EXPECT_EQ(means[0].variant, "gemv");
  EXPECT_DOUBLE_EQ(*means[0].actual, 200);
  // Without applies(), every variant runs at every shape.
  auto all = kb::Experiment("all")
                 .axis("D", {1})
                 .variants({"a", "b"})
                 .work([](const kb::Point&) { return kb::Work{}; })
                 .make([](const kb::Point&) { return std::unique_ptr<kb::Case>(); });
  EXPECT_EQ(all.points().size(), 2u);
}

}  // namespace
