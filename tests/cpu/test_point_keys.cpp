// A row's key says what it measured: the gate keys a row by (name, metric,
// dtype, shape, arch, device), without its variant (docs/gate.md "Like
// with like"), so the points of one run must differ in (name, shape,
// dtype). roofline_ideal measures eight ideal kernels at the same sizes;
// its variant is in its shapes (`bytes=65536;kernel=read_sweep`,
// Experiment::variant_in_shape). Without
// it a 4x H100 run's roofline_ideal rows gave 51 "the same key again"
// warnings per GPU and all but one kernel of each size were dropped from
// the gate and the dashboard.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "core/types.h"
#include "kgate_test_util.h"
#include "suite/rows.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/history.h"

namespace {

using namespace kgt;

kb::Point ideal_point(int64_t bytes, const std::string& kernel) {
  kb::Point p;
  p.shape = kb::Shape{{"bytes", bytes}};
  p.shape.set_label("kernel", kernel);  // what Experiment::points() does for roofline_ideal
  p.dtype = kb::DType::i8;
  p.variant = kernel;
  return p;
}

// A measured roofline_ideal row of `p`, as rows.cpp builds it (its variant
// then `bound=`), in run `run`.
kb::Record ideal_row(const kb::Point& p, double actual, const std::string& run, int night = 0) {
  kb::RunInfo info;
  info.run_id = run;
  char ts[32];
  std::snprintf(ts, sizeof ts, "2026-11-%02dT03:00:00Z", 1 + night);
  info.timestamp = ts;
  kb::RowSource src{"roofline_ideal", false, false, {kb::Metric::memory_bandwidth}};
  kb::Record r = kb::make_record(src, p, kb::Metric::memory_bandwidth, info, {kH100, "580", "13"});
  r.variant = kb::join_variant(r.variant, "bound=launch");
  r.actual = actual;
  r.status = "ok";
  r.samples = 50;
  r.noise_rel = 0.002;
  return r;
}

TEST(PointKeys, ShapeLabelsFollowTheAxes) {
  kb::Shape s{{"bytes", 65536}};
  s.set_label("kernel", "read_sweep");
  EXPECT_EQ(s.str(), "bytes=65536;kernel=read_sweep");
  s.set_label("kernel", "copy_wave");  // replaced, not added
  s.set("bytes", 1048576);
  EXPECT_EQ(s.str(), "bytes=1048576;kernel=copy_wave");
  // A label is not an axis: the experiments' p["bytes"] reads the axes only.
  using Axes = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(s.items(), (Axes{{"bytes", 1048576}}));
  EXPECT_FALSE(s.has("kernel"));
  EXPECT_THROW(s["kernel"], std::out_of_range);
  EXPECT_EQ((kb::Shape{{"BS", 4096}}.str()), "BS=4096");  // no label, as before
  // The row's shape is the point's, the variant column as it was.
  const kb::Record r = ideal_row(ideal_point(65536, "read_sweep"), 600, "r1");
  EXPECT_EQ(r.shape, "bytes=65536;kernel=read_sweep");
  EXPECT_EQ(r.variant, "read_sweep;bound=launch");
}

// Two ideal kernels at one size in one run: two keys, no warning. Their
// rows as they were written before (`bytes=N`) were one key.
TEST(PointKeys, KgateReadsTwoIdealKernelsOfOneSizeAsTwoKeys) {
  {
    kb::History h;
    h.add_text(csv({ideal_row(ideal_point(65536, "read_sweep"), 600, "r1"),
                    ideal_row(ideal_point(65536, "read_chunks"), 520, "r1")}),
               "r.csv");
    h.finish();
    EXPECT_TRUE(h.warnings().empty()) << h.warnings().front().text();
    ASSERT_EQ(h.keys().size(), 2u);
    std::set<std::string> shapes;
    for (const auto& k : h.keys()) shapes.insert(k.shape);
    EXPECT_EQ(shapes, (std::set<std::string>{"bytes=65536;kernel=read_chunks",
                                             "bytes=65536;kernel=read_sweep"}));
    for (size_t k = 0; k < h.keys().size(); ++k) EXPECT_EQ(h.series(k).size(), 1u);
  }
  {
    kb::Record a = ideal_row(ideal_point(65536, "read_sweep"), 600, "r1");
    kb::Record b = ideal_row(ideal_point(65536, "read_chunks"), 520, "r1");
    a.shape = b.shape = "bytes=65536";  // the old rows
    kb::History h;
    h.add_text(csv({a, b}), "r.csv");
    h.finish();
    ASSERT_EQ(h.warnings().size(), 1u);
    EXPECT_EQ(h.warnings()[0].text(),
              "r.csv:3: the same key again in run r1 (first at r.csv:2); row skipped");
    EXPECT_EQ(h.keys().size(), 1u);
  }
}

// The night the shapes changed: the old key (`bytes=N`, in the previous run
// only) is inconclusive, "not in the newest run"; the kernels' new keys are
// new. The night after, the old key is no longer judged.
TEST(PointKeys, TheOldKeysAreMissingFromTheNewestRunForOneNight) {
  std::vector<kb::Record> rows;
  for (int i = 0; i < 11; ++i) {
    kb::Record old = ideal_row(ideal_point(65536, "read_sweep"), 600, "r" + std::to_string(i), i);
    old.shape = "bytes=65536";
    rows.push_back(old);
  }
  for (const char* k : {"read_sweep", "read_chunks"})
    rows.push_back(ideal_row(ideal_point(65536, k), 600, "r11", 11));
  auto gate = [](const std::vector<kb::Record>& r) {
    kb::History h;
    h.add_text(csv(r), "h.csv");
    h.finish();
    EXPECT_TRUE(h.warnings().empty());
    return kb::run_gate(h, {});
  };
  std::map<std::string, kb::GateKeyResult> by;
  for (const auto& k : gate(rows).keys) by.emplace(k.shape, k);
  ASSERT_EQ(by.size(), 3u);
  EXPECT_EQ(by.at("bytes=65536").status, kb::GateStatus::inconclusive);
  EXPECT_EQ(by.at("bytes=65536").why, "not in the newest run r11 (was in r10)");
  for (const char* s : {"bytes=65536;kernel=read_sweep", "bytes=65536;kernel=read_chunks"})
    EXPECT_NE(by.at(s).status, kb::GateStatus::fail) << s << ": " << by.at(s).why;
  for (const char* k : {"read_sweep", "read_chunks"})
    rows.push_back(ideal_row(ideal_point(65536, k), 600, "r12", 12));
  const auto next = gate(rows);
  for (const auto& k : next.keys) EXPECT_NE(k.shape, "bytes=65536") << k.why;
}

#ifdef KBENCH_EXE
// (experiment, shape, dtype, variant) of every point `kbench list --points
// ARGS` lists.
std::vector<std::vector<std::string>> listed(const std::string& args) {
  const auto r = kb::test::run_command(KBENCH_EXE, "list --points " + args);
  EXPECT_EQ(r.code, 0) << r.out;
  std::vector<std::vector<std::string>> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (line.back() == '\t') f.push_back("");  // an empty variant
    EXPECT_EQ(f.size(), 4u) << line;
    if (f.size() == 4) out.push_back(f);
  }
  return out;
}

// Every point of every experiment is one key of the gate: its rows, one
// per metric, differ from every other point's in (name, shape, dtype).
// Fails on the code before variant_in_shape: roofline_ideal's kernels
// shared `bytes=N` (51 points twice or more).
TEST(PointKeys, EveryPointOfARunIsAKeyOfItsOwn) {
  auto points = listed("");
  ASSERT_GT(points.size(), 50u);
  std::map<std::tuple<std::string, std::string, std::string>, std::string> seen;
  for (const auto& p : points) {
    const auto [it, fresh] = seen.emplace(std::make_tuple(p[0], p[1], p[2]), p[3]);
    EXPECT_TRUE(fresh) << p[0] << " [" << p[1] << "] " << p[2] << ": variants '" << it->second
                       << "' and '" << p[3] << "' are one key";
  }
}

// roofline_ideal's shapes name the kernel (after the bytes), and a run of
// them reads as one key per point, with no warning: what the 4x H100 run's
// rows did not. mlp_layer_norm_gelu's variants (gemv at one token,
// cuBLASLt at the others) never shared a shape: their shapes stay the
// seed's.
TEST(PointKeys, RooflineIdealShapesNameTheirKernel) {
  const auto points = listed("--filter '^roofline_ideal$'");
  ASSERT_EQ(points.size(), 60u);  // 6 kernels x 9 sizes + 2 chains x 3 sizes
  std::vector<kb::Record> rows;
  for (const auto& p : points) {
    const auto semi = p[1].find(';');
    ASSERT_NE(semi, std::string::npos) << p[1];
    EXPECT_EQ(p[1].substr(semi), ";kernel=" + p[3]) << p[1];
    kb::Point pt = ideal_point(std::stoll(p[1].substr(6, semi - 6)), p[3]);
    ASSERT_EQ(pt.shape.str(), p[1]);
    rows.push_back(ideal_row(pt, 1000, "r1"));
  }
  kb::History h;
  h.add_text(csv(rows), "one.csv");
  h.finish();
  EXPECT_TRUE(h.warnings().empty()) << h.warnings().front().text();
  EXPECT_EQ(h.keys().size(), points.size());

  for (const auto& p : listed("--filter '^mlp_layer_norm_gelu$'")) {
    EXPECT_EQ(p[1].rfind("tokens=", 0), 0u) << p[1];
    EXPECT_EQ(p[1].find(p[3]), std::string::npos) << p[1];
  }
}

// `kbench run --rerun` finds a suspect's point from its new shape (and its
// variant), and refuses the old one. A second, unknown suspect refuses the
// file before anything is measured: the error naming line 3, not 2, says
// line 2's point was found.
TEST(PointKeys, RerunFindsTheIdealKernelsPointFromItsShape) {
  const fs::path dir = temp_dir("rerun_ideal");
  const std::string head = "run_id,name,dtype,shape,variant,metric,arch,reason\n";
  const std::string tail =
      ",read_chunks;bound=launch,memory_bandwidth(GB/s)," + std::string(kH100) + ",a drop\n";
  const std::string unknown = "R1,gemv,int8,D=3,,,,\n";
  auto rerun = [&](const std::string& name, const std::string& text) {
    const fs::path s = write(dir / name, text);
    return kb::test::run_command(
        KBENCH_EXE, "run --rerun " + s.string() + " --csv " + (dir / "out.csv").string());
  };
  const auto found = rerun(
      "new.csv", head + "R1,roofline_ideal,int8,bytes=65536;kernel=read_chunks" + tail + unknown);
  EXPECT_EQ(found.code, 2) << found.out;
  EXPECT_TRUE(contains(found.out, "new.csv:3: experiment 'gemv' has no point")) << found.out;
  const auto old = rerun("old.csv", head + "R1,roofline_ideal,int8,bytes=65536" + tail + unknown);
  EXPECT_EQ(old.code, 2) << old.out;
  EXPECT_TRUE(
      contains(old.out, "old.csv:2: experiment 'roofline_ideal' has no point shape=bytes=65536 "))
      << old.out;
  EXPECT_FALSE(fs::exists(dir / "out.csv"));
}
#endif

}  // namespace
