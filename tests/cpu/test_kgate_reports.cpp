// The gate's reporters against expected text on a small fixture: the
// Markdown and JUnit exactly, the console's per-failure line exactly, the
// HTML for being one self-contained file.
#include <gtest/gtest.h>

#include "kgate_test_util.h"
#include "reports/gate_result.h"

namespace {

using kgt::contains;

// Four keys, one of each status, and a warning.
kb::GateReport fixture() {
  kb::GateReport r;
  r.window = 60;
  r.min_gap = 0.03;
  r.rows = 1234;
  r.inputs = {"nightly.csv"};
  r.min_history = 10;
  r.gated_runs = {{"NVIDIA H100 80GB HBM3",
                   {"r42", "2026-12-01T03:00:00Z", "d691121bf87b", "580.159.04", "13.0"},
                   3}};
  r.host = "gpu-runner-7";
  r.generated_at = "2026-12-01T05:00:00Z";
  kb::GateKeyResult f;
  f.name = "layer_norm";
  f.metric = "memory_bandwidth(GB/s)";
  f.dtype = "bfloat16";
  f.shape = "BS=4096;D=8192";
  f.arch = "NVIDIA H100 80GB HBM3";
  f.device = "cuda";
  f.status = kb::GateStatus::fail;
  f.rule = "history";
  f.run = "r42";
  f.why =
      "8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the "
      "history's noise explains (noise 0.6%: up to 2.9%)";
  f.value = 1700;
  f.baseline = 1850;
  f.change = 1700.0 / 1850 - 1;
  f.history_runs = 60;
  f.noise = 0.006;
  f.history = {1840, 1850, 1860};
  f.history_runs_labels = {"r39", "r40", "r41"};
  f.last_good = kb::RunContext{"r41", "2026-11-30T03:00:00Z", "1a2b3c4d5e6f", "580.159.04", "13.0"};
  f.last_good_value = 1860;
  kb::GateKeyResult i = f;
  i.last_good.reset();
  i.last_good_value.reset();
  i.name = "gemv";
  i.dtype = "int8";
  i.shape = "mean";
  i.device = "cuda:1";
  i.status = kb::GateStatus::inconclusive;
  i.rule = "within noise";
  i.why =
      "0.4% worse than the median of the last 30 runs, but the history's noise (2.0%) explains up "
      "to 9.0%";
  i.value = 2400;
  i.baseline = 2410;
  i.change = 2400.0 / 2410 - 1;
  i.history_runs = 3;
  i.history = {2405, 2410, 2415};
  kb::GateKeyResult p = f;
  p.last_good.reset();
  p.last_good_value.reset();
  p.name = "gather_gemv";
  p.metric = "latency(us)";
  p.lower_is_better = true;
  p.status = kb::GateStatus::pass;
  p.rule = "";
  p.why = "";
  p.value = 12.5;
  p.baseline = 12.4;
  p.change = 12.5 / 12.4 - 1;
  p.target = 20;
  p.history = {12.3, 12.4, 12.45};
  kb::GateKeyResult s = f;
  s.name = "gemv";
  s.dtype = "fp8_e4m3";
  s.status = kb::GateStatus::skipped;
  s.rule = "skipped";
  s.why = "fp8 needs sm_89 | later";
  s.value.reset();
  s.baseline.reset();
  s.change.reset();
  s.history = {};
  s.history_runs_labels = {};
  r.keys = {f, i, p, s};
  r.warnings = {"nightly.csv:7: actual 'abc' is not a number; row skipped"};
  return r;
}

TEST(KgateReports, MarkdownExactly) {
  const char* expected =
      R"EXP(## kgate: FAIL: 1 regression, 1 inconclusive, 1 passed, 1 skipped (4 keys)

History window 60 runs, min gap 3.0%, 1234 rows read. Gated NVIDIA H100 80GB HBM3: run r42 (2026-12-01T03:00:00Z; commit d691121bf87b, driver 580.159.04, CUDA 13.0), 3 keys. kgate ran on gpu-runner-7 at 2026-12-01T05:00:00Z.

| status | key | value | baseline | change | why |
| --- | --- | ---: | ---: | ---: | --- |
| **FAIL** | layer_norm [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3 | 1700 | 1850 | -8.1% | 8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the history's noise explains (noise 0.6%: up to 2.9%); last good: run r41 (2026-11-30T03:00:00Z; commit 1a2b3c4d5e6f, driver 580.159.04, CUDA 13.0): 1860 |
| inconclusive | gemv [mean] int8 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3 (cuda:1) | 2400 | 2410 | -0.4% | 0.4% worse than the median of the last 30 runs, but the history's noise (2.0%) explains up to 9.0% |

<details><summary>1 passed, 1 skipped</summary>

| status | key | value | baseline | change | target |
| --- | --- | ---: | ---: | ---: | ---: |
| pass | gather_gemv [BS=4096;D=8192] bfloat16 latency(us) @ NVIDIA H100 80GB HBM3 | 12.5 | 12.4 | +0.8% | 20 |
| skipped | gemv [BS=4096;D=8192] fp8_e4m3 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3 | - | - | - | - |

</details>

<details><summary>1 input warning(s)</summary>

- nightly.csv:7: actual 'abc' is not a number; row skipped

</details>
)EXP";
  EXPECT_EQ(kb::gate_markdown(fixture()), expected);
}

TEST(KgateReports, JunitExactly) {
  const char* expected = R"EXP(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="kgate" tests="4" failures="1" errors="0" skipped="2">
  <testsuite name="kgate" tests="4" failures="1" errors="0" skipped="2" time="0" timestamp="2026-12-01T03:00:00" hostname="gpu-runner-7">
    <properties>
      <property name="gated_run" value="NVIDIA H100 80GB HBM3: run r42 (2026-12-01T03:00:00Z; commit d691121bf87b, driver 580.159.04, CUDA 13.0), 3 keys"/>
      <property name="git_sha" value="d691121bf87b"/>
      <property name="driver" value="580.159.04"/>
      <property name="cuda" value="13.0"/>
      <property name="kgate_host" value="gpu-runner-7"/>
    </properties>
    <testcase classname="kgate.layer_norm" name="[BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3" time="0">
      <failure message="8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the history&apos;s noise explains (noise 0.6%: up to 2.9%); last good: run r41 (2026-11-30T03:00:00Z; commit 1a2b3c4d5e6f, driver 580.159.04, CUDA 13.0): 1860" type="history">FAIL layer_norm [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3: 1700 (baseline 1850, -8.1%): 8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the history&apos;s noise explains (noise 0.6%: up to 2.9%)
last good: run r41 (2026-11-30T03:00:00Z; commit 1a2b3c4d5e6f, driver 580.159.04, CUDA 13.0): 1860</failure>
    </testcase>
    <testcase classname="kgate.gemv" name="[mean] int8 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3 (cuda:1)" time="0">
      <skipped message="inconclusive: 0.4% worse than the median of the last 30 runs, but the history&apos;s noise (2.0%) explains up to 9.0%"/>
    </testcase>
    <testcase classname="kgate.gather_gemv" name="[BS=4096;D=8192] bfloat16 latency(us) @ NVIDIA H100 80GB HBM3" time="0"/>
    <testcase classname="kgate.gemv" name="[BS=4096;D=8192] fp8_e4m3 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3" time="0">
      <skipped message="skipped: fp8 needs sm_89 | later"/>
    </testcase>
    <system-err>nightly.csv:7: actual &apos;abc&apos; is not a number; row skipped
</system-err>
  </testsuite>
</testsuites>
)EXP";
  EXPECT_EQ(kb::gate_junit(fixture()), expected);
}

TEST(KgateReports, JunitUnderStrictTurnsInconclusiveIntoFailures) {
  auto r = fixture();
  r.strict = true;
  std::string x = kb::gate_junit(r);
  EXPECT_TRUE(contains(x, "tests=\"4\" failures=\"2\" errors=\"0\" skipped=\"1\"")) << x;
  EXPECT_TRUE(contains(x,
                       "<failure message=\"0.4% worse than the median of the last 30 runs, but "
                       "the history&apos;s noise (2.0%) explains up to 9.0%\" "
                       "type=\"inconclusive\">"))
      << x;
}

TEST(KgateReports, ConsoleLinePerFailure) {
  auto r = fixture();
  EXPECT_EQ(kb::gate_line(r.keys[0]),
            "FAIL layer_norm [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB "
            "HBM3: 1700 (baseline 1850, -8.1%): 8.1% worse than the median of the last 60 runs: "
            "more than --min-gap 3.0% and than the history's noise explains (noise 0.6%: up to "
            "2.9%)");
  std::string c = kb::gate_console(r);
  EXPECT_TRUE(contains(c, "\n" + kb::gate_line(r.keys[0]) + "\n")) << c;
  EXPECT_TRUE(contains(c, "\n" + kb::gate_line(r.keys[1]) + "\n")) << c;
  EXPECT_FALSE(contains(c, "\npass gather_gemv")) << c;  // no line for passes
  EXPECT_TRUE(contains(c, "\nFAIL: 1 regression, 1 inconclusive, 1 passed, 1 skipped (4 keys)\n"));
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(KgateReports, HtmlIsOneSelfContainedFile) {
  std::string h = kb::gate_html(fixture());
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(contains(h, "</html>"));
  // No external resource of any kind.
  for (const char* ext : {"http:", "https:", "src=", "<link", "@import", "url("})
    EXPECT_FALSE(contains(h, ext)) << ext;
  EXPECT_TRUE(contains(h, "<style>"));
  // The Markdown report rendered: a row per failing key, the rest folded.
  EXPECT_TRUE(contains(h,
                       "<tr><td><b>FAIL</b></td><td>layer_norm [BS=4096;D=8192] bfloat16 "
                       "memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3</td><td class=\"n\">1700"));
  EXPECT_TRUE(contains(h, "<details><summary>1 passed, 1 skipped</summary>\n<table>"));
  EXPECT_TRUE(contains(h, "<tr><td>skipped</td>"));
  EXPECT_TRUE(contains(h, "<li>nightly.csv:7: actual 'abc' is not a number; row skipped</li>"));
}

TEST(KgateReports, EscapesWhatItQuotes) {
  auto r = fixture();
  r.keys[0].why = "a <b> & \"c\" | d";
  r.keys[0].last_good.reset();
  EXPECT_TRUE(contains(kb::gate_junit(r), "message=\"a &lt;b&gt; &amp; &quot;c&quot; | d\""));
  EXPECT_TRUE(contains(kb::gate_html(r), "a &lt;b&gt; &amp; &quot;c&quot; | d"));
  EXPECT_TRUE(contains(kb::gate_markdown(r), "a &lt;b&gt; & \"c\" \\| d"));
}

// The first nights: keys with too little history are one line, not one
// each, and a key that meets its target says so in the counts; JUnit passes
// it (it was judged against its target) and skips the ones with no target.
TEST(KgateReports, NewKeysAreOneLineNotOneEach) {
  kb::GateReport r = fixture();
  r.keys.clear();
  r.warnings.clear();
  for (int n = 0; n < 3; ++n) {
    kb::GateKeyResult k;
    k.name = "Llama-2-7b-chat-hf";
    k.metric = "token_per_sec";
    k.dtype = n == 0 ? "bfloat16" : n == 1 ? "int8" : "float16";
    k.shape = "BS=1;prompt=6;new_tokens=200";
    k.arch = kgt::kH100;
    k.status = kb::GateStatus::inconclusive;
    k.rule = "too little history";
    k.why = "only 1 earlier run on this GPU: the history rule needs 10";
    k.value = 206.1;
    k.history_runs = 1;
    if (n < 2) k.target = 200;
    r.keys.push_back(k);
  }
  EXPECT_EQ(
      r.summary(),
      "PASS: 0 regressions, 0 inconclusive, 0 passed, 3 new (2 on target), 0 skipped (3 keys)");
  EXPECT_EQ(r.history_note(),
            "3 keys have too little history for the history rule (1 earlier run each; it needs "
            "10): judged against their targets only: 2 meet their target, 1 has none");
  std::string c = kb::gate_console(r);
  EXPECT_FALSE(contains(c, "only 1 earlier run")) << c;
  EXPECT_TRUE(contains(c, "\n" + r.history_note() + "\n")) << c;
  std::string md = kb::gate_markdown(r);
  EXPECT_FALSE(contains(md, "only 1 earlier run")) << md;
  EXPECT_TRUE(contains(md, r.history_note())) << md;
  EXPECT_TRUE(contains(md, "<details><summary>0 passed, 3 new, 0 skipped</summary>")) << md;
  EXPECT_TRUE(contains(
      md, "| new | Llama-2-7b-chat-hf [BS=1;prompt=6;new_tokens=200] bfloat16 token_per_sec"))
      << md;
  std::string j = kb::gate_junit(r);
  EXPECT_TRUE(contains(j, "tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"1\"")) << j;
  EXPECT_TRUE(contains(j, "<skipped message=\"new, no target: only 1 earlier run")) << j;
  EXPECT_TRUE(contains(kb::gate_html(r), r.history_note()));
  // Under --strict they fail, each listed as inconclusive (the rule is unchanged).
  r.strict = true;
  EXPECT_EQ(r.history_note(), "");
  EXPECT_TRUE(contains(kb::gate_console(r), "\ninconclusive Llama-2-7b-chat-hf"))
      << kb::gate_console(r);
  EXPECT_EQ(
      r.summary(),
      "FAIL: 0 regressions, 3 inconclusive (failing: --strict), 0 passed, 0 skipped (3 keys)");
}

// A throttled newest row is called throttled, in the counts and per key.
TEST(KgateReports, ThrottledPassIsCalledThrottled) {
  kb::GateReport r = fixture();
  r.keys[2].throttled = true;  // the pass
  EXPECT_TRUE(contains(r.summary(), "(4 keys; 1 throttled)")) << r.summary();
  std::string c = kb::gate_console(r);
  EXPECT_TRUE(contains(c,
                       "\nthrottled gather_gemv [BS=4096;D=8192] bfloat16 latency(us) @ NVIDIA "
                       "H100 80GB HBM3: 12.5: the run was throttled"))
      << c;
  EXPECT_TRUE(contains(kb::gate_markdown(r), "| pass (throttled) | gather_gemv"))
      << kb::gate_markdown(r);
  EXPECT_TRUE(contains(kb::gate_junit(r), "<system-out>throttled: the SM clock was low"))
      << kb::gate_junit(r);
  EXPECT_TRUE(contains(kb::gate_html(r), "<td>pass (throttled)</td>"));
  EXPECT_TRUE(contains(kb::gate_console(r, true), "pass (throttled)"));
}

// A row that crashed is a JUnit <error>, not a <failure>; the console with
// --all lists every key in a table.
TEST(KgateReports, FailedRowIsAJunitError) {
  kb::GateReport r = fixture();
  r.keys[0].rule = "failed";
  r.keys[0].why = "the run failed: worker died of signal 11";
  std::string j = kb::gate_junit(r);
  EXPECT_TRUE(contains(j, "tests=\"4\" failures=\"0\" errors=\"1\" skipped=\"2\"")) << j;
  EXPECT_TRUE(
      contains(j, "<error message=\"the run failed: worker died of signal 11; last good: run r41"))
      << j;
  EXPECT_TRUE(contains(j, "</error>")) << j;
  std::string all = kb::gate_console(r, true);
  EXPECT_TRUE(contains(all, "gather_gemv")) << all;
  EXPECT_FALSE(contains(all, "not listed")) << all;
}

}  // namespace

namespace {

// Six keys that dropped together on one night, one of them since two runs.
TEST(KgateReports, SummaryFirstWorstFirstWithSinceAndLink) {
  kb::GateReport r = fixture();
  r.dashboard = "https://ci/dash/index.html";
  for (int i = 0; i < 5; ++i) {
    kb::GateKeyResult k = r.keys[0];
    k.shape = "D=" + std::to_string(1024 << i);
    k.change = -0.05 - 0.002 * i;
    r.keys.push_back(k);
  }
  r.keys.back().last_good->run = "r40";
  kb::order_worst_first(r);
  EXPECT_EQ(r.keys[0].shape, "BS=4096;D=8192");  // -8.1%
  EXPECT_EQ(r.keys[1].shape, "D=16384");         // -5.8%
  EXPECT_EQ(kb::failing_since(r.keys[1]), "failing since run r41");
  EXPECT_EQ(kb::failing_since(r.keys[0]), "");  // tonight only
  const auto f = kb::findings(r);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0], "6 of 8 keys with a baseline dropped more than 3.0%: 1 by 3%–5%, 5 by 5%–10%");
  EXPECT_TRUE(contains(f[1], "broad: 6 of 8 keys moved together (5.0% to 8.1% worse")) << f[1];
  EXPECT_EQ(kb::chart_link(r, r.keys[1]),
            "https://ci/dash/index.html#charts?q=D%3D16384%20memory_bandwidth%28GB%2Fs%29"
            "&exp=layer_norm&dtype=bfloat16&gpu=NVIDIA%20H100%2080GB%20HBM3");
  const std::string md = kb::gate_markdown(r);
  EXPECT_LT(md.find("**broad**"), md.find("| status |"));
  EXPECT_TRUE(contains(md, "[layer_norm [D=16384]")) << md;
  EXPECT_TRUE(contains(kb::gate_html(r), "<ul>\n<li><b>6 of 8 keys"));
  EXPECT_TRUE(contains(kb::gate_html(r),
                       "<td><a href=\"https://ci/dash/index.html#charts?q=D%3D16384%20memory_"
                       "bandwidth%28GB%2Fs%29&amp;exp=layer_norm&amp;dtype=bfloat16&amp;gpu="
                       "NVIDIA%20H100%2080GB%20HBM3\">layer_norm [D=16384]"));
  EXPECT_TRUE(contains(kb::gate_junit(r), "<property name=\"finding\" value=\"broad: 6 of 8"));
}

}  // namespace
