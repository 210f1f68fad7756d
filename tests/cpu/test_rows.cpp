// Row building (suite/rows.h) and the sampling rules (suite/sampling.h):
// CUDA-free, so every status a row can get is checked here, on CI.
#include <gtest/gtest.h>

#include <cmath>

#include "core/metrics.h"
#include "suite/experiments/mlp_metrics.h"
#include "suite/rows.h"
#include "suite/sampling.h"

namespace {

using kb::DType;
using kb::Metric;

kb::RowSource toy_source() {
  kb::RowSource s;
  s.name = "toy";
  s.seed_mean = true;
  s.metrics = {Metric::memory_bandwidth, Metric::latency_us};
  return s;
}

kb::Point point(int64_t d, DType t, bool seed, const std::string& variant = "") {
  kb::Point p;
  p.shape.set("D", d);
  p.dtype = t;
  p.variant = variant;
  p.in_seed_mean = seed;
  return p;
}

// The toy experiment's points: D=1024, 4096 (seed), 999 (extra), for bf16 then int8.
std::vector<kb::Point> toy_points() {
  std::vector<kb::Point> pts;
  for (DType t : {DType::bf16, DType::i8})
    for (auto [d, seed] : {std::pair<int64_t, bool>{1024, true}, {4096, true}, {999, false}})
      pts.push_back(point(d, t, seed));
  return pts;
}

std::vector<kb::Record> measured(const kb::RowSource& e, const kb::Point& p, double bw, double roof,
                                 const std::string& status = kb::status::ok) {
  kb::GpuIdentity gpu{"Toy GPU", "1.0", "13.0"};
  std::vector<kb::Record> rows;
  for (const Metric& m : e.metrics) {
    kb::Record r = kb::make_record(e, p, m, {}, gpu);
    const bool bandwidth = std::string(m.name) == kb::metric_name::memory_bandwidth;
    r.actual = bandwidth ? bw : 1e6 / bw;
    r.roofline = bandwidth ? roof : 1e6 / roof;
    r.status = status;
    rows.push_back(r);
  }
  return rows;
}

// A measurement of `n` samples of `t_s` each, `throttled` of them throttled.
kb::Measurement timing(double t_s, size_t n = 100, size_t throttled = 0) {
  kb::Measurement m;
  m.summary = kb::summarize(std::vector<double>(n, t_s));
  m.value_s = t_s;
  m.total = n;
  m.throttled = throttled;
  m.setup_s = 0.5;
  return m;
}

kb::Ceilings h100ish() {
  kb::Ceilings c;
  c.read_gbps = 3000;
  c.copy_gbps = 2800;
  c.bf16_tflops = 800;
  c.launch_us = 2;
  c.graph_node_us = 1;
  return c;
}

TEST(Rows, SeedMeanIsTheArithmeticMeanOfSeedShapesOnly) {
  auto e = toy_source();
  auto pts = toy_points();
  std::vector<std::vector<kb::Record>> rows = {
      measured(e, pts[0], 100, 200), measured(e, pts[1], 300, 400), measured(e, pts[2], 5000, 6000),
      measured(e, pts[3], 10, 20),   measured(e, pts[4], 30, 40),   measured(e, pts[5], 1, 2)};
  auto means = kb::seed_mean_rows(e, pts, rows, nullptr);
  ASSERT_EQ(means.size(), 4u);  // 2 dtypes x 2 metrics
  const auto& bf16_bw = means[0];
  EXPECT_EQ(bf16_bw.shape, "mean");
  EXPECT_EQ(bf16_bw.dtype, "bfloat16");
  EXPECT_EQ(bf16_bw.metric, "memory_bandwidth(GB/s)");
  EXPECT_DOUBLE_EQ(*bf16_bw.actual, 200);    // (100 + 300) / 2, not the extra 5000
  EXPECT_DOUBLE_EQ(*bf16_bw.roofline, 300);  // (200 + 400) / 2
  EXPECT_DOUBLE_EQ(*bf16_bw.roofline_fraction, 200.0 / 300);
  // Unknown GPU (no target file): the fallback target is 0.7 x roofline.
  EXPECT_DOUBLE_EQ(*bf16_bw.target, 0.7 * 300);
  EXPECT_EQ(bf16_bw.status, "ok");  // 200 misses 210 by 4.8%: within the default 5% tolerance
}

TEST(Rows, MeanFailsWhenASeedShapeFailed) {
  auto e = toy_source();
  auto pts = toy_points();
  std::vector<std::vector<kb::Record>> rows = {
      measured(e, pts[0], 100, 200),
      kb::status_rows(e, pts[1], kb::status::failed, "boom", "", {}, {}, nullptr),
      measured(e, pts[2], 1, 2),
      measured(e, pts[3], 10, 20),
      measured(e, pts[4], 30, 40),
      measured(e, pts[5], 1, 2)};
  auto means = kb::seed_mean_rows(e, pts, rows, nullptr);
  EXPECT_EQ(means[0].status, "failed");
  EXPECT_FALSE(means[0].actual.has_value());
  EXPECT_NE(means[0].message.find("1 of 2 seed shapes"), std::string::npos) << means[0].message;
  EXPECT_EQ(means[2].status, "ok");  // the int8 mean is unaffected
}

// Issue 21, defect 2: a throttled seed point made an `ok` mean row, and the
// mean rows carry the targets: a hot GPU's numbers entered the gate's history.
TEST(Rows, MeanOfAThrottledSeedPointIsThrottled) {
  auto e = toy_source();
  auto pts = toy_points();
  std::vector<std::vector<kb::Record>> rows = {
      measured(e, pts[0], 100, 200), measured(e, pts[1], 300, 400, kb::status::throttled),
      measured(e, pts[2], 1, 2),     measured(e, pts[3], 10, 20),
      measured(e, pts[4], 30, 40),   measured(e, pts[5], 1, 2)};
  auto means = kb::seed_mean_rows(e, pts, rows, nullptr);
  EXPECT_EQ(means[0].status, "throttled");
  EXPECT_DOUBLE_EQ(*means[0].actual,
                   200);  // still measured: the value is kept, the status says why
  EXPECT_NE(means[0].message.find("1 of 2 seed shapes were throttled"), std::string::npos)
      << means[0].message;
  EXPECT_EQ(means[2].status, "ok");  // the int8 mean had no throttled point
}

TEST(Rows, TargetsFromFileAndStatus) {
  auto file = kb::parse_target_file(R"J({"gpu": "Toy GPU", "peaks": {"hbm_gbps": 1},
    "targets": [{"name": "toy", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16", "shape": "*",
                 "roofline_fraction": 0.85},
                {"name": "toy", "metric": "latency(us)", "dtype": "bfloat16", "shape": "D=1024",
                 "target": 5000, "tolerance": 0.1}]})J",
                                    "toy.json");
  auto e = toy_source();
  auto rows = measured(e, toy_points()[0], 100, 200);  // 0.5 of the roofline
  kb::apply_target(rows[0], &file);
  EXPECT_DOUBLE_EQ(*rows[0].target, 170);
  EXPECT_EQ(rows[0].status, "below_target");
  kb::apply_target(rows[1], &file);  // 10000 us vs 5000 target, lower is better
  EXPECT_DOUBLE_EQ(*rows[1].target, 5000);
  EXPECT_EQ(rows[1].status, "below_target");
  auto good = measured(e, toy_points()[0], 190, 200);
  kb::apply_target(good[0], &file);
  EXPECT_EQ(good[0].status, "ok");
  auto failed = kb::status_rows(e, toy_points()[0], kb::status::failed, "x", "", {}, {}, &file);
  EXPECT_EQ(failed[0].status, "failed");  // a failed row never becomes below_target
  // A throttled row keeps its status (the gate treats it as the machine's).
  auto hot = measured(e, toy_points()[0], 100, 200, kb::status::throttled);
  kb::apply_target(hot[0], &file);
  EXPECT_EQ(hot[0].status, "throttled");
}

// decisions/0055: a target file's targets hold on its own host. Where this
// run's probe launched slower than the file's `measured.launch_us`, each
// call may take the rise longer: a row within that stays `ok`, as kgate
// judges it, and so does a mean that misses only through such shapes.
TEST(Rows, ATargetMissWithinTheHostsSlowerLaunchStaysOk) {
  auto file = kb::parse_target_file(R"J({"gpu": "Toy GPU", "peaks": {"hbm_gbps": 1},
    "measured": {"read_gbps": 3000, "launch_us": 3.0},
    "targets": [{"name": "toy", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16",
                 "shape": "D=1024", "target": 2000, "tolerance": 0.05},
                {"name": "toy", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16",
                 "shape": "D=4096", "target": 1000, "tolerance": 0.05},
                {"name": "toy", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16",
                 "shape": "mean", "target": 1500, "tolerance": 0.01}]})J",
                                    "toy.json");
  kb::RowSource e = toy_source();
  e.metrics = {Metric::memory_bandwidth};
  kb::Work w;
  w.bytes = 1e7;  // 1515 GB/s in 6.6 us: 5 us a call at the target, +1.6
  auto row = [&](double t_s, double probe_launch_us, int64_t d = 1024) {
    kb::Ceilings c = h100ish();
    c.probe_launch_us = probe_launch_us;
    return kb::measured_rows(e, point(d, DType::bf16, true), "", w, timing(t_s), c, {}, {},
                             &file)[0];
  };
  const kb::Record met = row(6.6e-6, 4.6);
  EXPECT_EQ(met.status, "ok") << met.message;
  EXPECT_NE(met.message.find("below target 2000, but this host launches slower (4.6 vs 3 us): "
                             "the target here is 1515, met"),
            std::string::npos)
      << met.message;
  // The file's own host (or a faster one), no probe, or 1 us a call beyond the rise.
  for (double launch : {3.0, 2.5, 0.0})
    EXPECT_EQ(row(6.6e-6, launch).status, "below_target") << launch;
  EXPECT_EQ(row(7.6e-6, 4.6).status, "below_target");

  // The mean of 1515 and 1000 (1258) misses 1500; its shapes met theirs.
  const auto mean_of = [&](const kb::Record& a, const kb::Record& b) {
    std::vector<kb::Point> pts = {point(1024, DType::bf16, true), point(4096, DType::bf16, true)};
    return kb::seed_mean_rows(e, pts, {{a}, {b}}, &file)[0];
  };
  const kb::Record d4096 = row(1e-5, 4.6, 4096);  // 1000 GB/s: on target
  ASSERT_EQ(d4096.status, "ok");
  const kb::Record mean = mean_of(met, d4096);
  EXPECT_EQ(mean.status, "ok") << mean.message;
  EXPECT_NE(mean.message.find("each of its 2 shapes in this run met its target (1 of them on "
                              "this host's): so does the mean"),
            std::string::npos)
      << mean.message;
  // A shape below its target even here, or none on the host's target: the mean misses.
  EXPECT_EQ(mean_of(row(7.6e-6, 4.6), d4096).status, "below_target");
  EXPECT_EQ(mean_of(row(5.2e-6, 4.6), d4096).status, "below_target");  // 1923: within 5%
}

// Issue 21, defect 1: the engine appends the case's detail and `bound=` to
// the row's variant before the target lookup, so an entry with a `variant`
// never matched a per-shape row.
TEST(Rows, VariantTargetMatchesAMeasuredRow) {
  auto file = kb::parse_target_file(R"J({"gpu": "Toy GPU", "peaks": {"hbm_gbps": 3000},
    "targets": [{"name": "toy", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16", "shape": "*",
                 "variant": "gemv", "target": 2000},
                {"name": "toy", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16", "shape": "*",
                 "target": 100}]})J",
                                    "toy.json");
  kb::RowSource e;
  e.name = "toy";
  e.metrics = {Metric::memory_bandwidth};
  kb::Work w;
  w.bytes = 1e9;
  auto rows = kb::measured_rows(e, point(1024, DType::bf16, true, "gemv"), "algo=7", w,
                                timing(1e-3), h100ish(), {}, {}, &file);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].variant, "gemv;algo=7;bound=memory");
  ASSERT_TRUE(rows[0].target);
  EXPECT_DOUBLE_EQ(*rows[0].target, 2000);  // the variant's entry, not the generic 100
  auto other = kb::measured_rows(e, point(1024, DType::bf16, true, "cublaslt"), "", w, timing(1e-3),
                                 h100ish(), {}, {}, &file);
  EXPECT_DOUBLE_EQ(*other[0].target, 100);
}

TEST(Rows, VariantMatchingIsByWholeFields) {
  EXPECT_TRUE(kb::variant_matches("", "anything"));
  EXPECT_TRUE(kb::variant_matches("gemv", "gemv;bound=memory"));
  EXPECT_TRUE(kb::variant_matches("bound=launch", "gemv;bound=launch"));
  EXPECT_TRUE(kb::variant_matches("bound=memory;gemv", "gemv;x=1;bound=memory"));
  EXPECT_FALSE(kb::variant_matches("gem", "gemv;bound=memory"));  // not a prefix match
  EXPECT_FALSE(kb::variant_matches("gemv", "cublaslt;bound=memory"));
  EXPECT_FALSE(kb::variant_matches("gemv;bound=launch", "gemv;bound=memory"));
}

TEST(Rows, MeasuredRowsValuesRooflineAndStatuses) {
  kb::RowSource e;
  e.name = "toy";
  e.metrics = {Metric::memory_bandwidth, Metric::latency_us, Metric::compilation_time};
  kb::Work w;
  w.bytes = 3e9;  // 1 ms at 3000 GB/s (+ 2 us launch)
  auto rows = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(2e-3), h100ish(), {},
                                {}, nullptr);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(*rows[0].actual, 1500);
  EXPECT_EQ(rows[0].status, "below_target");  // 0.5 of the roofline; no file: target 0.7 of it
  EXPECT_NEAR(*rows[0].roofline_fraction, 1500 / (3e9 / 1.002e-3 / 1e9), 1e-9);
  EXPECT_EQ(rows[0].variant, "bound=memory");
  EXPECT_DOUBLE_EQ(*rows[1].actual, 2000);  // latency in us
  EXPECT_DOUBLE_EQ(*rows[2].actual, 0.5);   // compilation_time = setup
  EXPECT_EQ(rows[2].variant, "");           // no roofline, no bound
  EXPECT_FALSE(rows[2].roofline);
  EXPECT_EQ(rows[0].samples, 100);
  EXPECT_DOUBLE_EQ(*rows[0].median_us, 2000);

  // Faster than the roofline allows, beyond its noise (1.02): said in the
  // message; within it (1.01), nothing is said: that is at the bound.
  auto fast = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(0.5e-3), h100ish(),
                                {}, {}, nullptr);
  EXPECT_NE(fast[0].message.find("above the roofline"), std::string::npos);
  auto beyond = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(1.002e-3 / 1.03),
                                  h100ish(), {}, {}, nullptr);
  EXPECT_NEAR(*beyond[0].roofline_fraction, 1.03, 1e-9);
  EXPECT_NE(beyond[0].message.find("above the roofline"), std::string::npos);
  auto at = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(1.002e-3 / 1.01),
                              h100ish(), {}, {}, nullptr);
  EXPECT_NEAR(*at[0].roofline_fraction, 1.01, 1e-9);
  EXPECT_EQ(at[0].message.find("above the roofline"), std::string::npos) << at[0].message;

  // No fp8 peak in these ceilings: utilization is undefined here, a failed
  // row that says so (never a made-up number).
  e.metrics = {Metric::flops_utilization};
  w.flops = 1e9;
  w.flop_dtype = DType::fp8_e4m3;
  auto fp8 = kb::measured_rows(e, point(1, DType::fp8_e4m3, false), "", w, timing(2e-3), h100ish(),
                               {}, {}, nullptr);
  EXPECT_EQ(fp8[0].status, "failed");
  EXPECT_FALSE(fp8[0].actual);
  EXPECT_NE(fp8[0].message.find("no peak"), std::string::npos) << fp8[0].message;
}

TEST(Rows, ThrottledWhenMoreThanHalfTheSamplesWere) {
  kb::RowSource e;
  e.name = "toy";
  e.metrics = {Metric::memory_bandwidth};
  kb::Work w;
  w.bytes = 1e9;
  auto half = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(0.4e-3, 100, 50),
                                h100ish(), {}, {}, nullptr);
  EXPECT_EQ(half[0].status, "ok");
  auto most = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(0.4e-3, 100, 51),
                                h100ish(), {}, {}, nullptr);
  EXPECT_EQ(most[0].status, "throttled");
  EXPECT_NE(most[0].message.find("51 of 100 samples"), std::string::npos) << most[0].message;
}

TEST(Rows, StatusRowsCarryTheCaseDetail) {
  auto rows =
      kb::status_rows(toy_source(), point(1, DType::bf16, false, "gemv"), kb::status::incorrect,
                      "output check failed", "algo=3", {}, {}, nullptr);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].variant, "gemv;algo=3");
  EXPECT_EQ(rows[0].status, "incorrect");
  EXPECT_FALSE(rows[0].actual);
}

TEST(Sampling, QuickModeClampsTheBudget) {
  kb::EngineOptions o;
  o.quick = true;
  auto q = kb::effective_options(o);
  EXPECT_EQ(q.min_samples, 5);
  EXPECT_DOUBLE_EQ(q.max_time_s, 0.15);
  EXPECT_DOUBLE_EQ(q.max_noise, 0.02);
  auto full = kb::effective_options(kb::EngineOptions{});
  EXPECT_EQ(full.min_samples, 20);
  EXPECT_DOUBLE_EQ(full.max_time_s, 1.0);
}

TEST(Sampling, WarmupRules) {
  EXPECT_FALSE(kb::warmup_done(2, 1.0, false));   // at least 3
  EXPECT_FALSE(kb::warmup_done(3, 0.01, false));  // and 20 ms
  EXPECT_TRUE(kb::warmup_done(3, 0.02, false));
  EXPECT_TRUE(kb::warmup_done(50, 0.0, false));  // at most 50
  EXPECT_TRUE(kb::warmup_done(1, 0.0, true));    // decode: one
}

TEST(Sampling, ThrottleClassification) {
  EXPECT_FALSE(kb::sample_throttled(1980, 1980));
  EXPECT_FALSE(kb::sample_throttled(1485, 1980));  // exactly 75%
  EXPECT_TRUE(kb::sample_throttled(1484, 1980));
  EXPECT_FALSE(kb::sample_throttled(std::nullopt, 1980));  // no NVML: never throttled
  EXPECT_FALSE(kb::sample_throttled(100, std::nullopt));
  std::vector<double> good = {1, 2}, all = {1, 2, 3, 4};
  EXPECT_EQ(&kb::samples_to_use(good, all), &good);  // half good: use them
  std::vector<double> few = {1};
  EXPECT_EQ(&kb::samples_to_use(few, all), &all);  // mostly throttled: all (row says throttled)
}

TEST(Sampling, StopRule) {
  kb::EngineOptions o;  // min 20 samples, noise 0.25%, 1 s, max 5000
  std::vector<double> steady(20, 1e-3);
  EXPECT_TRUE(kb::stop_sampling(o, 20, steady, 0.1));  // 20 quiet samples
  std::vector<double> nineteen(19, 1e-3);
  EXPECT_FALSE(kb::stop_sampling(o, 19, nineteen, 0.1));  // too few
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 1e-3 : 2e-3);
  EXPECT_FALSE(kb::stop_sampling(o, 20, noisy, 0.1));        // noise above the bound
  EXPECT_TRUE(kb::stop_sampling(o, 20, noisy, 1.5));         // budget spent
  EXPECT_FALSE(kb::stop_sampling(o, 2, {1e-3, 1e-3}, 5.0));  // but at least 3 samples
  // 1% spread (robust sigma) at 20 samples: a median's error of 0.28%, above
  // 0.25%; at 40 it is 0.20%.
  auto spread = [](size_t n) {
    std::vector<double> v;
    for (size_t i = 0; i < n; ++i) v.push_back(1e-3 * (i % 2 ? 1.00675 : 0.99325));
    return v;
  };
  EXPECT_FALSE(kb::stop_sampling(o, 20, spread(20), 0.1));
  EXPECT_TRUE(kb::stop_sampling(o, 40, spread(40), 0.1));
  o.max_samples = 21;
  EXPECT_TRUE(kb::stop_sampling(o, 21, std::vector<double>(21, 1e-3), 0.1));
  // --quick: the noise test may stop at its 5 samples.
  o = kb::effective_options([] {
    kb::EngineOptions q;
    q.quick = true;
    return q;
  }());
  EXPECT_TRUE(kb::stop_sampling(o, 5, std::vector<double>(5, 1e-3), 0.01));
  EXPECT_FALSE(kb::stop_sampling(o, 4, std::vector<double>(4, 1e-3), 0.01));
  EXPECT_EQ(o.max_buffer_sets, 3);
}

TEST(Sampling, SamplesOf100usOrMoreAreFollowedByAnEqualIdleGap) {
  EXPECT_EQ(kb::cool_gap_seconds(50e-6), 0);  // short kernels: back to back
  EXPECT_EQ(kb::cool_gap_seconds(100e-6), 100e-6);
  EXPECT_EQ(kb::cool_gap_seconds(0.4e-3), 0.4e-3);  // the MLP at 4096 tokens, D=1024
  EXPECT_EQ(kb::cool_gap_seconds(5e-3), 5e-3);      // half duty
}

TEST(Sampling, StopOnlyAfterWholeRoundsOverTheBufferSets) {
  kb::EngineOptions o;
  const std::vector<double> quiet(64, 1e-3);
  // 8 sets: 20 samples would leave sets unsampled; a round of 8 and 3 per set first.
  EXPECT_FALSE(kb::stop_sampling(o, 20, std::vector<double>(20, 1e-3), 0.1, 8));
  EXPECT_FALSE(kb::stop_sampling(o, 23, std::vector<double>(23, 1e-3), 0.1, 8));  // mid-round
  EXPECT_TRUE(kb::stop_sampling(o, 24, std::vector<double>(24, 1e-3), 0.1, 8));
  // 32 sets: at least 96 samples.
  EXPECT_FALSE(kb::stop_sampling(o, 64, quiet, 0.1, 32));
  EXPECT_TRUE(kb::stop_sampling(o, 96, std::vector<double>(96, 1e-3), 0.1, 32));
  // The budget still ends a point mid-round.
  EXPECT_TRUE(kb::stop_sampling(o, 23, std::vector<double>(23, 1e-3), 1.5, 8));
}

}  // namespace

namespace {

TEST(Sampling, BufferSetsSampleFourGigabytesWithinMemory) {
  const size_t GB = size_t(1) << 30, MB = size_t(1) << 20;
  EXPECT_EQ(kb::buffer_sets(90 * MB, 70 * GB, 80 * GB, 32), 32);  // a 90 MB GEMV: 32 (of 46 wanted)
  EXPECT_EQ(kb::buffer_sets(512 * MB, 70 * GB, 80 * GB, 32), 8);  // 512 MB: 8 make 4 GB
  EXPECT_EQ(kb::buffer_sets(2 * GB, 70 * GB, 80 * GB, 32), 3);    // at least 3
  EXPECT_EQ(kb::buffer_sets(10 * GB, 60 * GB, 80 * GB, 32), 2);   // a quarter of 80 GB holds 2
  EXPECT_EQ(kb::buffer_sets(30 * GB, 40 * GB, 80 * GB, 32), 1);   // a model: one set
  EXPECT_EQ(kb::buffer_sets(2 * GB, 3 * GB, 80 * GB, 32), 1);     // little free: one
  EXPECT_EQ(kb::buffer_sets(0, 70 * GB, 80 * GB, 32), 32);        // nothing measurable allocated
  EXPECT_EQ(kb::buffer_sets(100 * MB, 70 * GB, 80 * GB, 3), 3);   // --buffer-sets 3
  EXPECT_EQ(kb::buffer_sets(100 * MB, 70 * GB, 80 * GB, 1), 1);   // --buffer-sets 1
}

TEST(Sampling, AnInjectedSlowdownIsMarkedAsScaled) {
  EXPECT_EQ(kb::inject_field(0.05), "inject=5%scaled");
  EXPECT_EQ(kb::inject_field(0.025), "inject=2.5%scaled");
}

TEST(Rows, InjectedRowsAreMarkedAndSoIsTheirMean) {
  auto e = toy_source();
  kb::Measurement t = timing(1e-3);
  t.inject = "inject=5%";
  kb::Work w;
  w.bytes = 1e9;
  auto pts = toy_points();
  std::vector<std::vector<kb::Record>> rows(pts.size());
  for (size_t i = 0; i < pts.size(); ++i)
    rows[i] = kb::measured_rows(e, pts[i], "", w, t, h100ish(), {}, {}, nullptr);
  EXPECT_EQ(rows[0][0].variant, "bound=memory;inject=5%");
  // The setup time is not in the timed window: its row is not marked.
  kb::RowSource setup;
  setup.name = "toy";
  setup.metrics = {Metric::compilation_time};
  auto st = kb::measured_rows(setup, pts[0], "", w, t, h100ish(), {}, {}, nullptr);
  EXPECT_EQ(st[0].variant, "");
  auto means = kb::seed_mean_rows(e, pts, rows, nullptr);
  EXPECT_EQ(means[0].variant, "inject=5%");
}

}  // namespace

namespace {
kb::Ceilings laddered() {
  kb::Ceilings c = h100ish();
  c.ladder.read.rungs = {{4096, 4e-6}, {1e9, 1.004e-3}};
  c.ladder.copy.rungs = {{4096, 4e-6}, {2e9, 2.504e-3}};
  return c;
}
}  // namespace

TEST(Rows, TheRooflineVersionIsInTheMessageOfModelRowsOnly) {
  kb::RowSource e;
  e.name = "toy";
  e.metrics = {Metric::memory_bandwidth, Metric::compilation_time};
  kb::Work w;
  w.bytes = 1e9;
  kb::TargetFile file;
  file.path = "targets/toy.json";
  auto v1 = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(2e-3), h100ish(), {},
                              {}, &file);
  EXPECT_EQ(v1[0].message, "roofline=model (no measured.ladder in targets/toy.json)");
  EXPECT_EQ(v1[1].message, "");  // compilation_time has no roofline
  auto v2 = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(2e-3), laddered(), {},
                              {}, &file);
  EXPECT_EQ(v2[0].message, "");
  EXPECT_NEAR(*v2[0].roofline_fraction, 1.004e-3 / 2e-3, 1e-12);
  // Throttled rows keep the version too (kgate reads it).
  auto hot = kb::measured_rows(e, point(1, DType::bf16, false), "", w, timing(2e-3, 10, 8),
                               h100ish(), {}, {}, &file);
  EXPECT_EQ(hot[0].status, "throttled");
  EXPECT_NE(hot[0].message.find("roofline=model"), std::string::npos) << hot[0].message;
  // The seed-mean row of model rows says so as well.
  std::vector<kb::Point> pts = {point(1, DType::bf16, true)};
  e.seed_mean = true;
  auto mean = kb::seed_mean_rows(e, pts, {v1}, &file);
  ASSERT_FALSE(mean.empty());
  EXPECT_NE(mean[0].message.find("roofline=model"), std::string::npos);
}

TEST(Rows, GemmShareIsTheCompanionRatioWithoutARoofline) {
  kb::RowSource e;
  e.name = "mlp";
  e.metrics = {Metric::tflops, kb::mlp_metrics::kGemmShare};
  kb::Work w;
  w.flops = 8e9;
  kb::Measurement t = timing(2e-3);
  t.companion_ratio = 0.81;
  auto rows =
      kb::measured_rows(e, point(1, DType::bf16, false), "", w, t, laddered(), {}, {}, nullptr);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].metric, "gemm_share");
  EXPECT_DOUBLE_EQ(*rows[1].actual, 0.81);
  EXPECT_FALSE(rows[1].roofline);
  EXPECT_FALSE(rows[1].roofline_fraction);
  EXPECT_EQ(rows[1].variant, "");  // no bound= either
  EXPECT_EQ(rows[1].status, "ok");
  // No companion timed: a failed row that says why, never a made-up ratio.
  t.companion_ratio.reset();
  auto none =
      kb::measured_rows(e, point(1, DType::bf16, false), "", w, t, laddered(), {}, {}, nullptr);
  EXPECT_EQ(none[1].status, "failed");
  EXPECT_NE(none[1].message.find("no companion"), std::string::npos);
}

// A point measured in several worker processes (kbench run --processes).
namespace {

kb::Measurement process(double median_us, double min_us, double max_us, size_t n,
                        double noise = 0.002) {
  kb::Measurement t;
  t.summary.n = n;
  t.summary.median = t.summary.mean = t.value_s = median_us * 1e-6;
  t.summary.min = min_us * 1e-6;
  t.summary.max = max_us * 1e-6;
  t.summary.noise_rel = noise;
  t.summary.median_rel_err = 0.001;
  t.total = n;
  t.buffer_sets = 3;
  t.sm_clock_mhz = 1980;
  t.setup_s = 0.5;
  return t;
}

// A measured point's rows at `us` (two metrics).
std::vector<kb::Record> point_rows_of(double us) {
  std::vector<kb::Record> rows(2);
  rows[0].metric = "memory_bandwidth(GB/s)";
  rows[1].metric = "latency(us)";
  for (auto& r : rows) {
    r.median_us = us;
    r.actual = us;
  }
  return rows;
}

}  // namespace

TEST(ProcessRows, ShortPointsGetTheirOwnProcessCount) {
  // Under 20 us in the first process: short_processes, never fewer than processes.
  EXPECT_EQ(kb::processes_for(5.7e-6, 3, 9), 9);
  EXPECT_EQ(kb::processes_for(19.9e-6, 3, 9), 9);
  EXPECT_EQ(kb::processes_for(20e-6, 3, 9), 3);
  EXPECT_EQ(kb::processes_for(1.3e-3, 3, 9), 3);
  EXPECT_EQ(kb::processes_for(5.7e-6, 3, 1), 3);
  EXPECT_EQ(kb::processes_for(5.7e-6, 1, 1), 1);
  // No time (a point without a median): as any other point.
  EXPECT_EQ(kb::processes_for(0, 3, 9), 3);
}

TEST(ProcessRows, SeveralGpusShareTheDefaultProcessesOut) {
  auto counts = [](int given, int given_short, bool quick, int gpus) {
    const kb::ProcessCounts c = kb::worker_processes(given, given_short, quick, gpus);
    return std::make_pair(c.processes, c.short_processes);
  };
  using P = std::pair<int, int>;
  // One GPU: 3, and 9 for a short point; --quick or --processes 1: one.
  EXPECT_EQ(counts(0, 0, false, 1), P(3, 9));
  EXPECT_EQ(counts(0, 0, true, 1), P(1, 1));
  EXPECT_EQ(counts(1, 0, false, 1), P(1, 1));
  EXPECT_EQ(counts(2, 0, false, 1), P(2, 9));
  EXPECT_EQ(counts(0, 5, false, 1), P(3, 5));
  EXPECT_EQ(counts(4, 2, false, 1), P(4, 4));  // short never fewer
  // Several GPUs: twice the defaults shared out, ceil(6 / n) and
  // ceil(18 / n), never more than one GPU's, short at least 2.
  EXPECT_EQ(counts(0, 0, false, 2), P(3, 9));
  EXPECT_EQ(counts(0, 0, false, 3), P(2, 6));
  EXPECT_EQ(counts(0, 0, false, 4), P(2, 5));
  EXPECT_EQ(counts(0, 0, false, 6), P(1, 3));
  EXPECT_EQ(counts(0, 0, false, 8), P(1, 3));
  EXPECT_EQ(counts(0, 0, false, 16), P(1, 2));
  EXPECT_EQ(counts(0, 0, false, 64), P(1, 2));  // short: never one alone
  // Counts given on the command line are each GPU's; --quick stays one.
  EXPECT_EQ(counts(3, 0, false, 4), P(3, 9));
  EXPECT_EQ(counts(1, 0, false, 4), P(1, 1));
  EXPECT_EQ(counts(0, 9, false, 4), P(2, 9));
  EXPECT_EQ(counts(0, 0, true, 4), P(1, 1));
}

TEST(ProcessRows, RelativeSpreadOfTheProcesses) {
  const std::vector<double> apart{50.7e-6, 51.9e-6, 51.2e-6};  // 2.3% apart
  // The figure the rows' note prints as "spread".
  EXPECT_NEAR(kb::relative_spread(apart), 1.2 / 51.2666666, 1e-6);
  EXPECT_EQ(kb::relative_spread({51e-6}), 0);
}

TEST(ProcessRows, TheMeanOfTheProcessesMedians) {
  // Two processes in a slow state of three: the mean moves by their share
  // of the gap, not by all of it (the median would read 50.90).
  auto a = process(50.0, 49.5, 51.0, 21, 0.002), b = process(50.9, 50.4, 52.0, 30, 0.004),
       c = process(50.8, 50.3, 51.5, 24, 0.003);
  b.throttled = 2;
  c.companion_ratio = 0.9;
  a.companion_ratio = 0.8;
  a.note = "32 buffer sets' medians ...";
  const kb::Measurement t = kb::combine_process_measurements({a, b, c});
  EXPECT_NEAR(t.value_s * 1e6, 50.5667, 1e-3);
  EXPECT_DOUBLE_EQ(t.summary.median, t.value_s);  // the row's median_us column
  EXPECT_NEAR(t.summary.min * 1e6, 49.5, 1e-9);
  EXPECT_NEAR(t.summary.max * 1e6, 52.0, 1e-9);
  EXPECT_EQ(t.summary.n, 75u);
  EXPECT_EQ(t.total, 75u);
  EXPECT_EQ(t.throttled, 2u);
  EXPECT_EQ(t.buffer_sets, 9u);
  EXPECT_NEAR(t.summary.noise_rel, 0.003, 1e-12);
  EXPECT_NEAR(t.summary.median_rel_err, std::sqrt(3.0) * 0.001 / 3, 1e-12);
  ASSERT_TRUE(t.companion_ratio);
  EXPECT_NEAR(*t.companion_ratio, 0.85, 1e-12);  // of those that timed one
  EXPECT_DOUBLE_EQ(*t.sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(t.setup_s, 0.5);
  // The spread (1.8%) said with each process's time, after the first's note.
  EXPECT_EQ(t.note,
            "32 buffer sets' medians ...; the mean of 3 worker processes' medians 50.00, 50.90, "
            "50.80 us (spread 1.8%)");
}

TEST(ProcessRows, CloseProcessesAreNotNotedAndOneIsItself) {
  const kb::Measurement t =
      kb::combine_process_measurements({process(50.0, 49, 51, 20), process(50.3, 49, 51, 20)});
  EXPECT_NEAR(t.value_s * 1e6, 50.15, 1e-9);
  EXPECT_TRUE(t.note.empty()) << t.note;
  // kbench run --detail: listed whatever the spread.
  EXPECT_EQ(
      kb::combine_process_measurements({process(50.0, 49, 51, 20), process(50.3, 49, 51, 20)}, true)
          .note,
      "the mean of 2 worker processes' medians 50.00, 50.30 us (spread 0.6%)");
  const kb::Measurement one = kb::combine_process_measurements({process(50.0, 49, 51, 20)});
  EXPECT_DOUBLE_EQ(one.value_s, 50e-6);
  EXPECT_EQ(one.summary.n, 20u);
  EXPECT_THROW(kb::combine_process_measurements({}), std::invalid_argument);
}

TEST(ProcessRows, RowsOfTheCombinedMeasurementAreRowsOfItsTime) {
  // measured_rows on the combined measurement: the rate from the mean time.
  kb::RowSource src;
  src.name = "toy";
  src.metrics = {Metric::memory_bandwidth, Metric::latency_us};
  kb::Work w;
  w.bytes = 50e-6 * 1e9 * 1000;  // 1000 GB/s at 50 us
  kb::Ceilings c;
  c.read_gbps = 3000;
  const auto t =
      kb::combine_process_measurements({process(49.0, 48, 50, 20), process(51.0, 50, 52, 20)});
  const auto rows =
      kb::measured_rows(src, point(1024, DType::bf16, false), "K2", w, t, c, {}, {}, nullptr);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(*rows[0].actual, 1000, 1e-6);
  EXPECT_NEAR(*rows[0].median_us, 50, 1e-9);
  EXPECT_NEAR(*rows[1].actual, 50, 1e-9);
  EXPECT_EQ(rows[0].samples, 40);
  EXPECT_NE(rows[0].message.find("the mean of 2 worker processes' medians 49.00, 51.00 us"),
            std::string::npos)
      << rows[0].message;
}

TEST(ProcessRows, AMeasuredPointIsOneWhoseRowsAllHaveATime) {
  kb::RowSource src;
  src.name = "toy";
  src.metrics = {Metric::memory_bandwidth, Metric::flops_utilization};
  kb::Work w;
  w.bytes = 1e6;
  w.flops = 1e6;
  w.flop_dtype = DType::fp8_e4m3;  // no datasheet peak in these ceilings: that row fails
  kb::Ceilings c;
  c.read_gbps = 3000;
  const auto rows = kb::measured_rows(src, point(1024, DType::bf16, false), "", w,
                                      process(50.0, 49, 51, 20), c, {}, {}, nullptr);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].status, kb::status::failed);  // measured all the same
  EXPECT_TRUE(kb::point_measured(rows));
  for (const char* st : {kb::status::failed, kb::status::incorrect, kb::status::skipped})
    EXPECT_FALSE(kb::point_measured(
        kb::status_rows(src, point(1024, DType::bf16, false), st, "why", "", {}, {}, nullptr)))
        << st;
  EXPECT_FALSE(kb::point_measured({}));
}

TEST(ProcessRows, AFurtherProcessThatDidNotMeasureFailsThePoint) {
  kb::MeasuredPoint first{"K2", process(50.0, 49, 51, 20)};
  auto measured = [](double us, const std::string& detail = "K2") {
    kb::ProcessResult r;
    r.rows = point_rows_of(us);
    r.measured = kb::MeasuredPoint{detail, process(us, us - 1, us + 1, 20)};
    return r;
  };
  std::vector<double> times;  // what rows_of was given
  auto rows_of = [&](const kb::Measurement& m) {
    times.push_back(m.value_s * 1e6);
    return point_rows_of(m.value_s * 1e6);
  };
  auto failed = [](const std::string& why) {
    auto r = point_rows_of(0);
    for (auto& x : r) {
      x.status = kb::status::failed;
      x.median_us.reset();
      x.message = why;
    }
    return r;
  };
  // All measured: the rows of the mean.
  auto got = kb::point_rows_of_processes(first, {measured(51.0), measured(52.0)}, rows_of, failed);
  ASSERT_EQ(times.size(), 1u);
  EXPECT_NEAR(times[0], 51.0, 1e-9);
  EXPECT_NEAR(*got[0].median_us, 51.0, 1e-9);
  // A crash in process 3: its failed rows, saying which process.
  kb::ProcessResult crashed;
  crashed.rows = failed("worker died of signal 11 (Segmentation fault)");
  got = kb::point_rows_of_processes(first, {measured(51.0), crashed}, rows_of, failed);
  EXPECT_EQ(got[0].status, kb::status::failed);
  EXPECT_EQ(got[0].message,
            "in worker process 3 of 3 of this point: worker died of signal 11 (Segmentation "
            "fault)");
  // No rows, rows without a measurement, another kernel: failed, with why.
  got = kb::point_rows_of_processes(first, {kb::ProcessResult{}}, rows_of, failed);
  EXPECT_EQ(got[0].message, "in worker process 2 of 2 of this point: no rows");
  kb::ProcessResult bare = measured(51.0);
  bare.measured.reset();
  got = kb::point_rows_of_processes(first, {bare}, rows_of, failed);
  EXPECT_EQ(got[0].message,
            "in worker process 2 of 2 of this point: rows without their measurement");
  got = kb::point_rows_of_processes(first, {measured(51.0, "K4")}, rows_of, failed);
  EXPECT_EQ(got[0].status, kb::status::failed);
  EXPECT_EQ(got[0].message,
            "the worker processes of this point ran different kernels ('K2', 'K4')");
  EXPECT_EQ(times.size(), 1u);  // none of those built rows of a time
  // No further process: the first alone.
  got = kb::point_rows_of_processes(first, {}, rows_of, failed);
  EXPECT_NEAR(*got[0].median_us, 50.0, 1e-9);
}

TEST(ProcessRows, AThrottledProcessStaysOutOfTheMean) {
  auto a = process(50.0, 49, 51, 20), b = process(80.0, 60, 90, 20), c = process(50.4, 49, 51, 20);
  b.throttled = 15;  // most of its samples under the throttle clock
  kb::Measurement t = kb::combine_process_measurements({a, b, c});
  EXPECT_NEAR(t.value_s * 1e6, 50.2, 1e-9);
  EXPECT_EQ(t.summary.n, 40u);
  EXPECT_EQ(t.throttled, 0u);
  EXPECT_NEAR(t.summary.max * 1e6, 51, 1e-9);
  EXPECT_EQ(t.note,
            "left out of the mean: worker process 2 (15 of 20) samples under the throttle clock");
  // All throttled: all count, and the point is throttled.
  a.throttled = c.throttled = 20;
  t = kb::combine_process_measurements({a, b, c});
  EXPECT_NEAR(t.value_s * 1e6, (50.0 + 80.0 + 50.4) / 3, 1e-9);
  EXPECT_TRUE(kb::point_throttled(t.throttled, t.total));
  // The first process's note and setup time stay even where it is left out.
  a = process(50.0, 49, 51, 20);
  a.throttled = 11;
  a.note = "32 buffer sets' medians ...";
  t = kb::combine_process_measurements({a, process(50.4, 49, 51, 20)});
  EXPECT_NEAR(t.value_s * 1e6, 50.4, 1e-9);
  EXPECT_EQ(t.note.rfind("32 buffer sets' medians ...; left out of the mean: worker process 1", 0),
            0u)
      << t.note;
  EXPECT_DOUBLE_EQ(t.setup_s, 0.5);
}
