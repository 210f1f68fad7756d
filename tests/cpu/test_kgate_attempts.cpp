// Confirmation (docs/gate.md): attempts in the run id, the night judged on
// its re-measurements, the suspects file, like-with-like variants, notes,
// the too-noisy summary line, and `kgate noise`.
#include <gtest/gtest.h>

#include "core/attempts.h"
#include "kgate_test_util.h"
#include "reports/gate_result.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/noise.h"

namespace {

using namespace kgt;

kb::GateReport gate(const std::string& file, kb::GateOptions opt = {}) {
  kb::History h;
  h.add_text(file, "f.csv");
  h.finish();
  return kb::run_gate(h, opt);
}

const kb::GateKeyResult& key(const kb::GateReport& r, const std::string& name) {
  for (const auto& k : r.keys)
    if (k.name == name) return k;
  ADD_FAILURE() << "no key " << name;
  return r.keys.at(0);
}

// Re-measurements of the newest run (r<n>) of `name`: rows r<n>/2, r<n>/3, ...
std::vector<kb::Record> attempts(const std::string& name, size_t run,
                                 const std::vector<double>& values) {
  std::vector<kb::Record> out;
  for (size_t i = 0; i < values.size(); ++i) {
    kb::Record r = row(name, values[i], "r" + std::to_string(run) + "/" + std::to_string(i + 2));
    r.timestamp = "2026-01-02T00:00:0" + std::to_string(i) + "Z";  // later than the run
    out.push_back(r);
  }
  return out;
}

std::vector<kb::Record> operator+(std::vector<kb::Record> a, const std::vector<kb::Record>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(KgateAttempts, SplitAttempt) {
  auto is = [](const char* id, const char* base, uint32_t n) {
    kb::RunAttempt a = kb::split_attempt(id);
    EXPECT_EQ(a.base, base) << id;
    EXPECT_EQ(a.attempt, n) << id;
  };
  is("20261125T101500Z-3fa9c1", "20261125T101500Z-3fa9c1", 1);
  is("20261125T101500Z-3fa9c1/2", "20261125T101500Z-3fa9c1", 2);
  is("r/17", "r", 17);
  is("r/1", "r", 1);
  for (const char* plain : {"", "r/", "/2", "r/02", "r/0", "r/x", "r/2x", "r/99999999", "a/b"})
    is(plain, plain, 1);
  is("a/b/3", "a/b", 3);
}

TEST(KgateAttempts, AttemptsAreOneRunAndDuplicatesWarnPerAttempt) {
  auto rows = series("gemv", steady(30, 1000, 1000)) + attempts("gemv", 30, {1001, 999});
  rows.push_back(row("gemv", 1002, "r30/2"));  // the same attempt twice
  kb::History h;
  h.add_text(csv(rows), "f.csv");
  h.finish();
  EXPECT_EQ(h.runs().size(), 31u);
  EXPECT_EQ(h.runs().back().label, "r30");
  ASSERT_EQ(h.warnings().size(), 1u);
  EXPECT_TRUE(contains(h.warnings()[0].text(), "the same key again in run r30 (attempt 2)"))
      << h.warnings()[0].text();
  EXPECT_EQ(h.series(0).size(), 33u);
}

TEST(KgateAttempts, ATransientIsMeasuredAwayARealDropFails) {
  // A quiet key (0.2%) 4% low on its first attempt: the first stage fails it
  // and names it a suspect; its re-measurements decide.
  auto base = series("gemv", steady(30, 1000, 960));
  auto first = gate(csv(base));
  EXPECT_EQ(key(first, "gemv").status, kb::GateStatus::fail);
  EXPECT_TRUE(key(first, "gemv").suspect);

  auto transient = gate(csv(base + attempts("gemv", 30, {1001, 999, 1000, 998})));
  const auto& t = key(transient, "gemv");
  EXPECT_EQ(t.status, kb::GateStatus::pass) << t.why;
  EXPECT_EQ(t.attempts, 5);
  EXPECT_FALSE(t.suspect);  // judged on its attempts: never re-measured again
  EXPECT_EQ(*t.value, 999.5);
  EXPECT_TRUE(contains(t.note,
                       "re-measured: median of 4 re-measurement(s) 999.5 (the nightly's "
                       "own 960)"))
      << t.note;

  // One re-measurement of four still slow (the mode stuck once): passes.
  EXPECT_EQ(key(gate(csv(base + attempts("gemv", 30, {1001, 961, 1000, 998}))), "gemv").status,
            kb::GateStatus::pass);

  auto real = gate(csv(base + attempts("gemv", 30, {958, 962, 959, 1000})));
  const auto& r = key(real, "gemv");
  EXPECT_EQ(r.status, kb::GateStatus::fail) << r.why;
  EXPECT_EQ(*r.value, 960.5);
  EXPECT_EQ(real.exit_code(), 1);
}

TEST(KgateAttempts, AConfirmedDropIsHeldToTheKeysOwnFloor) {
  // steady()'s noise reads 0.5%: the floor of a re-measured value is 4
  // times that, 2%; one attempt's stays --min-gap 3%.
  auto base = series("gemv", steady(30, 1000, 975));
  auto first = gate(csv(base));
  EXPECT_EQ(key(first, "gemv").status, kb::GateStatus::pass) << key(first, "gemv").why;
  EXPECT_TRUE(key(first, "gemv").suspect);  // a confirmation could fail it

  auto real = gate(csv(base + attempts("gemv", 30, {976, 974, 975, 977})));
  const auto& r = key(real, "gemv");
  EXPECT_EQ(r.status, kb::GateStatus::fail) << r.why;
  EXPECT_TRUE(contains(r.why,
                       "more than the key's floor 2.0% (4 times its noise, at least "
                       "--confirmed-gap 1.5%)"))
      << r.why;
  kb::GateOptions fixed;
  fixed.rule.confirmed_gap = 0.03;  // the floor of every key at 3%
  EXPECT_EQ(key(gate(csv(base + attempts("gemv", 30, {976, 974, 975, 977})), fixed), "gemv").status,
            kb::GateStatus::pass);

  // Two re-measurements of four still low: no majority holds the floor.
  EXPECT_EQ(key(gate(csv(base + attempts("gemv", 30, {976, 974, 999, 1001}))), "gemv").status,
            kb::GateStatus::pass);

  // A slow state the history has shown twice before is recognised, not failed.
  auto v = steady(30, 1000, 975);
  v[8] = v[19] = 976;
  auto seen = gate(csv(series("gemv", v) + attempts("gemv", 30, {976, 974, 975, 977})));
  const auto& s = key(seen, "gemv");
  EXPECT_EQ(s.status, kb::GateStatus::pass) << s.why;
  EXPECT_TRUE(contains(s.note, "a slow state seen before: 2 of the last 30 runs were as slow"))
      << s.note;
  EXPECT_FALSE(key(gate(csv(series("gemv", v))), "gemv").suspect);  // nor re-measured
}

TEST(KgateAttempts, EarlierRunsContributeTheMedianOfTheirReMeasurements) {
  // Run r10 was 30% low on its first attempt and re-measured fine: its value
  // in the history is its re-measurements' median, not the transient.
  std::vector<double> v(21, 1000);
  v[10] = 700;
  auto rows = series("gemv", v) + attempts("gemv", 10, {1000, 1000, 1000});
  auto r = gate(csv(rows));
  const auto& k = key(r, "gemv");
  ASSERT_EQ(k.history.size(), 20u);
  EXPECT_EQ(k.history[10], 1000);
}

TEST(KgateAttempts, SuspectsFile) {
  // gemv fails; mlp drops 3.5% on a history of 1% noise (beyond --min-gap and
  // 2 s.d., within what the noise explains: inconclusive, and re-measured);
  // layer_norm is fine; a failed row is not re-measured.
  std::vector<double> noisy;
  const double wobble[] = {-0.01, 0.01, 0, -0.005, 0.005, 0.015, -0.015, 0.002, -0.002, 0.008};
  for (int i = 0; i < 30; ++i) noisy.push_back(1000 * (1 + wobble[i % 10]));
  noisy.push_back(965);
  auto rows = series("gemv", steady(30, 1000, 900)) + series("mlp", noisy) +
              series("layer_norm", steady(30, 1000, 1001));
  auto crash = series("decode", steady(30, 1000, 1000));
  crash.back().status = "failed";
  crash.back().actual.reset();
  crash.back().message = "worker died";
  rows = rows + crash;
  for (const char* f : {"f1", "f2", "f3", "f4"}) rows = rows + series(f, steady(30, 1000, 1000));
  for (auto& x : rows) x.variant = x.name == "gemv" ? "algo7;bound=memory" : "bound=memory";
  auto rep = gate(csv(rows));
  EXPECT_EQ(key(rep, "mlp").status, kb::GateStatus::inconclusive) << key(rep, "mlp").why;
  std::string s = kb::suspects_csv(rep);
  EXPECT_EQ(s,
            "run_id,name,dtype,shape,variant,metric,arch,reason\n"
            "r30,gemv,bfloat16,BS=4096;D=8192,algo7;bound=memory,memory_bandwidth(GB/s),"
            "NVIDIA H100 80GB HBM3,fails: -10.0% against the baseline (history)\n"
            "r30,mlp,bfloat16,BS=4096;D=8192,bound=memory,memory_bandwidth(GB/s),"
            "NVIDIA H100 80GB HBM3,drop: -3.6% against the baseline\n");
  // The cap: at most a quarter of the gated keys (here 9: two), failures first.
  size_t capped = 0;
  std::string two =
      kb::suspects_csv(gate(csv(rows + series("rmsnorm", steady(30, 1000, 850)))), &capped);
  EXPECT_EQ(capped, 1u);
  EXPECT_TRUE(contains(two, "\nr30,rmsnorm,")) << two;
  EXPECT_TRUE(contains(two, "\nr30,gemv,")) << two;
  EXPECT_EQ(std::count(two.begin(), two.end(), '\n'), 3);
  // --max-suspects 1 (the self-test, every key slowed at once): no cap.
  kb::suspects_csv(gate(csv(rows + series("rmsnorm", steady(30, 1000, 850)))), &capped, 1.0);
  EXPECT_EQ(capped, 0u);
  // Nothing to re-measure: the header alone.
  EXPECT_EQ(kb::suspects_csv(gate(csv(series("gemv", steady(30, 1000, 1000))))),
            "run_id,name,dtype,shape,variant,metric,arch,reason\n");
}

TEST(KgateAttempts, AProbeCeilingThatMovesIsReportedNotFailedNorReMeasured) {
  // The graph node's cost, 0.98 us for 30 nights, then 1.04 (+6.1%): beyond
  // --min-gap and the noise. kbench cannot re-measure the probe, so it is
  // no suspect, and the night does not fail on it; a kernel row still does.
  std::vector<double> node = steady(30, 0.98, 1.04);
  auto probe = series("roofline_probe", node);
  for (auto& r : probe) {
    r.metric = "graph_node(us)";
    r.shape = "bytes=2147483648";
    r.variant = "empty_graph_node";
    r.dtype = "int8";
  }
  auto rows = probe + series("gemv", steady(30, 1000, 1000));
  auto rep = gate(csv(rows));
  const auto& k = key(rep, "roofline_probe");
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive) << k.why;
  EXPECT_EQ(k.rule, "ceiling");
  EXPECT_TRUE(contains(k.why, "not gated")) << k.why;
  EXPECT_FALSE(k.suspect);
  EXPECT_EQ(kb::suspects_csv(rep), "run_id,name,dtype,shape,variant,metric,arch,reason\n");
  // A kernel row's drop in the same night still fails and is a suspect.
  auto bad = gate(csv(probe + series("gemv", steady(30, 1000, 900))));
  EXPECT_EQ(key(bad, "gemv").status, kb::GateStatus::fail);
  EXPECT_TRUE(key(bad, "gemv").suspect);
}

TEST(KgateAttempts, GptFastHistoriesHaveNoSuspects) {
  std::string f = "name,metric,target,actual,dtype,device,arch,is_model\n";
  for (double v : steady(20, 1000, 900))
    f += "gemv,memory_bandwidth(GB/s),0," + std::to_string(v) + ",bfloat16,cuda," + kH100 +
         ",False\n";
  auto rep = gate(f);
  EXPECT_EQ(rep.exit_code(), 1);
  EXPECT_EQ(kb::suspects_csv(rep), "run_id,name,dtype,shape,variant,metric,arch,reason\n");
}

TEST(KgateAttempts, AChangedVariantIsANoteAndTheBaselineIsLikeWithLike) {
  // 20 runs of algo1 at 1000, then 15 of algo2 at 800, newest algo2 at 805:
  // against algo2's history it passes, and the report says the choice changed
  // only where it changed against the previous run.
  std::vector<double> v;
  for (int i = 0; i < 20; ++i) v.push_back(1000);
  for (int i = 0; i < 15; ++i) v.push_back(800 + i % 3);
  v.push_back(805);
  auto rows = series("gemm", v);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].variant = i < 20 ? "algo1" : "algo2";
  auto steady_now = gate(csv(rows));
  EXPECT_EQ(key(steady_now, "gemm").status, kb::GateStatus::pass) << key(steady_now, "gemm").why;
  EXPECT_EQ(key(steady_now, "gemm").history_runs, 15);
  EXPECT_EQ(key(steady_now, "gemm").note, "");

  rows.back().variant = "algo1";  // back to algo1, 20% faster than algo2: no failure either
  rows.back().actual = 990;
  auto back = gate(csv(rows));
  const auto& k = key(back, "gemm");
  EXPECT_EQ(k.status, kb::GateStatus::pass) << k.why;
  EXPECT_EQ(k.history_runs, 20);
  EXPECT_TRUE(contains(k.note,
                       "variant changed: was 'algo2' in run r34, now 'algo1'; the "
                       "baseline is the 20 earlier run(s) of this variant"))
      << k.note;
  EXPECT_TRUE(contains(kb::gate_console(back), "\nnote gemm [BS=4096;D=8192]"))
      << kb::gate_console(back);
  EXPECT_TRUE(contains(kb::gate_markdown(back), "variant changed"));
  EXPECT_TRUE(contains(kb::gate_junit(back), "<system-out>note: variant changed"));
  EXPECT_TRUE(contains(kb::gate_html(back), "variant changed"));

  rows.back().variant = "algo3";  // a kernel never seen: too little history, with the note
  auto fresh = gate(csv(rows));
  EXPECT_EQ(key(fresh, "gemm").rule, "too little history");
  EXPECT_TRUE(contains(key(fresh, "gemm").why, "(the variant changed)")) << key(fresh, "gemm").why;
}

TEST(KgateAttempts, AnInjectedSlowdownKeepsItsHistoryAndSaysSo) {
  auto rows = series("gemv", steady(30, 1000, 950));
  for (auto& r : rows) r.variant = "bound=memory";
  rows.back().variant = "bound=memory;inject=5%";
  auto rep = gate(csv(rows));
  const auto& k = key(rep, "gemv");
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_EQ(k.history_runs, 30);
  EXPECT_TRUE(contains(k.note, "injected slowdown (inject=5%)")) << k.note;
  EXPECT_FALSE(contains(k.note, "variant changed")) << k.note;
}

TEST(KgateAttempts, TooNoisyKeysSayItInOneLine) {
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) v.push_back(1000 * (i % 2 ? 1.1 : 0.9));
  v.push_back(1000);
  auto rows = series("gemv", v) + series("mlp", v) + series("layer_norm", steady(30, 1000, 1000));
  auto rep = gate(csv(rows));
  std::string c = kb::gate_console(rep);
  EXPECT_TRUE(contains(c,
                       "\ninconclusive: 2 keys too noisy to gate (history noise above "
                       "--max-noise; quieten the measurement): gemv [BS=4096;D=8192]"))
      << c;
  EXPECT_FALSE(contains(c, "\ninconclusive gemv")) << c;
  std::string md = kb::gate_markdown(rep);
  EXPECT_TRUE(contains(md, "2 keys too noisy to gate")) << md;
  EXPECT_FALSE(contains(md, "| inconclusive |")) << md;
}

TEST(KgateAttempts, NoiseReport) {
  // 12 runs: gemv wobbles by 0.1% with one run whose fastest call is 5% off
  // (a mode) and two variants; mlp by 2%.
  std::vector<kb::Record> rows;
  for (int i = 0; i < 12; ++i) {
    kb::Record g = row("gemv", 1000 + (i % 3), "r" + std::to_string(i));
    g.min_us = i == 7 ? 105 : 100 + 0.1 * (i % 3);
    g.variant = i < 6 ? "a" : "b;inject=5%";
    kb::Record m = row("mlp", 1000 * (1 + 0.02 * ((i % 3) - 1)), "r" + std::to_string(i));
    m.variant = i < 6 ? "b" : "b;inject=3%";
    rows.push_back(g);
    rows.push_back(m);
  }
  rows.push_back(row("gemv", 1, "r11/2"));  // re-measurements do not count
  kb::History h;
  h.add_text(csv(rows), "n.csv");
  h.finish();
  kb::NoiseReport rep = kb::noise_report(h);
  ASSERT_EQ(rep.keys.size(), 2u);
  EXPECT_EQ(rep.keys[0].name, "mlp");  // noisiest first
  EXPECT_NEAR(rep.keys[0].noise, 0.02 * 1.4826, 1e-6);
  EXPECT_EQ(rep.keys[0].variants, 1);
  EXPECT_EQ(rep.keys[1].runs, 12);
  EXPECT_EQ(rep.keys[1].variants, 2);
  ASSERT_EQ(rep.keys[1].mode_runs.size(), 1u);
  EXPECT_EQ(rep.keys[1].mode_runs[0], "r7");
  EXPECT_TRUE(rep.keys[1].mode_slow[0]);  // its fastest call took 5% longer
  EXPECT_TRUE(contains(kb::noise_console(rep), "1: r7 (slow)")) << kb::noise_console(rep);
  std::string c = kb::noise_csv(rep);
  EXPECT_EQ(c.substr(0, c.find('\n')),
            "name,metric,dtype,shape,arch,device,runs,median,noise_rel,noise_class,variants,"
            "modes,mode_runs,boards,board_spread,noise_all_boards,timed_us,bar,meets_bar");
  // No median_us in these rows: no timed work, no bar (test_kgate_noise.cpp).
  EXPECT_TRUE(contains(c, ",12,1001,0.00148112,<=0.5%,2,1,r7,1,0,0.00148112,,,\n")) << c;
  EXPECT_TRUE(contains(c, "\nmlp,")) << c;
  EXPECT_TRUE(contains(kb::noise_markdown(rep), "| 2.97% | - | - | 12 |"))
      << kb::noise_markdown(rep);
  EXPECT_STREQ(kb::noise_class(0.01), "<=1%");
  EXPECT_STREQ(kb::noise_class(0.0301), ">3%");
}

// Two boards 3% apart, 11 runs each, each quiet (+-0.1%): the noise is each board's own
// (a nightly runs on one), the spread between them beside it; a run on one
// board is not a mode because the other board's runs are faster. Without
// UUIDs, the same runs are one board: the noise is the pooled one.
TEST(KgateAttempts, NoiseReportPerBoard) {
  auto rows_of = [](bool uuids) {
    std::vector<kb::Record> rows;
    for (int i = 0; i < 22; ++i) {
      const bool b = i >= 11;
      kb::Record g =
          row("mlp", (b ? 970 : 1000) * (1 + 0.001 * ((i % 3) - 1)), "r" + std::to_string(i));
      g.min_us = (b ? 103 : 100) * (1 + 0.001 * (i % 3));
      if (uuids) g.gpu_uuid = b ? "GPU-bbbb" : "GPU-aaaa";
      rows.push_back(g);
    }
    return rows;
  };
  kb::History h;
  h.add_text(csv(rows_of(true)), "b.csv");
  h.finish();
  const kb::NoiseReport rep = kb::noise_report(h);
  ASSERT_EQ(rep.keys.size(), 1u);
  const kb::NoiseKey& k = rep.keys[0];
  EXPECT_EQ(k.boards, 2);
  EXPECT_NEAR(k.noise, 0.001 * 1.4826, 1e-4);
  EXPECT_NEAR(k.board_spread, 30.0 / k.median, 1e-3);
  EXPECT_GT(k.noise_all, 0.01);
  EXPECT_TRUE(k.mode_runs.empty());
  EXPECT_TRUE(contains(kb::noise_console(rep), " apart, all ")) << kb::noise_console(rep);
  kb::History one;
  one.add_text(csv(rows_of(false)), "v1.csv");
  one.finish();
  const kb::NoiseKey& p = kb::noise_report(one).keys[0];
  EXPECT_EQ(p.boards, 1);
  EXPECT_DOUBLE_EQ(p.noise, p.noise_all);
  EXPECT_GT(p.noise, 0.01);
}

#ifdef KBENCH_KGATE_EXE
// The self-test's table: 14 A/A nights of two keys, appended night by
// night as nightly.sh appends them (one transient on night 13, re-measured
// away), and a young key of the last 4 nights with a target; then a copy
// with a 15th night 10% slower on all three.
std::pair<std::vector<kb::Record>, std::vector<kb::Record>> selftest_histories() {
  std::vector<double> quiet = steady(13, 1000, 1000), flat = steady(13, 500, 501);
  quiet[12] = 960;
  auto g = series("gemv", quiet), m = series("mlp", flat), y = series("young", flat);
  for (auto& r : y) r.target = 480;
  std::vector<kb::Record> aa;
  for (size_t i = 0; i < g.size(); ++i) {
    aa.push_back(g[i]);
    aa.push_back(m[i]);
    if (i >= 9) aa.push_back(y[i]);
    if (i == 12) aa = aa + attempts("gemv", 12, {1000, 1001, 999, 1000});
  }
  auto dropped = aa;
  for (auto [name, v] :
       {std::pair<const char*, double>{"gemv", 900}, {"mlp", 450}, {"young", 450}}) {
    kb::Record r = row(name, v, "r14");
    if (std::string(name) == "young") r.target = 480;
    r.timestamp = "2026-01-03T00:00:00Z";
    r.variant = "bound=memory;inject=10%";
    dropped.push_back(r);
  }
  return {aa, dropped};
}

TEST(KgateAttempts, CliSuspectsAndNoise) {
  fs::path d = temp_dir("attempts_cli");
  fs::path f = write(d / "h.csv", csv(series("gemv", steady(30, 1000, 900))));
  Result r = kgate("check --results " + f.string() + " --suspects " + (d / "s.csv").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(
      contains(r.out, "suspects: 1 key(s) to re-measure written to " + (d / "s.csv").string()))
      << r.out;
  EXPECT_TRUE(contains(slurp(d / "s.csv"), "\nr30,gemv,")) << slurp(d / "s.csv");
  // Always written, header only when nothing is suspect; the gate's exit code.
  fs::path ok = write(d / "ok.csv", csv(series("gemv", steady(30, 1000, 1000))));
  EXPECT_EQ(kgate("check --results " + ok.string() + " --suspects " + (d / "s.csv").string()).code,
            0);
  EXPECT_EQ(slurp(d / "s.csv"), "run_id,name,dtype,shape,variant,metric,arch,reason\n");
  // A suspects path that cannot be written: exit 2, the path named.
  Result w = kgate("check --results " + ok.string() + " --suspects " + d.string());
  EXPECT_EQ(w.code, 2) << w.out;
  EXPECT_TRUE(contains(w.out, "kgate: error: cannot write " + d.string())) << w.out;

  Result n = kgate("noise --results " + f.string() + " --csv " + (d / "n.csv").string() +
                   " --markdown " + (d / "n.md").string());
  EXPECT_EQ(n.code, 0) << n.out;
  EXPECT_TRUE(contains(n.out, "kgate noise: 1 keys over 31 runs")) << n.out;
  EXPECT_TRUE(contains(slurp(d / "n.csv"), "\ngemv,memory_bandwidth(GB/s),bfloat16,"));
  EXPECT_EQ(kgate("noise").code, 2);
  EXPECT_EQ(kgate("check --results " + ok.string() + " --max-suspects 0").code, 2);

  // The self-test's table (selftest_histories).
  const auto [aa, dropped] = selftest_histories();
  fs::path aaf = write(d / "aa.csv", csv(aa));
  fs::path df = write(d / "drop.csv", csv(dropped));
  Result t = kgate("selftest-table --aa " + aaf.string() + " --drop 10 " + df.string());
  EXPECT_EQ(t.code, 0) << t.out;
  EXPECT_TRUE(contains(t.out, "A/A false failures: **0 of 4** nights")) << t.out;
  EXPECT_TRUE(contains(t.out, "| 13 | r12 | pass | 1 | - |")) << t.out;
  // The young key is no miss of the history rule's, nor its catch (its
  // target fails it): counted apart.
  EXPECT_TRUE(contains(t.out, "| 10% | 100% (2/2) | - | - | - | 100% (2/2) |")) << t.out;
  EXPECT_TRUE(contains(t.out,
                       "too little history for the history rule (fewer than 10 earlier "
                       "runs): 10% 1 keys"))
      << t.out;
  EXPECT_EQ(kgate("noise --results " + (d / "missing.csv").string()).code, 2);
}

// selftest-table cuts the A/A file into nights at its line starts: with
// CRLF or old-Mac CR line ends (which the CSV reader takes, as LF) the
// table is the LF file's. By LF alone, a CR-only file was one line and
// every night was gated on the whole history.
TEST(KgateAttempts, SelftestTableReadsCrlfAndCrLineEnds) {
  fs::path d = temp_dir("selftest_eol");
  const std::string lf = csv(selftest_histories().second);
  Result want = kgate("selftest-table --aa " + write(d / "lf.csv", lf).string());
  ASSERT_EQ(want.code, 0) << want.out;
  ASSERT_TRUE(contains(want.out, "| 14 | r13 | pass | 0 | - |")) << want.out;
  ASSERT_TRUE(contains(want.out, "| 15 | r14 | FAIL | 0 |")) << want.out;
  for (const std::string eol : {"\r\n", "\r"}) {
    std::string text;
    for (char c : lf) text += c == '\n' ? eol : std::string(1, c);
    Result got = kgate("selftest-table --aa " + write(d / "eol.csv", text).string());
    EXPECT_EQ(got.code, 0) << got.out;
    EXPECT_EQ(got.out, want.out) << (eol == "\r" ? "CR" : "CRLF");
  }
}
#endif

}  // namespace
