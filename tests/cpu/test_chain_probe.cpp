// The ladder probe's chains (suite/chain_probe.h): which points it measures,
// how their times become the further-launch tables; and the worker's wire
// format for measuring given points (suite/point_wire.h), both ways.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "suite/chain_probe.h"
#include "suite/point_wire.h"

namespace {

constexpr double MB = 1 << 20;

// A read ladder whose one launch of b bytes takes 3 us + b / 3 TB/s.
kb::SpeedOfLight linear_ladder() {
  kb::SpeedOfLight sol;
  for (double b : {1 * MB, 1024 * MB}) sol.read.rungs.push_back({b, 3e-6 + b / 3e12});
  sol.copy = sol.read;
  return sol;
}

double one_launch(double b) { return 3e-6 + b / 3e12; }

TEST(ChainProbe, PointsAreTheExperimentsChainsStreamsFirstUpToTheLargestRung) {
  const auto all = kb::chain_points(2048 * MB);
  ASSERT_EQ(all.size(), 8u);
  const double sizes[] = {8 * MB, 16 * MB, 64 * MB, 512 * MB};
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].variant, i < 4 ? kb::kStreamChain : kb::kGraphChain) << i;
    EXPECT_EQ(all[i].dtype, kb::DType::i8);
    // The kernel in the shape, as roofline_ideal's points (and rows) have it.
    EXPECT_EQ(all[i].shape.str(), "bytes=" + std::to_string(static_cast<long long>(sizes[i % 4])) +
                                      ";kernel=" + all[i].variant);
  }
  // A GPU whose ladder stops at 64 MB: the chains up to 64 MB.
  const auto small = kb::chain_points(64 * MB);
  ASSERT_EQ(small.size(), 6u);
  EXPECT_EQ(small[2]["bytes"], 64 * (1 << 20));
  EXPECT_EQ(small[3].variant, kb::kGraphChain);
  EXPECT_TRUE(kb::chain_points(4 * MB).empty());
  EXPECT_EQ(kb::chain_bytes(16 * MB), (std::vector<double>{8 * MB, 16 * MB}));
}

TEST(ChainProbe, FurtherLaunchesPerLinkAndTheSmallest) {
  kb::SpeedOfLight sol = linear_ladder();
  const auto points = kb::chain_points(2048 * MB);
  // Each further launch: 3.6, 3.5, 2.9, 2.9 us (stream), 1.4, 1.3, 1.3,
  // 1.2 us (graph node), over 7 further launches of the one launch.
  const double stream_us[] = {3.6, 3.5, 2.9, 2.9}, graph_us[] = {1.4, 1.3, 1.3, 1.2};
  std::vector<double> t;
  for (size_t i = 0; i < points.size(); ++i) {
    const double b = static_cast<double>(points[i]["bytes"]);
    t.push_back(one_launch(b) + 7 * (i < 4 ? stream_us[i] : graph_us[i - 4]) * 1e-6);
  }
  const auto report = kb::set_further_launches(sol, points, t);
  ASSERT_EQ(sol.launch_extra_by_link.size(), 4u);
  ASSERT_EQ(sol.graph_node_extra_by_link.size(), 4u);
  const double links[] = {1 * MB, 2 * MB, 8 * MB, 64 * MB};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(sol.launch_extra_by_link[i].first, links[i]);
    EXPECT_NEAR(sol.launch_extra_by_link[i].second, stream_us[i], 1e-9);
    EXPECT_DOUBLE_EQ(sol.graph_node_extra_by_link[i].first, links[i]);
    EXPECT_NEAR(sol.graph_node_extra_by_link[i].second, graph_us[i], 1e-9);
  }
  EXPECT_NEAR(sol.launch_extra_us, 2.9, 1e-9);
  EXPECT_NEAR(sol.graph_node_extra_us, 1.2, 1e-9);
  // A row of a measured chain gets t_min = that chain's time.
  EXPECT_NEAR(one_launch(16 * MB) + 7 * kb::further_launch_us(sol, true, 2 * MB) * 1e-6, t[5],
              1e-12);
  // Per size the stream then the graph chain.
  ASSERT_EQ(report.size(), 8u);
  EXPECT_EQ(report[0].rfind("stream x8 8 MB: ", 0), 0u) << report[0];
  EXPECT_NE(report[0].find("+3.60 us a launch"), std::string::npos) << report[0];
  EXPECT_EQ(report[3].rfind("graph x8 16 MB: ", 0), 0u) << report[3];
  EXPECT_NE(report[3].find("+1.30 us a node"), std::string::npos) << report[3];
}

kb::Point ideal_point(const std::string& variant, double bytes) {
  kb::Point p;
  p.shape = kb::Shape{{"bytes", static_cast<int64_t>(bytes)}};
  p.dtype = kb::DType::i8;
  p.variant = variant;
  return p;
}

TEST(ChainProbe, WorkersSingleLaunchesFasterThanTheProbesRungsBecomeTheRungs) {
  // Rungs at 64 KB, 1 MB, 16 MB (read and copy alike).
  kb::SpeedOfLight sol;
  for (double b : {0.0625 * MB, 1 * MB, 16 * MB}) sol.read.rungs.push_back({b, one_launch(b)});
  sol.copy = sol.read;
  const std::vector<std::string> reads{"read_sweep", "read_chunks"},
      copies{"copy_wave", "copy_memcpy"};
  const double memcpy_64k = one_launch(0.0625 * MB) - 0.12e-6;  // the rows' workers: faster
  const std::vector<kb::Point> points{
      ideal_point("copy_memcpy", 0.0625 * MB),        // faster than the copy rung: taken
      ideal_point("read_sweep", 1 * MB),              // slower than the read rung: kept
      ideal_point("copy_wave", 5 * MB),               // off-rung: left alone
      ideal_point("read_chunks_x8_stream", 16 * MB),  // a chain: left alone
      ideal_point("someone_elses_kernel", 16 * MB)};  // not a ladder kernel: left alone
  const std::vector<double> t{memcpy_64k, one_launch(1 * MB) + 0.2e-6, 1e-9, 1e-9, 1e-9};
  const auto report = kb::fold_worker_rungs(sol, points, t, reads, copies);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].rfind("copy 65536 B: ", 0), 0u) << report[0];
  EXPECT_NE(report[0].find("copy_memcpy, workers"), std::string::npos) << report[0];
  EXPECT_DOUBLE_EQ(sol.copy.rungs[0].second, memcpy_64k);
  EXPECT_DOUBLE_EQ(sol.read.rungs[0].second, one_launch(0.0625 * MB));
  EXPECT_DOUBLE_EQ(sol.read.rungs[1].second, one_launch(1 * MB));
  EXPECT_DOUBLE_EQ(sol.copy.rungs[2].second, one_launch(16 * MB));
  // A rung taken faster than a smaller one makes the ladder monotone again.
  kb::SpeedOfLight mono = sol;
  kb::fold_worker_rungs(mono, {ideal_point("read_chunks", 1 * MB)},
                        {one_launch(0.0625 * MB) - 1e-7}, reads, copies);
  EXPECT_DOUBLE_EQ(mono.read.rungs[0].second, one_launch(0.0625 * MB) - 1e-7);
  EXPECT_DOUBLE_EQ(mono.read.rungs[1].second, one_launch(0.0625 * MB) - 1e-7);
  EXPECT_THROW(kb::fold_worker_rungs(sol, points, {1e-6}, reads, copies), std::invalid_argument);
}

TEST(ChainProbe, AnyOrderGivesTheSameTables) {
  const auto points = kb::chain_points(64 * MB);
  std::vector<double> t;
  for (const auto& p : points)
    t.push_back(one_launch(static_cast<double>(p["bytes"])) +
                (p.variant == kb::kStreamChain ? 21e-6 : 9e-6));
  kb::SpeedOfLight a = linear_ladder(), b = linear_ladder();
  const auto ra = kb::set_further_launches(a, points, t);
  std::vector<kb::Point> rev(points.rbegin(), points.rend());
  std::vector<double> trev(t.rbegin(), t.rend());
  const auto rb = kb::set_further_launches(b, rev, trev);
  EXPECT_EQ(a.launch_extra_by_link, b.launch_extra_by_link);
  EXPECT_EQ(a.graph_node_extra_by_link, b.graph_node_extra_by_link);
  EXPECT_EQ(ra, rb);
  EXPECT_NEAR(a.launch_extra_us, 3.0, 1e-9);
  EXPECT_NEAR(a.graph_node_extra_us, 9.0 / 7, 1e-9);
}

TEST(ChainProbe, NoChainsNoExtrasAndBadInputsThrow) {
  kb::SpeedOfLight sol = linear_ladder();
  sol.launch_extra_by_link = {{1, 1}};
  EXPECT_TRUE(kb::set_further_launches(sol, {}, {}).empty());
  EXPECT_TRUE(sol.launch_extra_by_link.empty());
  EXPECT_EQ(sol.launch_extra_us, 0);
  auto points = kb::chain_points(16 * MB);
  std::vector<double> t(points.size(), 50e-6);
  EXPECT_THROW(kb::set_further_launches(sol, points, {1e-5}), std::invalid_argument);
  auto lacking = points;
  lacking.pop_back();  // 16 MB's graph chain
  try {
    kb::set_further_launches(sol, lacking, std::vector<double>(lacking.size(), 50e-6));
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("16777216 bytes lack their graph chain"),
              std::string::npos)
        << e.what();
  }
  auto twice = points;
  twice[1] = twice[0];
  EXPECT_THROW(kb::set_further_launches(sol, twice, t), std::invalid_argument);
  auto other = points;
  other[0].variant = "read_chunks";
  EXPECT_THROW(kb::set_further_launches(sol, other, t), std::invalid_argument);
}

// The probe's chains are the mean over its worker processes per point, as
// a row's time is the mean of its processes'.
TEST(ChainProbe, MeanOverProcessesPerPoint) {
  // Three processes, two points: the 16 MB stream chain of three recorded
  // probes (31.31 / 32.74 / 32.83 us) and a graph chain.
  const auto m =
      kb::mean_over_processes({{31.31e-6, 24.98e-6}, {32.74e-6, 24.90e-6}, {32.83e-6, 25.10e-6}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NEAR(m[0], 32.2933333e-6, 1e-12);
  EXPECT_NEAR(m[1], 24.9933333e-6, 1e-12);
  EXPECT_DOUBLE_EQ(kb::mean_over_processes({{1.0}, {3.0}})[0], 2.0);
  EXPECT_DOUBLE_EQ(kb::mean_over_processes({{5.0}})[0], 5.0);
  EXPECT_THROW(kb::mean_over_processes({}), std::invalid_argument);
  EXPECT_THROW(kb::mean_over_processes({{1.0, 2.0}, {1.0}}), std::invalid_argument);
}

// A chain worker measures the experiment's points in order, as a run's
// worker does, then the chains the experiment lacks; each chain's index
// points at its own time.
TEST(ChainProbe, WorkerPointsAreTheRunsThenTheMissingChains) {
  auto pt = [](const char* variant, int64_t bytes) {
    kb::Point p;
    p.shape = kb::Shape{{"bytes", bytes}};
    p.shape.set_label(kb::kIdealShapeLabel, variant);
    p.dtype = kb::DType::i8;
    p.variant = variant;
    return p;
  };
  const std::vector<kb::Point> run = {
      pt("read_sweep", 1 << 20), pt(kb::kStreamChain, int64_t(16) << 20), pt("copy_wave", 1 << 20),
      pt(kb::kGraphChain, int64_t(16) << 20)};
  const std::vector<kb::Point> chains = {
      pt(kb::kStreamChain, int64_t(8) << 20), pt(kb::kStreamChain, int64_t(16) << 20),
      pt(kb::kGraphChain, int64_t(8) << 20), pt(kb::kGraphChain, int64_t(16) << 20)};
  std::vector<size_t> at;
  const auto all = kb::chain_worker_points(run, chains, &at);
  ASSERT_EQ(all.size(), 6u);  // the run's four, then the two 8 MB chains
  EXPECT_EQ(all[0].variant, "read_sweep");
  EXPECT_EQ(all[4].variant, kb::kStreamChain);
  EXPECT_EQ(all[4]["bytes"], int64_t(8) << 20);
  EXPECT_EQ(all[5].variant, kb::kGraphChain);
  EXPECT_EQ(at, (std::vector<size_t>{4, 1, 5, 3}));
  for (size_t i = 0; i < chains.size(); ++i) {
    EXPECT_EQ(all[at[i]].variant, chains[i].variant);
    EXPECT_EQ(all[at[i]]["bytes"], chains[i]["bytes"]);
  }
  // Another dtype is another point.
  kb::Point bf = pt(kb::kStreamChain, int64_t(16) << 20);
  bf.dtype = kb::DType::bf16;
  EXPECT_EQ(kb::chain_worker_points(run, {bf}, &at).size(), 5u);
  EXPECT_EQ(at, (std::vector<size_t>{4}));
}

TEST(PointWire, PointsRoundTripThroughTheArgument) {
  std::vector<kb::Point> points = kb::chain_points(512 * MB);
  kb::Point two;
  two.shape = kb::Shape{{"BS", 4096}, {"D", 1024}};
  two.dtype = kb::DType::bf16;
  two.variant = "a;b=c \"quoted\"";
  points.push_back(two);
  kb::Point ideal;  // a label (Experiment::variant_in_shape): a text value
  ideal.shape = kb::Shape{{"bytes", 65536}};
  ideal.shape.set_label("kernel", "copy_wave");
  ideal.dtype = kb::DType::i8;
  ideal.variant = "copy_wave";
  points.push_back(ideal);
  const auto back = kb::parse_points_arg(kb::points_arg(points));
  ASSERT_EQ(back.size(), points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(back[i].shape.str(), points[i].shape.str());
    EXPECT_EQ(back[i].shape.items(), points[i].shape.items());
    EXPECT_EQ(back[i].shape.labels(), points[i].shape.labels());
    EXPECT_EQ(back[i].dtype, points[i].dtype);
    EXPECT_EQ(back[i].variant, points[i].variant);
  }
  EXPECT_EQ(back.back().shape.str(), "bytes=65536;kernel=copy_wave");
  EXPECT_TRUE(kb::parse_points_arg("[]").empty());
  for (const char* bad :
       {"", "{}", "[{\"shape\": [[\"bytes\", 1]], \"dtype\": \"int9\", \"variant\": \"\"}]",
        "[{\"shape\": [[\"bytes\"]], \"dtype\": \"int8\", \"variant\": \"\"}]",
        "[{\"dtype\": \"int8\", \"variant\": \"\"}]"})
    EXPECT_THROW(kb::parse_points_arg(bad), std::invalid_argument) << bad;
}

// The worker's lines as the parent reads them (dumped and parsed, as they
// travel through the worker's file).
std::vector<nlohmann::json> wire(const std::vector<nlohmann::json>& lines) {
  std::vector<nlohmann::json> out;
  for (const auto& j : lines) out.push_back(nlohmann::json::parse(j.dump()));
  return out;
}

kb::Measurement measured(double median_s) {
  kb::Measurement t;
  t.summary.median = median_s;
  t.summary.n = 40;
  t.summary.noise_rel = 0.004;
  t.value_s = median_s;
  t.buffer_sets = 32;
  return t;
}

TEST(PointWire, TimesReadBackInThePointsOrder) {
  const auto points = kb::chain_points(16 * MB);  // 4 points
  // Lines in any order, with lines of other kinds and out of range between.
  const auto lines = wire(
      {kb::point_time_line(2, measured(24.96e-6)), nlohmann::json{{"row", 1}},
       kb::point_time_line(0, measured(29.123456789012345e-6)), kb::point_time_line(9, measured(1)),
       kb::point_time_line(3, measured(26.27e-6)), kb::point_time_line(1, measured(32.35e-6))});
  const auto t = kb::point_times_from_lines(lines, kb::kChainExperiment, points, "");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].value_s, 29.123456789012345e-6);  // exactly: the digits round-trip
  EXPECT_EQ(t[1].value_s, 32.35e-6);
  EXPECT_EQ(t[2].value_s, 24.96e-6);
  EXPECT_EQ(t[3].value_s, 26.27e-6);
  EXPECT_DOUBLE_EQ(t[3].noise_rel, 0.004);
}

std::string error_of(const std::vector<nlohmann::json>& lines, const std::vector<kb::Point>& points,
                     const std::string& why) {
  try {
    kb::point_times_from_lines(wire(lines), kb::kChainExperiment, points, why);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PointWire, AMissingTimeNamesThePointAndWhy) {
  const auto points = kb::chain_points(16 * MB);
  // The worker's own error line for the point.
  EXPECT_EQ(
      error_of({kb::point_time_line(0, measured(3e-5)),
                kb::point_error_line(1, "output check failed: x")},
               points, "worker exited with code 1"),
      "roofline_ideal bytes=16777216;kernel=read_chunks_x8_stream int8 read_chunks_x8_stream: "
      "output check failed: x");
  // A worker that died: how it ended.
  EXPECT_EQ(
      error_of({kb::point_time_line(0, measured(3e-5))}, points,
               "worker died of signal 11 (Segmentation fault)"),
      "roofline_ideal bytes=16777216;kernel=read_chunks_x8_stream int8 read_chunks_x8_stream: "
      "worker died of signal 11 (Segmentation fault), without its time");
  EXPECT_EQ(error_of({}, points, ""),
            "roofline_ideal bytes=8388608;kernel=read_chunks_x8_stream int8 read_chunks_x8_stream: "
            "the worker stopped without its time");
  // A time that is not > 0 is no time.
  EXPECT_NE(error_of({kb::point_time_line(0, measured(0))}, points, "").find("not > 0"),
            std::string::npos);
  EXPECT_TRUE(kb::point_times_from_lines({}, kb::kChainExperiment, {}, "").empty());
}

}  // namespace

// The worker's "measurement" of a point (kbench run --processes): what the parent
// builds the rows of several processes from, read back as written.
TEST(PointWire, AMeasuredPointRoundTrips) {
  kb::MeasuredPoint p;
  p.detail = "R2U1W4P1K2;generic";
  kb::Measurement& t = p.m;
  t.summary.n = 24;
  t.summary.median = 50.125e-6;
  t.summary.mean = 50.3e-6;
  t.summary.min = 49.6e-6;
  t.summary.max = 51.9e-6;
  t.summary.mad = 0.1e-6;
  t.summary.noise_rel = 0.00296;
  t.summary.median_rel_err = 0.0007;
  t.value_s = 50.125e-6;
  t.throttled = 1;
  t.total = 25;
  t.setup_s = 0.25;
  t.inject = "inject=5%scaled";
  t.note = "8 buffer sets' medians 49.9-51.2 us, spread 1.6%";
  t.buffer_sets = 8;
  t.sm_clock_mhz = 1980;
  t.companion_ratio = 0.9123;
  const kb::MeasuredPoint b =
      kb::measured_point_from_json(nlohmann::json::parse(kb::measured_point_to_json(p).dump()));
  EXPECT_EQ(b.detail, p.detail);
  EXPECT_EQ(b.m.summary.n, 24u);
  EXPECT_DOUBLE_EQ(b.m.summary.median, 50.125e-6);
  EXPECT_DOUBLE_EQ(b.m.summary.mean, 50.3e-6);
  EXPECT_DOUBLE_EQ(b.m.summary.min, 49.6e-6);
  EXPECT_DOUBLE_EQ(b.m.summary.max, 51.9e-6);
  EXPECT_DOUBLE_EQ(b.m.summary.mad, 0.1e-6);
  EXPECT_DOUBLE_EQ(b.m.summary.noise_rel, 0.00296);
  EXPECT_DOUBLE_EQ(b.m.summary.median_rel_err, 0.0007);
  EXPECT_DOUBLE_EQ(b.m.value_s, 50.125e-6);
  EXPECT_EQ(b.m.throttled, 1u);
  EXPECT_EQ(b.m.total, 25u);
  EXPECT_DOUBLE_EQ(b.m.setup_s, 0.25);
  EXPECT_EQ(b.m.inject, t.inject);
  EXPECT_EQ(b.m.note, t.note);
  EXPECT_EQ(b.m.buffer_sets, 8u);
  ASSERT_TRUE(b.m.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(*b.m.sm_clock_mhz, 1980);
  EXPECT_FALSE(b.m.mem_clock_mhz);
  ASSERT_TRUE(b.m.companion_ratio);
  EXPECT_DOUBLE_EQ(*b.m.companion_ratio, 0.9123);
  EXPECT_THROW(kb::measured_point_from_json(nlohmann::json{{"detail", "x"}}),
               std::invalid_argument);
  EXPECT_THROW(kb::measured_point_from_json(nlohmann::json::parse("[1,2]")), std::invalid_argument);
}
