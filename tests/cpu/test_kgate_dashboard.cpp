// kgate dashboard: each point's verdict is the gate's (the newest one is
// checked against run_gate itself), runs carry git_sha/driver/cuda, attempts
// become markers of their run, what is missing is said, markup stays inert,
// and the command writes a file or a folder and refuses bad usage.
#include <gtest/gtest.h>

#include <cmath>

#include "kgate_test_util.h"
#include "reports/dashboard_data.h"
#include "tests/support/gen_history.h"
#include "tools/kgate/dashboard.h"
#include "tools/kgate/gate.h"

namespace {

using namespace kgt;

struct Built {
  kb::History h;
  kb::DashboardData d;
};

std::unique_ptr<Built> build(const std::vector<std::string>& files, kb::DashboardOptions opt = {}) {
  auto b = std::make_unique<Built>();
  for (size_t i = 0; i < files.size(); ++i)
    b->h.add_text(files[i], "f" + std::to_string(i) + ".csv");
  b->h.finish();
  b->d = kb::build_dashboard(b->h, opt);
  return b;
}

// For every key, judge_series' verdict on the newest point must be the
// verdict run_gate gives: the dashboard's colours are the gate's.
void expect_newest_matches_gate(const std::vector<std::string>& files,
                                const kb::GateOptions& opt = {}) {
  kb::History h;
  for (size_t i = 0; i < files.size(); ++i) h.add_text(files[i], "f" + std::to_string(i));
  h.finish();
  kb::GateReport rep = kb::run_gate(h, opt);
  ASSERT_FALSE(rep.keys.empty());
  for (const auto& g : rep.keys) {
    if (g.rule == "missing") continue;
    bool found = false;
    for (uint32_t k = 0; k < h.keys().size(); ++k) {
      const kb::Key& key = h.keys()[k];
      if (key.name != g.name || key.arch != g.arch || key.shape != g.shape) continue;
      auto pts = kb::judge_series(kb::gate_context(h, opt), key, h.series(k));
      ASSERT_FALSE(pts.empty());
      EXPECT_EQ(pts.back().verdict, g.status) << kb::key_label(g) << ": " << g.why;
      found = true;
    }
    EXPECT_TRUE(found) << kb::key_label(g);
  }
}

TEST(KgateDashboard, NewestVerdictIsTheGates) {
  // Pass, a drop that fails, too little history, within the noise.
  expect_newest_matches_gate({csv(series("layer_norm", steady(30, 1000, 1001)))});
  expect_newest_matches_gate({csv(series("layer_norm", steady(30, 1000, 900)))});
  expect_newest_matches_gate({csv(series("layer_norm", steady(4, 1000, 900)))});
  std::vector<double> noisy;
  for (int i = 0; i < 40; ++i) noisy.push_back(1000 * (1 + 0.03 * ((i * 7) % 5 - 2)));
  noisy.push_back(950);
  expect_newest_matches_gate({csv(series("gemv", noisy))});
  // Below the row's own target; a throttled drop; a failed and a skipped row.
  auto t = series("layer_norm", steady(30, 1000, 1000));
  for (auto& r : t) r.target = 1200;
  expect_newest_matches_gate({csv(t)});
  auto th = series("layer_norm", steady(30, 1000, 850));
  th.back().status = "throttled";
  expect_newest_matches_gate({csv(th)});
  auto f = series("layer_norm", steady(30, 1000, 1000));
  f.back().status = "failed";
  f.back().actual.reset();
  expect_newest_matches_gate({csv(f)});
  auto s = series("layer_norm", steady(30, 1000, 1000));
  s.back().status = "skipped";
  s.back().actual.reset();
  expect_newest_matches_gate({csv(s)});
  // A relative target from a target file.
  kb::GateOptions opt;
  opt.targets.push_back(kb::parse_target_file(
      R"JSON({"gpu": "NVIDIA H100 80GB HBM3", "match": ["H100"],
          "peaks": {"hbm_gbps": 3350, "bf16_tflops": 989, "int8_tops": 1979},
          "targets": [{"name": "layer_norm", "metric": "memory_bandwidth(GB/s)",
                       "dtype": "bfloat16", "shape": "*", "roofline_fraction": 0.5}]})JSON",
      "h100.json"));
  auto rf = series("layer_norm", steady(30, 1000, 1000));
  for (auto& r : rf) r.roofline = 3000;
  expect_newest_matches_gate({csv(rf)}, opt);
}

TEST(KgateDashboard, EarlierPointsAreJudgedOnTheirOwnNight) {
  // A drop on night 30, back to normal afterwards: that night fails, the
  // nights around it pass; the baseline follows the median.
  std::vector<double> v = steady(30, 1000, 880);
  for (int i = 0; i < 5; ++i) v.push_back(1000);
  auto b = build({csv(series("layer_norm", v))});
  ASSERT_EQ(b->d.keys.size(), 1u);
  const auto& pts = b->d.keys[0].points;
  ASSERT_EQ(pts.size(), 36u);
  EXPECT_EQ(pts[30].verdict, kb::GateStatus::fail);
  EXPECT_EQ(pts[29].verdict, kb::GateStatus::pass);
  EXPECT_EQ(pts[35].verdict, kb::GateStatus::pass);
  EXPECT_EQ(pts[0].verdict, kb::GateStatus::inconclusive);  // no history yet
  EXPECT_NEAR(pts[30].baseline, 1000, 5);
  EXPECT_GE(pts[30].band, 0.03);                // never narrower than --min-gap
  EXPECT_NE(pts[0].baseline, pts[0].baseline);  // NaN: no earlier run
}

// Boards (docs/gate.md "Boards"): the MLP at D = 16384 on two H100 boards,
// B 3.4% below A. Runs r0, r1, ...; `boards[i]` names run i's board ("" =
// a schema v1 row).
const char* kBoardA = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
const char* kBoardB = "GPU-bbbbbbbb-1111-2222-3333-444444444444";

std::vector<kb::Record> on_boards(const std::vector<double>& values,
                                  const std::vector<const char*>& boards) {
  return mlp_rows_on_boards(values, boards);
}

// 14 nights on A at 800, then B at 3.4% less (as the real H100 boards),
// then `tail` on B.
std::vector<kb::Record> two_boards(size_t on_b, const std::vector<double>& tail = {}) {
  std::vector<double> v = nights(14, 800);
  for (double x : nights(on_b, 800 * (1 - 0.034))) v.push_back(x);
  v.insert(v.end(), tail.begin(), tail.end());
  std::vector<const char*> b(v.size(), kBoardB);
  std::fill(b.begin(), b.begin() + 14, kBoardA);
  return on_boards(v, b);
}

// Every night of `rows` (one key), judged by run_gate on the history up
// to that night, has the verdict and baseline its dashboard point shows.
void expect_every_night_matches_gate(const std::vector<kb::Record>& rows) {
  auto b = build({csv(rows)});
  ASSERT_EQ(b->d.keys.size(), 1u);
  const auto& pts = b->d.keys[0].points;
  ASSERT_EQ(pts.size(), rows.size());
  for (size_t n = 1; n <= rows.size(); ++n) {
    kb::History h;
    h.add_text(csv({rows.begin(), rows.begin() + n}), "f.csv");
    h.finish();
    const kb::GateReport rep = kb::run_gate(h, {});
    ASSERT_EQ(rep.keys.size(), 1u);
    const auto& g = rep.keys[0];
    EXPECT_EQ(pts[n - 1].verdict, g.status) << "night " << n - 1 << ": " << g.why;
    if (g.baseline) EXPECT_NEAR(pts[n - 1].baseline, *g.baseline, 1e-9) << "night " << n - 1;
  }
}

TEST(KgateDashboard, BoardSwitchWithinTheBoardsSpreadIsInconclusiveNotFail) {
  auto rows = two_boards(10);
  auto b = build({csv(rows)});
  const auto& pts = b->d.keys.at(0).points;
  ASSERT_EQ(pts.size(), 24u);
  // The first night on B: 3.4% below A, within --board-gap 4%.
  EXPECT_EQ(pts[14].verdict, kb::GateStatus::inconclusive);
  EXPECT_NEAR(pts[14].baseline, 800, 1);
  for (size_t i = 14; i < 24; ++i) EXPECT_NE(pts[i].verdict, kb::GateStatus::fail) << i;
  for (size_t i = 10; i < 14; ++i) EXPECT_EQ(pts[i].verdict, kb::GateStatus::pass) << i;
  expect_every_night_matches_gate(rows);

  // Pooled, as without UUIDs, the same nights fail.
  auto plain = build({csv(without_boards(rows))});
  EXPECT_EQ(plain->d.keys.at(0).points[14].verdict, kb::GateStatus::fail);

  // Boards: the gate's labels, one index per point.
  ASSERT_EQ(b->d.boards.size(), 2u);
  EXPECT_EQ(b->d.boards[0].uuid, "GPU-aaaaaaaa\u2026");
  EXPECT_EQ(b->d.boards[1].uuid, "GPU-bbbbbbbb\u2026");
  EXPECT_EQ(pts[13].board, 0);
  EXPECT_EQ(pts[14].board, 1);
  const std::string html = kb::dashboard_html(b->d);
  EXPECT_TRUE(contains(html, "\"boards\":[[\"GPU-aaaaaaaa\u2026\","));
  EXPECT_TRUE(contains(html, "\"bd\":[[0,0],[14,1]]"));
}

TEST(KgateDashboard, ADropOnTheNewBoardFails) {
  // The first night on B 10% below A: beyond what boards differ by.
  auto first = two_boards(0, {720});
  auto a = build({csv(first)});
  EXPECT_EQ(a->d.keys.at(0).points.back().verdict, kb::GateStatus::fail);
  expect_every_night_matches_gate(first);

  // B with --min-history runs of its own, then 10% below them: judged
  // against B only (its baseline is B's, not the pool's).
  auto later = two_boards(12, {772.8 * 0.9});
  auto b = build({csv(later)});
  const auto& pts = b->d.keys.at(0).points;
  EXPECT_EQ(pts.back().verdict, kb::GateStatus::fail);
  EXPECT_NEAR(pts.back().baseline, 772.8, 1);
  EXPECT_EQ(pts[pts.size() - 2].verdict, kb::GateStatus::pass);
  EXPECT_NEAR(pts[pts.size() - 2].baseline, 772.8, 1);  // pooled it would be A's 800
  expect_every_night_matches_gate(later);
}

TEST(KgateDashboard, OneBoardOrNoUuidGivesTheSamePoints) {
  for (const auto& rows : {two_boards(10), two_boards(12, {772.8 * 0.9})}) {
    auto plain = without_boards(rows);
    auto one = plain;
    for (auto& r : one) {
      r.gpu_uuid = kBoardA;
      r.gpu_index = "0";
      r.host = "runner";
    }
    auto p = build({csv(plain)}), o = build({csv(one)});
    const auto &pp = p->d.keys.at(0).points, &op = o->d.keys.at(0).points;
    ASSERT_EQ(pp.size(), op.size());
    for (size_t i = 0; i < pp.size(); ++i) {
      EXPECT_EQ(pp[i].verdict, op[i].verdict) << i;
      EXPECT_EQ(pp[i].baseline == pp[i].baseline, op[i].baseline == op[i].baseline) << i;
      if (pp[i].baseline == pp[i].baseline) {
        EXPECT_EQ(pp[i].baseline, op[i].baseline) << i;
        EXPECT_EQ(pp[i].band, op[i].band) << i;
      }
      EXPECT_EQ(pp[i].board, -1);
      EXPECT_EQ(op[i].board, 0);
    }
    EXPECT_TRUE(p->d.boards.empty());
    EXPECT_EQ(o->d.boards.size(), 1u);
    EXPECT_FALSE(contains(kb::dashboard_html(p->d), "\"bd\":"));
  }
}

// The recorded H100 runs on board 3ed4dcd2 alone (device "cuda") and on all
// four boards (cuda:0..3): one key per key of the gate, one GPU column, each
// run's boards by UUID, and the four-board run's rows a marker per board.
TEST(KgateDashboard, OneBoardIsOneSeriesAcrossDeviceLabels) {
  auto b = std::make_unique<Built>();
  const std::string d = std::string(KBENCH_SOURCE_DIR) + "/tests/data/4xh100-device-";
  b->h.add_file(d + "all-3ed4dcd2-2026-11-27.csv");
  b->h.add_file(d + "0-3ed4dcd2-2026-11-27.csv");
  b->h.finish();
  b->d = kb::build_dashboard(b->h, {});
  EXPECT_EQ(b->d.keys.size(), 41u);
  ASSERT_EQ(b->d.gpus.size(), 1u);
  EXPECT_EQ(b->d.gpus[0].device, "cuda");
  ASSERT_EQ(b->d.boards.size(), 4u);
  ASSERT_EQ(b->d.runs.size(), 2u);
  EXPECT_EQ(b->d.runs[0].boards.size(), 4u);
  EXPECT_EQ(b->d.runs[0].rows[0] + b->d.runs[0].rows[1], 164u);
  ASSERT_EQ(b->d.runs[1].boards.size(), 1u);
  EXPECT_EQ(b->d.runs[1].boards[0], b->d.runs[0].boards[0]) << "cuda and cuda:0: one board";
  EXPECT_TRUE(b->d.runs[1].gated && !b->d.runs[0].gated);
  for (const auto& k : b->d.keys) {
    ASSERT_EQ(k.points.size(), 2u) << k.name;
    EXPECT_EQ(k.points[0].board, -1);  // several boards
    EXPECT_EQ(k.points[1].board, static_cast<int32_t>(b->d.runs[1].boards[0]));
    size_t gpu_rows = 0;
    for (const auto& a : k.attempts) gpu_rows += a.board >= 0 && a.point == 0;
    EXPECT_EQ(gpu_rows, 4u) << k.name;
  }
}

TEST(KgateDashboard, RunsCarryCommitDriverCudaAndCounts) {
  auto rows = series("gemv", steady(12, 2000, 2000));
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].git_sha = i < 6 ? "aaa111" : "bbb222";
    rows[i].driver = "580.159.04";
    rows[i].cuda = "13.0";
  }
  auto more = series("layer_norm", steady(12, 1000, 1000));
  more.back().status = "failed";
  more.back().actual.reset();
  rows.insert(rows.end(), more.begin(), more.end());
  auto b = build({csv(rows)});
  ASSERT_EQ(b->d.runs.size(), 13u);
  const auto& last = b->d.runs.back();
  EXPECT_EQ(last.git_sha, "bbb222");
  EXPECT_EQ(b->d.runs.front().git_sha, "aaa111");
  EXPECT_EQ(last.driver, "580.159.04");
  EXPECT_EQ(last.cuda, "13.0");
  EXPECT_TRUE(last.has_time);
  EXPECT_TRUE(last.gated);
  EXPECT_FALSE(b->d.runs.front().gated);
  EXPECT_EQ(last.rows[0], 1u);  // ok
  EXPECT_EQ(last.rows[4], 1u);  // failed
  EXPECT_EQ(last.verdicts[static_cast<int>(kb::GateStatus::fail)], 1u);
  EXPECT_EQ(b->d.gpus.size(), 1u);
  ASSERT_EQ(last.gpus.size(), 1u);
}

TEST(KgateDashboard, RepeatedRowIsAMarkerOfItsRun) {
  auto rows = series("gemv", steady(12, 2000, 1900));
  auto plain = build({csv(rows)});
  EXPECT_TRUE(plain->d.keys[0].attempts.empty());
  // The newest run's row again (the same key twice in one attempt of a run).
  kb::Record again = rows.back();
  again.actual = 1995;
  rows.push_back(again);
  auto b = build({csv(rows)});
  ASSERT_EQ(b->d.keys.size(), 1u);
  const auto& k = b->d.keys[0];
  ASSERT_EQ(k.points.size(), 13u);
  ASSERT_EQ(k.attempts.size(), 1u);
  EXPECT_EQ(k.attempts[0].point, 12u);
  EXPECT_EQ(k.attempts[0].attempt, 1);
  EXPECT_EQ(k.attempts[0].value, 1995);
  EXPECT_EQ(b->d.runs.back().rows[0], 2u);  // both rows of the run counted
}

// The nightly's re-measurements (`<run>/<N>` rows of the suspects): a night
// the re-measurements cleared reads as the gate judged it, one point per
// night whose value is the re-measurements' median, the re-measurements
// drawn as markers of that night, and the next nights' baseline built from
// that value, not from the low first row nor from each attempt as a night.
TEST(KgateDashboard, ReMeasuredNightIsOnePointJudgedAsTheGateJudgedIt) {
  std::vector<kb::Record> rows = series("gemv", nights(14, 2000));
  kb::Record low = row("gemv", 1880, "r14");  // -6%: a suspect
  low.timestamp = "2026-01-01T00:14:00Z";
  rows.push_back(low);
  for (int a = 2; a <= 4; ++a) {
    kb::Record again = low;
    again.run_id = "r14/" + std::to_string(a);
    again.actual = 2000 + (a - 3);  // 1999, 2000, 2001
    rows.push_back(again);
  }
  for (int n = 15; n < 18; ++n) {
    kb::Record r = row("gemv", 2000, "r" + std::to_string(n));
    char ts[32];
    std::snprintf(ts, sizeof ts, "2026-01-01T00:%02d:00Z", n);
    r.timestamp = ts;
    rows.push_back(r);
  }
  auto b = build({csv(rows)});
  ASSERT_EQ(b->d.keys.size(), 1u);
  const auto& k = b->d.keys[0];
  ASSERT_EQ(k.points.size(), 18u);  // one per night, not per row
  EXPECT_EQ(k.points[14].verdict, kb::GateStatus::pass);
  EXPECT_DOUBLE_EQ(k.points[14].value, 2000);  // the re-measurements' median
  ASSERT_EQ(k.attempts.size(), 3u);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(k.attempts[a].point, 14u);
    EXPECT_EQ(k.attempts[a].attempt, a + 2);
    EXPECT_DOUBLE_EQ(k.attempts[a].value, 1999 + a);
  }
  // Every night as run_gate judges it on the history up to that night.
  const std::vector<size_t> rows_until = {1,  2,  3,  4,  5,  6,  7,  8,  9,
                                          10, 11, 12, 13, 14, 18, 19, 20, 21};
  for (size_t n = 0; n < rows_until.size(); ++n) {
    kb::History h;
    h.add_text(csv({rows.begin(), rows.begin() + static_cast<long>(rows_until[n])}), "f.csv");
    h.finish();
    const kb::GateReport rep = kb::run_gate(h, {});
    ASSERT_EQ(rep.keys.size(), 1u);
    const auto& g = rep.keys[0];
    EXPECT_EQ(k.points[n].verdict, g.status) << "night " << n << ": " << g.why;
    if (g.baseline) EXPECT_NEAR(k.points[n].baseline, *g.baseline, 1e-9) << "night " << n;
  }
  // Without the re-measurements the low night fails, as the gate's first
  // stage would have it before measuring again.
  auto first = build({csv({rows.begin(), rows.begin() + 15})});
  EXPECT_EQ(first->d.keys[0].points.back().verdict, kb::GateStatus::fail);
}

// Each point's error bar: its run's rows' min_us..max_us in the metric (a
// rate is highest at min_us, a time at max_us), over its re-measurements;
// none where the rows have no times (the page then draws noise_rel).
TEST(KgateDashboard, ErrorBarIsTheRunsMinMaxInTheMetric) {
  auto timed = [](kb::Record r, double min_us, double max_us) {
    r.median_us = 10;
    r.min_us = min_us;
    r.max_us = max_us;
    return r;
  };
  std::vector<kb::Record> rows = series("gemv", nights(3, 2000));
  rows[0] = timed(rows[0], 8, 12.5);
  kb::Record again = timed(rows[2], 9, 11);
  again.run_id = "r2/2";
  again.actual = 2200;
  rows.push_back(again);
  auto b = build({csv(rows)});
  const auto& p = b->d.keys[0].points;
  EXPECT_DOUBLE_EQ(p[0].lo, p[0].value * 10 / 12.5);  // GB/s at max_us
  EXPECT_DOUBLE_EQ(p[0].hi, p[0].value * 10 / 8);
  EXPECT_TRUE(std::isnan(p[1].lo) && std::isnan(p[1].hi));  // no times: no bar of its own
  EXPECT_DOUBLE_EQ(p[2].lo, 2200 * 10 / 11.0);  // the re-measurement's row alone has times
  EXPECT_DOUBLE_EQ(p[2].hi, 2200 * 10 / 9.0);
  kb::Record us = timed(row("launch", 5, "r0"), 8, 12.5);
  us.metric = "launch(us)";
  const auto& t = build({csv({us})})->d.keys[0].points[0];
  EXPECT_DOUBLE_EQ(t.lo, 5 * 0.8);  // a time at min_us
  EXPECT_DOUBLE_EQ(t.hi, 5 * 1.25);
}

TEST(KgateDashboard, SaysWhatIsMissing) {
  // One run, no target, no git_sha; and a gpt_fast file without arch or run ids.
  auto one = build({csv({row("gemv", 2000, "r1")})});
  auto has = [&](const kb::DashboardData& d, const std::string& what) {
    for (const auto& n : d.notes)
      if (contains(n, what)) return true;
    return false;
  };
  EXPECT_TRUE(has(one->d, "One run only"));
  EXPECT_TRUE(has(one->d, "no git_sha"));
  EXPECT_TRUE(has(one->d, "no target"));
  EXPECT_TRUE(has(one->d, "no timestamp"));
  EXPECT_TRUE(has(one->d, "No target files given"));
  auto gf =
      build({"name,metric,target,actual,dtype,device\n"
             "layer_norm,memory_bandwidth(GB/s),950,1010,bfloat16,cuda\n"
             "layer_norm,memory_bandwidth(GB/s),950,1003,bfloat16,cuda\n"});
  EXPECT_TRUE(has(gf->d, "without run ids"));
  EXPECT_TRUE(has(gf->d, "without arch"));
  EXPECT_TRUE(has(gf->d, "no roofline"));
  EXPECT_FALSE(has(gf->d, "has no target") || has(gf->d, "have no target"));  // rows carry one
  EXPECT_EQ(gf->d.runs.size(), 2u);
  EXPECT_EQ(gf->d.keys[0].points.size(), 2u);
}

TEST(KgateDashboard, MarkupStaysInert) {
  EXPECT_EQ(kb::json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(kb::json_string("</script><b>&"), "\"\\u003c/script\\u003e\\u003cb\\u003e\\u0026\"");
  EXPECT_EQ(kb::json_string("x\x01y\xff"), "\"x\\u0001y\xef\xbf\xbd\"");
  kb::Record r = row("<img src=x onerror=alert(1)>", 1000, "r1");
  r.shape = "</script><script>alert(2)</script>";
  auto b = build({csv({r})});
  b->d.title = "<i>title</i>";
  std::string html = kb::dashboard_html(b->d);
  EXPECT_FALSE(contains(html, "<img")) << "a name became an element";
  EXPECT_FALSE(contains(html, "</script><script>alert"));
  EXPECT_FALSE(contains(html, "<i>title"));
  EXPECT_TRUE(contains(html, "&lt;i&gt;title"));
  // Exactly the page's own two scripts.
  size_t scripts = 0;
  for (size_t p = html.find("<script"); p != std::string::npos; p = html.find("<script", p + 1))
    ++scripts;
  EXPECT_EQ(scripts, 2u);
}

TEST(KgateDashboard, IsoTimes) {
  int64_t t = 0;
  ASSERT_TRUE(kb::parse_iso_time("1970-01-02T00:00:00Z", t));
  EXPECT_EQ(t, 86400);
  ASSERT_TRUE(kb::parse_iso_time("2026-11-24T09:28:03Z", t));
  EXPECT_EQ(t, 1795512483);
  ASSERT_TRUE(kb::parse_iso_time("2024-02-29T00:00:00Z", t));
  EXPECT_EQ(t, 1709164800);
  for (const char* bad : {"", "2026-11-24", "yesterday", "2026-13-01T00:00:00Z",
                          "2026-11-24T09:28:03Zjunk", "2026-11-24T09:28:03+0100"})
    EXPECT_FALSE(kb::parse_iso_time(bad, t)) << bad;
}

#ifdef KBENCH_KGATE_EXE
TEST(KgateDashboard, CommandWritesFileOrFolder) {
  fs::path d = temp_dir("dashboard_cli");
  auto rows = series("gemv", steady(20, 2000, 2000));
  for (auto& r : rows) r.git_sha = "abc";
  fs::path in = write(d / "r.csv", csv(rows));
  Result a = kgate("dashboard --results " + in.string() + " --out " + (d / "page.html").string());
  EXPECT_EQ(a.code, 0) << a.out;
  std::string page = slurp(d / "page.html");
  EXPECT_TRUE(contains(page, "id=\"kb-data\""));
  // Nothing fetched (the one URL is the SVG namespace's name, never loaded).
  for (const char* fetch :
       {"src=", "href=\"http", "url(http", "@import", "fetch(", "XMLHttpRequest"})
    EXPECT_FALSE(contains(page, fetch)) << fetch;
  Result b = kgate("dashboard --results " + in.string() + " --out " + (d / "site" / "x").string() +
                   " --title Nightly");
  EXPECT_EQ(b.code, 0) << b.out;
  EXPECT_TRUE(contains(slurp(d / "site" / "x" / "index.html"), "<title>Nightly"));
  for (const char* bad : {"dashboard", "dashboard --results", "dashboard --out x",
                          "dashboard --results r.csv", "dashboard --results r.csv --out"}) {
    Result r = kgate(bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
  }
  Result missing = kgate("dashboard --results " + (d / "nope.csv").string() + " --out " +
                         (d / "n.html").string());
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.out, "nope.csv"));
}

TEST(KgateDashboard, GenHistoryFromRealRunIsLabelledSynthetic) {
  fs::path d = temp_dir("gen_from");
  auto rows = series("gemv", {2000});
  rows[0].roofline = 3000;
  rows[0].timestamp = "2026-11-24T09:00:00Z";
  fs::path in = write(d / "real.csv", csv(rows));
  kb::GenOptions opt;
  opt.from = {in.string()};
  opt.runs = 30;
  opt.attempts = true;
  ASSERT_TRUE(kb::write_history_file((d / "syn.csv").string(), opt));
  std::string syn = slurp(d / "syn.csv");
  EXPECT_TRUE(contains(syn, "synthetic-h100-80gb-hbm3-30,2026-11-23T09:00:00Z"));
  EXPECT_TRUE(contains(syn, ",synth"));
  kb::History h;
  h.add_file((d / "syn.csv").string());
  h.finish();
  EXPECT_EQ(h.runs().size(), 30u);
  EXPECT_EQ(h.keys().size(), 1u);
}
#endif

}  // namespace
