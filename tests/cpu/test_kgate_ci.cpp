// kgate as a CI engineer meets it: `--opt=value`, usage errors with the
// usage line and a hint for a file given without its flag, warnings printed
// before the error that refers to them, the gated run's context and each
// failing key's last good run in the output, and `kgate gpt-fast`.
#include <gtest/gtest.h>

#include "kgate_test_util.h"

#ifdef KBENCH_KGATE_EXE

namespace {

using namespace kgt;

// 30 nights of one key on commits c0..c29 (driver 580), then a bad one on
// commit cbad.
std::vector<kb::Record> nights(double last, const std::string& last_status = "ok") {
  auto rows = series("gemv", steady(30, 1000, last));
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].git_sha = i + 1 == rows.size() ? "cbad00000000" : "c" + std::to_string(i);
    rows[i].driver = "580.159.04";
    rows[i].cuda = "13.0";
  }
  rows.back().status = last_status;
  if (last_status == "failed") {
    rows.back().actual.reset();
    rows.back().message = "worker died of signal 11";
  }
  return rows;
}

TEST(KgateCi, OptEqualsValueIsAccepted) {
  fs::path d = temp_dir("ci_equals");
  fs::path f = write(d / "h.csv", csv(nights(850)));
  Result r = kgate("check --results=" + f.string() +
                   " --window=30 --min-gap=0.05 --junit=" + (d / "j.xml").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "window 30 runs, min gap 5.0%")) << r.out;
  EXPECT_TRUE(fs::exists(d / "j.xml"));
  Result s = kgate("check --results " + f.string() + " --strict=yes");
  EXPECT_EQ(s.code, 2) << s.out;
  EXPECT_TRUE(contains(s.out, "--strict takes no value")) << s.out;
}

TEST(KgateCi, UsageErrorsShowTheUsageLine) {
  for (const char* bad : {"check", "check --bogus", "check --window ten --results x.csv",
                          "compare a.csv", "gpt-fast --results x.csv", "frobnicate"}) {
    Result r = kgate(bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "\nusage: kgate ")) << bad << "\n" << r.out;
  }
  EXPECT_TRUE(contains(kgate("check").out, "usage: kgate check --results FILE..."));
  EXPECT_TRUE(contains(kgate("compare a.csv").out, "usage: kgate compare BASE.csv NEW.csv"));
}

TEST(KgateCi, AFileWithoutItsFlagGetsAHint) {
  Result r = kgate("check run14.csv");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "unexpected argument 'run14.csv': files follow --results (kgate "
                       "check --results run14.csv ...)"))
      << r.out;
  Result top = kgate("run14.csv");
  EXPECT_EQ(top.code, 2) << top.out;
  EXPECT_TRUE(contains(top.out, "kgate check --results run14.csv")) << top.out;
}

// A file whose every row is skipped is refused (exit 2) "see the warnings
// above": the warnings are above.
TEST(KgateCi, WarningsComeBeforeTheErrorThatCitesThem) {
  fs::path d = temp_dir("ci_warnings");
  fs::path f = write(d / "gpt_fast_benchmark.csv",
                     "name,metric,target,actual,dtype,device,arch,is_model\n"
                     "gemv,memory_bandwidth(GB/s),870,abc,int8,cuda,NVIDIA H100 80GB HBM3,False\n"
                     "gemv,speed,870,1.0,int8,cuda,NVIDIA H100 80GB HBM3,False\n");
  Result r = kgate("check --results " + f.string());
  EXPECT_EQ(r.code, 2) << r.out;
  size_t warn = r.out.find("warning: " + f.string() + ":2: actual 'abc' is not a number");
  size_t warn2 = r.out.find("unknown metric 'speed'");
  size_t err = r.out.find("see the warnings above");
  ASSERT_NE(warn, std::string::npos) << r.out;
  ASSERT_NE(warn2, std::string::npos) << r.out;
  ASSERT_NE(err, std::string::npos) << r.out;
  EXPECT_LT(warn, err);
  EXPECT_LT(warn2, err);
}

// The output names the gated run's commit, driver and CUDA, the host kgate
// ran on, and for the failing key its last good run.
TEST(KgateCi, ReportsNameTheRunAndTheLastGoodRun) {
  fs::path d = temp_dir("ci_context");
  fs::path f = write(d / "h.csv", csv(nights(850)));
  Result r = kgate("check --results " + f.string() + " --markdown " + (d / "s.md").string() +
                   " --junit " + (d / "j.xml").string() + " --html " + (d / "r.html").string());
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string run =
      "run r30 (2026-01-01T00:30:00Z; commit cbad00000000, driver 580.159.04, CUDA 13.0)";
  const std::string good =
      "last good: run r29 (2026-01-01T00:29:00Z; commit c29, driver 580.159.04, CUDA 13.0)";
  EXPECT_TRUE(contains(r.out, "gated " + std::string(kH100) + ": " + run)) << r.out;
  EXPECT_TRUE(contains(r.out, "\n    " + good)) << r.out;
  EXPECT_TRUE(contains(r.out, "kgate ran on ")) << r.out;
  for (const char* out : {"s.md", "j.xml", "r.html"}) {
    std::string t = slurp(d / out);
    EXPECT_TRUE(contains(t, run)) << out << "\n" << t;
    EXPECT_TRUE(contains(t, good)) << out << "\n" << t;
  }
  std::string j = slurp(d / "j.xml");
  EXPECT_TRUE(contains(j, "timestamp=\"2026-01-01T00:30:00\" hostname=\"")) << j;
  EXPECT_TRUE(contains(j, "<property name=\"git_sha\" value=\"cbad00000000\"/>")) << j;

  // A crash: an error in JUnit, with the last good run.
  fs::path c = write(d / "crash.csv", csv(nights(0, "failed")));
  Result cr = kgate("check --results " + c.string() + " --junit " + (d / "c.xml").string());
  EXPECT_EQ(cr.code, 1) << cr.out;
  std::string cj = slurp(d / "c.xml");
  EXPECT_TRUE(
      contains(cj, "<error message=\"the run failed: worker died of signal 11; last good: run r29"))
      << cj;
}

// A throttled newest row that passes is still called throttled.
TEST(KgateCi, ThrottledNewestRowIsCalledThrottled) {
  fs::path d = temp_dir("ci_throttled");
  auto rows = nights(1001);
  rows.back().status = "throttled";
  rows.back().message = "SM clock 1100 MHz, under 75% of max";
  fs::path f = write(d / "h.csv", csv(rows));
  Result r = kgate("check --results " + f.string() + " --markdown " + (d / "s.md").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(
      contains(r.out, "\nthrottled gemv [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ " +
                          std::string(kH100) + ": 1001: the run was throttled"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "(1 key; 1 throttled)")) << r.out;
  EXPECT_TRUE(contains(slurp(d / "s.md"), "| pass (throttled) | gemv")) << slurp(d / "s.md");
}

// The first night of a history: one line says how much history there is;
// a key that meets its target is counted so.
TEST(KgateCi, FirstNightIsOneLine) {
  fs::path d = temp_dir("ci_first");
  std::vector<kb::Record> rows;
  for (const char* n : {"gemv", "layer_norm", "gather_gemv"}) rows.push_back(row(n, 1000, "r0"));
  rows[0].target = 950;
  fs::path f = write(d / "h.csv", csv(rows));
  Result r = kgate("check --results " + f.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "3 keys have too little history for the history rule (0 earlier "
                       "runs each; it needs 10): judged against their targets only: 1 meets "
                       "its target, 2 have none"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "only 0 earlier runs")) << r.out;
  EXPECT_TRUE(contains(
      r.out,
      "PASS: 0 regressions, 0 inconclusive, 0 passed, 3 new (1 on target), 0 skipped (3 keys)"))
      << r.out;
}

// gpt_fast's rows: its names, metrics and dtypes, one row per key (the
// seed-mean rows and the model rows), targets filled; nothing else.
TEST(KgateCi, GptFastExportWritesExactlyItsRows) {
  fs::path d = temp_dir("ci_gpt_fast");
  std::vector<kb::Record> rows;
  auto add = [&](const std::string& name, const std::string& metric, const std::string& dtype,
                 const std::string& shape, double v, std::optional<double> target, bool model) {
    kb::Record r = row(name, v, "night2");
    r.metric = metric;
    r.dtype = dtype;
    r.shape = shape;
    r.target = target;
    r.is_model = model;
    r.roofline = 3000;
    rows.push_back(r);
  };
  // An older run: not exported.
  add("gemv", "memory_bandwidth(GB/s)", "int8", "mean", 1, 870, false);
  rows.back().run_id = "night1";
  add("gemv", "memory_bandwidth(GB/s)", "int8", "D=1024", 1500, {}, false);  // a shape row
  add("gemv", "memory_bandwidth(GB/s)", "int8", "mean", 1913.25, {}, false);
  add("gemv", "memory_bandwidth(GB/s)", "fp8_e4m3", "mean", 2500, {}, false);  // not gpt_fast's
  add("gemv", "latency(us)", "int8", "mean", 12, {}, false);                   // not gpt_fast's
  add("Llama-2-7b-chat-hf", "token_per_sec", "bfloat16", "BS=1;prompt=6;new_tokens=200", 206.1, 200,
      true);
  add("Llama-2-7b-chat-hf", "token_per_sec", "bfloat16", "BS=4;prompt=6;new_tokens=200", 700, 650,
      true);
  add("Llama-2-7b-chat-hf", "latency(us)", "bfloat16", "BS=1;prompt=6;new_tokens=200", 4851, {},
      true);
  rows.push_back(rows.back());  // a failed model row: left out with a note
  rows.back().metric = "compilation_time(s)";
  rows.back().status = "failed";
  rows.back().actual.reset();
  rows.back().message = "out of memory";
  fs::path f = write(d / "h.csv", csv(rows));
  fs::path t = d / "targets";
  fs::create_directories(t);
  write(t / "h100.json", R"J({"gpu": "NVIDIA H100 80GB HBM3", "peaks": {"hbm_gbps": 3352},
    "targets": [{"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "int8",
                 "shape": "mean", "roofline_fraction": 0.5}]})J");
  Result r = kgate("gpt-fast --results " + f.string() + " --targets " + t.string() + " --csv " +
                   (d / "g.csv").string() + " --json=" + (d / "g.json").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(d / "g.csv"),
            "name,metric,target,actual,dtype,device,arch,is_model\n"
            "Llama-2-7b-chat-hf,token_per_sec,200,206.1,bfloat16,cuda,NVIDIA H100 80GB HBM3,True\n"
            "gemv,memory_bandwidth(GB/s),1500,1913.25,int8,cuda,NVIDIA H100 80GB HBM3,False\n");
  EXPECT_EQ(
      slurp(d / "g.json"),
      R"J({"benchmark":{"name":"PyTorch gpt-fast benchmark","mode":"inference","dtype":"bfloat16","extra_info":{"device":"cuda","arch":"NVIDIA H100 80GB HBM3"}},"model":{"name":"Llama-2-7b-chat-hf","type":"OSS model","origins":["pytorch"]},"metric":{"name":"token_per_sec","benchmark_values":[206.1],"target_value":200.0}}
{"benchmark":{"name":"PyTorch gpt-fast benchmark","mode":"inference","dtype":"int8","extra_info":{"device":"cuda","arch":"NVIDIA H100 80GB HBM3"}},"model":{"name":"gemv","type":"micro-benchmark","origins":["pytorch"]},"metric":{"name":"memory_bandwidth(GB/s)","benchmark_values":[1913.25],"target_value":1500.0}}
)J");
  EXPECT_TRUE(contains(r.out,
                       "Llama-2-7b-chat-hf compilation_time(s) bfloat16 @ NVIDIA H100 80GB HBM3: "
                       "left out (status failed: out of memory in run night2)"))
      << r.out;
  // The export reads back as a gpt_fast file.
  Result back = kgate("check --results " + (d / "g.csv").string());
  EXPECT_EQ(back.code, 0) << back.out;
  EXPECT_FALSE(contains(back.out, "warning")) << back.out;
  // No gpt_fast row at all: exit 2.
  fs::path none = write(d / "none.csv", csv({row("layer_norm", 1000, "x")}));
  Result n = kgate("gpt-fast --results " + none.string() + " --csv " + (d / "n.csv").string());
  EXPECT_EQ(n.code, 2) << n.out;
}

}  // namespace

#endif

#ifdef KBENCH_KGATE_EXE
namespace {

using namespace kgt;

// Re-measurements of run `run` (attempts 2..), on a commit and driver of
// their own, timed after the run.
std::vector<kb::Record> remeasured(const std::string& run, const std::vector<double>& values) {
  std::vector<kb::Record> out;
  for (size_t i = 0; i < values.size(); ++i) {
    kb::Record r = row("gemv", values[i], run + "/" + std::to_string(i + 2));
    r.timestamp = "2026-01-02T00:00:0" + std::to_string(i) + "Z";
    r.git_sha = "crerun000000";
    r.driver = "999.1";
    r.cuda = "13.1";
    out.push_back(r);
  }
  return out;
}

// The gated run's context is its own (attempt 1's), even where its
// re-measurements come first in the file; a confirmed drop names the last
// good run, and an earlier run whose first attempt was low but whose
// re-measurements were fine is good (at their median).
TEST(KgateCi, AttemptsKeepTheRunsContextAndTheirLastGoodRun) {
  fs::path d = temp_dir("ci_attempts");
  auto base = nights(850);
  base[29].actual = 900;  // r29: a transient, measured away below
  auto rows = remeasured("r30", {851, 849, 850, 852});
  rows.insert(rows.end(), base.begin(), base.end());
  auto r29 = remeasured("r29", {1000, 1002});
  rows.insert(rows.end(), r29.begin(), r29.end());
  fs::path f = write(d / "h.csv", csv(rows));
  Result r = kgate("check --results " + f.string() + " --junit " + (d / "j.xml").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "run r30 (2026-01-01T00:30:00Z; commit cbad00000000, driver "
                       "580.159.04, CUDA 13.0)"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "crerun")) << r.out;
  EXPECT_TRUE(contains(r.out, "note gemv")) << r.out;
  EXPECT_TRUE(contains(r.out, "re-measured: median of 4 re-measurement(s)")) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "\n    last good: run r29 (2026-01-01T00:29:00Z; commit c29, driver "
                       "580.159.04, CUDA 13.0): 1001"))
      << r.out;
  std::string j = slurp(d / "j.xml");
  EXPECT_TRUE(contains(j, "<property name=\"git_sha\" value=\"cbad00000000\"/>")) << j;
  EXPECT_TRUE(contains(j, "<system-out>note: re-measured: median of 4")) << j;
}

// A throttled pass with a note: both said, in the one <system-out>.
TEST(KgateCi, AThrottledPassWithANoteSaysBoth) {
  fs::path d = temp_dir("ci_throttled_note");
  auto rows = nights(1000);
  rows.back().status = "throttled";
  rows.back().variant = "bound=memory;inject=5%";
  fs::path f = write(d / "h.csv", csv(rows));
  Result r = kgate("check --results " + f.string() + " --junit " + (d / "j.xml").string() +
                   " --markdown " + (d / "s.md").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "throttled gemv")) << r.out;
  EXPECT_TRUE(contains(r.out, "note gemv")) << r.out;
  EXPECT_TRUE(contains(r.out, "injected slowdown (inject=5%)")) << r.out;
  std::string j = slurp(d / "j.xml");
  EXPECT_TRUE(contains(j,
                       "<system-out>throttled: the SM clock was low during the run; the value "
                       "1000 may be low\nnote: injected slowdown (inject=5%)"))
      << j;
  std::string md = slurp(d / "s.md");
  EXPECT_TRUE(contains(md, "| pass (throttled) | gemv")) << md;
  EXPECT_TRUE(contains(md, "Notes:")) << md;
}

// The commands main added take the CI conveniences too: `--opt=value`,
// the usage line, and a hint for a file without its flag.
TEST(KgateCi, DashboardAndNoiseTakeTheSameConveniences) {
  fs::path d = temp_dir("ci_dashboard_noise");
  fs::path f = write(d / "h.csv", csv(nights(1000)));
  Result db = kgate("dashboard --results=" + f.string() + " --out=" + (d / "site").string());
  EXPECT_EQ(db.code, 0) << db.out;
  EXPECT_TRUE(fs::exists(d / "site/index.html"));
  Result n = kgate("noise --results=" + f.string());
  EXPECT_EQ(n.code, 0) << n.out;
  Result bad = kgate("dashboard h.csv");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_TRUE(contains(bad.out, "files follow --results")) << bad.out;
  EXPECT_TRUE(contains(bad.out, "\nusage: kgate dashboard --results FILE...")) << bad.out;
  Result nb = kgate("noise --bogus");
  EXPECT_EQ(nb.code, 2) << nb.out;
  EXPECT_TRUE(contains(nb.out, "\nusage: kgate noise --results FILE...")) << nb.out;
  Result ds = kgate("dashboard --results " + f.string() + " --out x --strict=1");
  EXPECT_EQ(ds.code, 2) << ds.out;
  EXPECT_TRUE(contains(ds.out, "--strict takes no value")) << ds.out;
}

}  // namespace
#endif

#ifdef KBENCH_KGATE_EXE
namespace {

using namespace kgt;

// gpt-fast writes a re-measured key at the median of its re-measurements
// (the value the gate judged), not at its last attempt nor its first.
TEST(KgateCi, GptFastTakesTheReMeasuredMedian) {
  fs::path d = temp_dir("ci_gpt_fast_attempts");
  std::vector<kb::Record> rows;
  // r2 is the older run: appended first.
  for (const auto& [run, v] : std::vector<std::pair<std::string, double>>{{"r2", 800},
                                                                          {"r1", 900},
                                                                          {"r1/2", 1010},
                                                                          {"r1/3", 990},
                                                                          {"r1/4", 1000},
                                                                          {"r1/5", 980}}) {
    kb::Record r = row("gemv", v, run);
    r.dtype = "int8";
    r.shape = "mean";
    r.timestamp = run == "r2" ? "2026-01-01T00:00:00Z" : "2026-01-02T00:00:00Z";
    rows.push_back(r);
  }
  fs::path f = write(d / "h.csv", csv(rows));
  Result r = kgate("gpt-fast --results " + f.string() + " --csv " + (d / "g.csv").string());
  EXPECT_EQ(r.code, 0) << r.out;
  std::string g = slurp(d / "g.csv");
  EXPECT_TRUE(contains(g, "\ngemv,memory_bandwidth(GB/s),0,995,int8,cuda,")) << g;
}

}  // namespace
#endif
