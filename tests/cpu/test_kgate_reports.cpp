// The gate's reporters against expected text on a small fixture: the
// Markdown and JUnit exactly, the console's per-failure line exactly, the
// HTML for being one self-contained file.
#include <gtest/gtest.h>

#include "kgate_test_util.h"
#include "reports/gate_writers.h"

namespace {

using kgt::contains;

// Four keys, one of each status, and a warning.
kb::GateReport fixture() {
  kb::GateReport r;
  r.window = 60;
  r.min_gap = 0.03;
  r.rows = 1234;
  r.inputs = {"nightly.csv"};
  r.gated_runs = {"NVIDIA H100 80GB HBM3: run r42 (2026-12-01T03:00:00Z), 3 keys"};
  kb::GateKeyResult f;
  f.name = "layer_norm"; f.metric = "memory_bandwidth(GB/s)"; f.dtype = "bfloat16";
  f.shape = "BS=4096;D=8192"; f.arch = "NVIDIA H100 80GB HBM3"; f.device = "cuda";
  f.status = kb::GateStatus::fail; f.rule = "history"; f.run = "r42";
  f.why = "8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the history's noise explains (noise 0.6%: up to 2.9%)";
  f.value = 1700; f.baseline = 1850; f.change = 1700.0 / 1850 - 1; f.history_runs = 60; f.noise = 0.006;
  f.history = {1840, 1850, 1860}; f.history_runs_labels = {"r39", "r40", "r41"};
  kb::GateKeyResult i = f;
  i.name = "gemv"; i.dtype = "int8"; i.shape = "mean"; i.device = "cuda:1";
  i.status = kb::GateStatus::inconclusive; i.rule = "too little history";
  i.why = "only 3 earlier runs on this GPU: the history rule needs 10";
  i.value = 2400; i.baseline = 2410; i.change = 2400.0 / 2410 - 1; i.history_runs = 3;
  i.history = {2405, 2410, 2415};
  kb::GateKeyResult p = f;
  p.name = "gather_gemv"; p.metric = "latency(us)"; p.lower_is_better = true;
  p.status = kb::GateStatus::pass; p.rule = ""; p.why = "";
  p.value = 12.5; p.baseline = 12.4; p.change = 12.5 / 12.4 - 1; p.target = 20;
  p.history = {12.3, 12.4, 12.45};
  kb::GateKeyResult s = f;
  s.name = "gemv"; s.dtype = "fp8_e4m3"; s.status = kb::GateStatus::skipped; s.rule = "skipped";
  s.why = "fp8 needs sm_89 | later"; s.value.reset(); s.baseline.reset(); s.change.reset(); s.history = {};
  s.history_runs_labels = {};
  r.keys = {f, i, p, s};
  r.warnings = {"nightly.csv:7: actual 'abc' is not a number; row skipped"};
  return r;
}

TEST(KgateReports, MarkdownExactly) {
  const char* expected = R"EXP(## kgate: FAIL: 1 regression, 1 inconclusive, 1 passed, 1 skipped (4 keys)

History window 60 runs, min gap 3.0%, 1234 rows read. Gated NVIDIA H100 80GB HBM3: run r42 (2026-12-01T03:00:00Z), 3 keys.

| status | key | value | baseline | change | why |
| --- | --- | ---: | ---: | ---: | --- |
| **FAIL** | layer_norm [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3 | 1700 | 1850 | -8.1% | 8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the history's noise explains (noise 0.6%: up to 2.9%) |
| inconclusive | gemv [mean] int8 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3 (cuda:1) | 2400 | 2410 | -0.4% | only 3 earlier runs on this GPU: the history rule needs 10 |

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
  <testsuite name="kgate" tests="4" failures="1" errors="0" skipped="2" time="0">
    <testcase classname="kgate.layer_norm" name="[BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3" time="0">
      <failure message="8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the history&apos;s noise explains (noise 0.6%: up to 2.9%)" type="history">FAIL layer_norm [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3: 1700 (baseline 1850, -8.1%): 8.1% worse than the median of the last 60 runs: more than --min-gap 3.0% and than the history&apos;s noise explains (noise 0.6%: up to 2.9%)</failure>
    </testcase>
    <testcase classname="kgate.gemv" name="[mean] int8 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3 (cuda:1)" time="0">
      <skipped message="inconclusive: only 3 earlier runs on this GPU: the history rule needs 10"/>
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
  EXPECT_TRUE(contains(x, "<failure message=\"only 3 earlier runs on this GPU: the history rule "
                          "needs 10\" type=\"inconclusive\">"))
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
  EXPECT_TRUE(contains(h, "<script>"));
  // A row per key with its status and history, the newest run marked.
  EXPECT_TRUE(contains(h, "<tr class=\"fail\"><td class=\"st\">FAIL</td><td>layer_norm "
                          "[BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB "
                          "HBM3</td><td><svg"));
  EXPECT_TRUE(contains(h, "<title>r40: 1850</title>"));
  EXPECT_TRUE(contains(h, "<circle class=\"now fail\""));
  EXPECT_TRUE(contains(h, "<tr class=\"skip\">"));
  EXPECT_TRUE(contains(h, "fp8 needs sm_89 | later"));
  EXPECT_TRUE(contains(h, "nightly.csv:7: actual 'abc' is not a number; row skipped"));
}

TEST(KgateReports, EscapesWhatItQuotes) {
  auto r = fixture();
  r.keys[0].why = "a <b> & \"c\" | d";
  EXPECT_TRUE(contains(kb::gate_junit(r), "message=\"a &lt;b&gt; &amp; &quot;c&quot; | d\""));
  EXPECT_TRUE(contains(kb::gate_html(r), "a &lt;b&gt; &amp; &quot;c&quot; | d"));
  EXPECT_TRUE(contains(kb::gate_markdown(r), "a &lt;b> & \"c\" \\| d"));
}

}  // namespace
