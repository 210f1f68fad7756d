// kgate as a process: exit codes (0 pass, 1 regression, 2 bad usage or
// input), the files it writes, and compare's output.
#include <gtest/gtest.h>

#include "kgate_test_util.h"
#include "tests/support/gen_history.h"

#ifdef KBENCH_KGATE_EXE

namespace {

using namespace kgt;

TEST(KgateCli, HelpAndUsageErrors) {
  Result h = kgate("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_TRUE(contains(h.out, "kgate check --results FILE..."));
  EXPECT_TRUE(contains(h.out, "--min-gap REL"));
  for (const char* cmd : {"check", "compare", "dashboard", "noise", "siblings", "gpt-fast",
                          "bringup", "selftest-table"}) {
    Result c = kgate(std::string(cmd) + " --help");
    EXPECT_EQ(c.code, 0) << cmd << "\n" << c.out;
    EXPECT_TRUE(contains(c.out, std::string("usage: kgate ") + cmd)) << c.out;
  }
  for (const char* bad :
       {"", "frobnicate", "check", "check --results", "check --window",
        "check --results x.csv --window 1", "check --results x.csv --min-gap 2",
        "check --results x.csv --window ten", "check --results x.csv --bogus", "compare one.csv",
        "check --results x.csv --min-history 90 --window 60"}) {
    Result r = kgate(bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "kgate: ")) << r.out;
  }
  EXPECT_TRUE(contains(kgate("check --results x.csv --window 1").out,
                       "--window 1: expected a whole number from 3 to 500"));
}

TEST(KgateCli, ExitCodesPassRegressionStrict) {
  fs::path d = temp_dir("cli_codes");
  fs::path ok = write(d / "ok.csv", csv(series("gemv", steady(30, 1000, 1002))));
  fs::path bad = write(d / "bad.csv", csv(series("gemv", steady(30, 1000, 850))));
  fs::path young = write(d / "young.csv", csv(series("gemv", steady(3, 1000, 1000))));

  Result pass = kgate("check --results " + ok.string());
  EXPECT_EQ(pass.code, 0) << pass.out;
  EXPECT_TRUE(
      contains(pass.out, "PASS: 0 regressions, 0 inconclusive, 1 passed, 0 skipped (1 key)"))
      << pass.out;

  Result fail = kgate("check --results " + bad.string());
  EXPECT_EQ(fail.code, 1) << fail.out;
  EXPECT_TRUE(contains(fail.out,
                       "\nFAIL gemv [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ "
                       "NVIDIA H100 80GB HBM3: 850 (baseline 1000, -15.0%): 15.0% worse "
                       "than the median of the last 30 runs"))
      << fail.out;

  EXPECT_EQ(kgate("check --results " + young.string()).code, 0);
  EXPECT_EQ(kgate("check --strict --results " + young.string()).code, 1);
}

TEST(KgateCli, WritesMarkdownJunitHtml) {
  fs::path d = temp_dir("cli_outputs");
  fs::path bad = write(d / "bad.csv", csv(series("gemv", steady(30, 1000, 850))));
  Result r = kgate("check --results " + bad.string() + " --markdown " + (d / "s.md").string() +
                   " --junit " + (d / "j.xml").string() + " --html " + (d / "d.html").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(slurp(d / "s.md").rfind("## kgate: FAIL: 1 regression", 0), 0u);
  std::string j = slurp(d / "j.xml");
  EXPECT_TRUE(contains(j, "<testcase classname=\"kgate.gemv\"")) << j;
  EXPECT_TRUE(contains(j, "<failure message=\"15.0% worse than the median")) << j;
  EXPECT_TRUE(contains(slurp(d / "d.html"), "<td><b>FAIL</b></td>"));
  // An output that cannot be written loses the verdict: exit 2.
  Result w = kgate("check --results " + bad.string() + " --junit " + d.string());
  EXPECT_EQ(w.code, 2) << w.out;
  EXPECT_TRUE(contains(w.out, "kgate: error: cannot write " + d.string())) << w.out;
}

TEST(KgateCli, TargetsFolder) {
  fs::path d = temp_dir("cli_targets");
  fs::path t = d / "targets";
  fs::create_directories(t);
  write(t / "h100.json", R"J({"gpu": "NVIDIA H100 80GB HBM3", "peaks": {"hbm_gbps": 3352},
    "targets": [{"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16",
                 "shape": "*", "target": 1200}]})J");
  fs::path f = write(d / "r.csv", csv(series("gemv", steady(30, 1000, 1000))));
  Result r = kgate("check --results " + f.string() + " --targets " + t.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "below target: 1000 vs 1200 (16.7% worse, tolerance 5.0%; " +
                                  (t / "h100.json").string() + ")"))
      << r.out;
  write(t / "broken.json", "{");
  Result b = kgate("check --results " + f.string() + " --targets " + t.string());
  EXPECT_EQ(b.code, 2) << b.out;
  EXPECT_TRUE(contains(b.out, "broken.json:1:2: not valid JSON")) << b.out;
}

TEST(KgateCli, CompareTwoRuns) {
  fs::path d = temp_dir("cli_compare");
  std::vector<kb::Record> base = {row("layer_norm", 1000, "a"), row("gemv", 900, "a"),
                                  row("gather_gemv", 800, "a")};
  std::vector<kb::Record> next = {row("layer_norm", 1002, "b"), row("gemv", 800, "b"),
                                  row("gather_gemv", 900, "b")};
  fs::path b = write(d / "base.csv", csv(base));
  fs::path n = write(d / "new.csv", csv(next));
  Result r =
      kgate("compare " + b.string() + " " + n.string() + " --markdown " + (d / "c.md").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "\nSLOWER   gemv ")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nFASTER   gather_gemv ")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nSAME     layer_norm ")) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "geomean NEW/BASE 1.0007 (0.1% better) over 3 keys: 1 FASTER, 1 "
                       "SLOWER, 1 SAME, 0 UNSURE"))
      << r.out;
  EXPECT_TRUE(contains(slurp(d / "c.md"),
                       "| SLOWER | gemv [BS=4096;D=8192] bfloat16 "
                       "memory_bandwidth(GB/s) | 900 | 800 | -11.1% |"));
  Result bad = kgate("compare " + b.string() + " " + (d / "missing.csv").string());
  EXPECT_EQ(bad.code, 2);
}

TEST(KgateCli, OneMillionRowGeneratorRoundTrips) {
  // The generator behind the timing in docs/gate.md, small: its file reads
  // back without a warning and its planted drops are the failures.
  fs::path d = temp_dir("cli_gen");
  fs::path f = d / "h.csv";
  kb::GenOptions opt;
  opt.runs = 40;
  opt.keys = 24;
  opt.last_drop = 0.1;
  opt.dropped_keys = 3;
  ASSERT_TRUE(kb::write_history_file(f.string(), opt));
  Result r = kgate("check --results " + f.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_FALSE(contains(r.out, "warning")) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL: 3 regressions, 0 inconclusive, 21 passed")) << r.out;
  fs::path gf = d / "g.csv";
  kb::GenOptions gpt;
  gpt.gpt_fast = true;
  gpt.runs = 30;
  gpt.keys = 8;
  gpt.last_drop = 0.2;
  gpt.dropped_keys = 1;
  ASSERT_TRUE(kb::write_history_file(gf.string(), gpt));
  Result rg = kgate("check --results " + gf.string());
  EXPECT_TRUE(contains(rg.out, "FAIL: 1 regression, 0 inconclusive, 7 passed")) << rg.out;
}

}  // namespace

#endif
