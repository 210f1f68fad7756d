// Point generation of kb::Experiment (its header includes CUDA's, so these
// live in the GPU binary; they need no GPU and run on CI too). Row building
// itself is CUDA-free: tests/cpu/test_rows.cpp.
#include <gtest/gtest.h>

#include "suite/experiment.h"

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

TEST(ExperimentPoints, PointsAreTheSeedProductThenExtras) {
  auto pts = two_shape_experiment().points();
  ASSERT_EQ(pts.size(), 6u);  // (2 seed + 1 extra) x 2 dtypes
  EXPECT_TRUE(pts[0].in_seed_mean);
  EXPECT_EQ(pts[0].shape.str(), "D=1024");
  EXPECT_FALSE(pts[2].in_seed_mean);
  EXPECT_EQ(pts[3].dtype, kb::DType::i8);
}

// A variant that exists at some shapes only: applies() drops the other
// points (no skipped rows), and each variant's seed mean covers exactly the
// seed points it applies to (mlp_layer_norm_gelu: gemv at tokens=1 only).
TEST(ExperimentPoints, AppliesDropsPointsAndTheMeanFollows) {
  auto e =
      kb::Experiment("paths")
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
  const kb::RowSource src = e.source();
  EXPECT_EQ(src.name, "paths");
  EXPECT_TRUE(src.seed_mean);
  EXPECT_FALSE(src.is_model);
  ASSERT_EQ(src.metrics.size(), 1u);
  // Without applies(), every variant runs at every shape.
  auto all = kb::Experiment("all")
                 .axis("D", {1})
                 .variants({"a", "b"})
                 .work([](const kb::Point&) { return kb::Work{}; })
                 .make([](const kb::Point&) { return std::unique_ptr<kb::Case>(); });
  EXPECT_EQ(all.points().size(), 2u);
}

}  // namespace
