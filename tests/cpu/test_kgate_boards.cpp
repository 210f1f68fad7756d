// Boards (docs/gate.md "Boards"): the history rule on histories whose runs
// name their board (CSV schema v2's gpu_uuid). Two H100 boards measured
// 3.4% apart on compute-bound rows: a nightly moved to another board must
// not fail for that, and a real drop must still fail, against the board's
// own runs once it has 3 of them (its level; the boards' noise until --min-history).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "kgate_test_util.h"
#include "reports/gate_result.h"
#include "tools/kgate/boards.h"
#include "tools/kgate/gate.h"

namespace {

using namespace kgt;

const char* kBoardA = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
const char* kBoardB = "GPU-bbbbbbbb-1111-2222-3333-444444444444";
const char* kBoardC = "GPU-cccccccc-1111-2222-3333-444444444444";

kb::GateReport gate(const std::vector<kb::Record>& rows, kb::GateOptions opt = {}) {
  kb::History h;
  h.add_text(csv(rows), "f.csv");
  h.finish();
  return kb::run_gate(h, opt);
}

// By value: the report is usually a temporary.
kb::GateKeyResult only(const kb::GateReport& r) {
  EXPECT_EQ(r.keys.size(), 1u);
  return r.keys.at(0);
}

// A piece of history: `values` measured on `board` ("" = a schema v1 row).
struct Stretch {
  std::vector<double> values;
  const char* board;
};

// Runs r0, r1, ... of one MLP key, each stretch on its board, in order.
std::vector<kb::Record> history(const std::vector<Stretch>& stretches) {
  std::vector<double> all;
  std::vector<const char*> boards;
  for (const auto& s : stretches)
    for (double v : s.values) {
      all.push_back(v);
      boards.push_back(s.board);
    }
  return mlp_rows_on_boards(all, boards);
}

const std::string kDefaultNote =
    "judged against 20 runs on 1 other board; boards of one model differ by up to 3.4% on "
    "compute-bound rows (H100, measured): a drop within --board-gap 4.0% is inconclusive";

// (a) 20 nights on A, tonight on B 3.5% lower: the board, not the code.
TEST(KgateBoards, ANightOnANewBoardWithinTheBoardGapIsInconclusiveWithANote) {
  auto rows = history({{nights(20, 800), kBoardA}, {{772}, kBoardB}});
  auto rep = gate(rows);
  const auto& k = only(rep);
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive) << k.why;
  EXPECT_EQ(k.rule, "new board");
  EXPECT_EQ(k.history_runs, 20);
  EXPECT_TRUE(contains(k.why,
                       "3.5% worse than the median of the last 20 runs, beyond --min-gap "
                       "3.0% and the history's noise"))
      << k.why;
  EXPECT_TRUE(contains(k.why, "boards differ by up to 4.0% (--board-gap)")) << k.why;
  EXPECT_EQ(k.note,
            "first runs on board GPU-bbbbbbbb\u2026 (0 runs earlier on it): " + kDefaultNote)
      << k.note;
  EXPECT_FALSE(k.suspect);  // measuring again on B cannot tell B from the code
  EXPECT_EQ(rep.exit_code(), 0);
  kb::GateOptions strict;
  strict.strict = true;
  EXPECT_EQ(gate(rows, strict).exit_code(), 1);

  // The note in every format.
  EXPECT_TRUE(contains(kb::gate_console(rep), "\nnote mlp_layer_norm_gelu [tokens=4096;D=16384]"))
      << kb::gate_console(rep);
  EXPECT_TRUE(contains(kb::gate_console(rep), kDefaultNote));
  EXPECT_TRUE(contains(kb::gate_markdown(rep), "first runs on board GPU-bbbbbbbb"));
  EXPECT_TRUE(contains(kb::gate_junit(rep), "<system-out>note: first runs on board GPU-bbbbbbbb"))
      << kb::gate_junit(rep);
  EXPECT_TRUE(contains(kb::gate_html(rep), "first runs on board GPU-bbbbbbbb"));
  EXPECT_EQ(kb::suspects_csv(rep), "run_id,name,dtype,shape,variant,metric,arch,reason\n");

  // Below its target as well: that fails, and only that.
  auto below = rows;
  below.back().target = 820;  // 5.9% short, tolerance 5%
  const auto& b = only(gate(below));
  EXPECT_EQ(b.status, kb::GateStatus::fail) << b.why;
  EXPECT_EQ(b.rule, "target");

  // A smaller --board-gap lets the same drop fail.
  kb::GateOptions tight;
  tight.board.board_gap = 0.03;
  const auto& t = only(gate(rows, tight));
  EXPECT_EQ(t.status, kb::GateStatus::fail) << t.why;
  EXPECT_TRUE(contains(t.note,
                       "a drop within --board-gap 3.0% is inconclusive; this drop (3.5%) "
                       "is beyond it"))
      << t.note;
}

// (b) After --min-history runs on B, B is judged against itself.
TEST(KgateBoards, ABoardWithEnoughRunsIsJudgedAgainstItself) {
  auto steady = history({{nights(20, 800), kBoardA}, {nights(12, 772), kBoardB}, {{771}, kBoardB}});
  const auto& s = only(gate(steady));
  EXPECT_EQ(s.status, kb::GateStatus::pass) << s.why;
  EXPECT_EQ(s.history_runs, 12);
  EXPECT_NEAR(*s.baseline, 772, 1);
  EXPECT_EQ(s.note, "");

  auto rows = history({{nights(20, 800), kBoardA}, {nights(12, 772), kBoardB}, {{740}, kBoardB}});
  auto rep = gate(rows);
  const auto& k = only(rep);
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_EQ(k.rule, "history");
  EXPECT_EQ(k.history_runs, 12);
  EXPECT_NEAR(*k.baseline, 772, 1);
  EXPECT_NEAR(*k.change, -0.041, 0.002);
  EXPECT_TRUE(contains(k.why, "4.1% worse than the median of the last 12 runs")) << k.why;
  EXPECT_EQ(k.note, "");
  EXPECT_TRUE(k.suspect);
  // Its last good run is B's last, not A's (whose value B never reaches).
  ASSERT_TRUE(k.last_good);
  EXPECT_EQ(k.last_good->run, "r31");
  EXPECT_EQ(k.history_runs_labels.front(), "r20");  // the sparkline is B's runs
  EXPECT_EQ(rep.exit_code(), 1);

  // Pooled with A (no boards named), it fails too, but for B's nights
  // being below A's: today's verdict, and B's first nights' false failure.
  const auto& pooled = only(gate(without_boards(rows)));
  EXPECT_EQ(pooled.status, kb::GateStatus::fail) << pooled.why;
  EXPECT_TRUE(contains(pooled.why, "the last 7 runs are 3.5% worse (their median)")) << pooled.why;
}

// The pool moves from A to B and stays: no night fails, from B's first
// to its 13th. Without boards every one of them fails (the newest run, then
// the newest few together, below A's median) until B's runs fill half the
// window.
TEST(KgateBoards, APoolThatMovesToAnotherBoardNeverFails) {
  int failed_without_boards = 0;
  for (size_t n = 1; n <= 13; ++n) {
    auto rows = history({{nights(20, 800), kBoardA}, {nights(n, 772), kBoardB}});
    const auto& k = only(gate(rows));
    EXPECT_NE(k.status, kb::GateStatus::fail) << "B night " << n << ": " << k.why;
    if (n <= kb::kMinRunsPerBoard)
      EXPECT_EQ(k.rule, "new board") << "B night " << n << ": " << k.why;
    else
      EXPECT_EQ(k.status, kb::GateStatus::pass) << "B night " << n << ": " << k.why;
    failed_without_boards += only(gate(without_boards(rows))).status == kb::GateStatus::fail;
  }
  EXPECT_EQ(failed_without_boards, 13);
}

// A third board C's first night: A and B (3+ runs each) are 3.5% apart,
// the key's observed spread.
TEST(KgateBoards, ANewBoardsFirstNightsUseTheKeysOwnSpread) {
  auto rows = history({{nights(20, 800), kBoardA}, {nights(4, 772), kBoardB}, {{772}, kBoardC}});
  const auto& k = only(gate(rows));
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive) << k.why;
  EXPECT_EQ(k.rule, "new board");
  EXPECT_TRUE(contains(k.note,
                       "first runs on board GPU-cccccccc\u2026 (0 runs earlier on it): "
                       "judged against 24 runs on 2 other boards; on this key the medians "
                       "of its 2 boards differ by up to 3.5%: a drop within 2 x that, "
                       "7.0%, is inconclusive"))
      << k.note;
}

// From kMinRunsPerBoard runs on a board (fewer than --min-history): its own
// runs' median, judged with the noise the window's boards show once each
// board's offset is out. B sits 3.5% below A: its level, not A's, is the
// baseline, so a 3.6% drop on B fails where the pool would allow 7%.
TEST(KgateBoards, ABoardOfFewRunsIsJudgedOnItsOwnLevelWithThePooledNoise) {
  const auto b = history({{nights(20, 800), kBoardA}, {nights(3, 772), kBoardB}, {{772}, kBoardB}});
  EXPECT_EQ(only(gate(b)).status, kb::GateStatus::pass) << only(gate(b)).why;
  const auto drop =
      history({{nights(20, 800), kBoardA}, {nights(3, 772), kBoardB}, {{745}, kBoardB}});
  const auto& k = only(gate(drop));
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_EQ(k.history_runs, 3);
  EXPECT_TRUE(contains(k.why, "3.6% worse than the median of the last 3 runs")) << k.why;
  EXPECT_TRUE(contains(k.note,
                       "judged against its 3 earlier runs on board GPU-bbbbbbbb\u2026, with the "
                       "run-to-run noise of the window's 2 boards, each run against its own "
                       "board's ("))
      << k.note;
  EXPECT_TRUE(contains(k.note, " from 21 runs)")) << k.note;
  // Two runs on B: too few for a level; the pool with the allowance decides.
  const auto two =
      history({{nights(20, 800), kBoardA}, {nights(2, 772), kBoardB}, {{745}, kBoardB}});
  EXPECT_TRUE(contains(only(gate(two)).note, "(2 runs earlier on it): judged against 20 runs"))
      << only(gate(two)).note;
  // Boards whose runs scatter: the pooled noise explains the drop.
  std::vector<double> loud;
  for (int i = 0; i < 20; ++i) loud.push_back(800 * (1 + (i % 2 ? 0.02 : -0.02)));
  const auto noisy = history({{loud, kBoardA}, {nights(3, 772), kBoardB}, {{745}, kBoardB}});
  EXPECT_NE(only(gate(noisy)).status, kb::GateStatus::fail) << only(gate(noisy)).why;
}

// (c) Tonight on A, where all 20 nights were: a drop fails as it always did.
TEST(KgateBoards, ADropOnTheSameBoardFailsAsBefore) {
  auto rows = history({{nights(20, 800), kBoardA}, {{760}, kBoardA}});
  auto rep = gate(rows);
  const auto& k = only(rep);
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_EQ(k.rule, "history");
  EXPECT_EQ(k.history_runs, 20);
  EXPECT_NEAR(*k.change, -0.05, 0.002);
  EXPECT_EQ(k.note, "");
  EXPECT_TRUE(k.suspect);
  const auto& v1 = only(gate(without_boards(rows)));
  EXPECT_EQ(v1.why, k.why);
  EXPECT_EQ(*v1.baseline, *k.baseline);
}

// (d) A new board 12.5% lower: beyond what boards differ by.
TEST(KgateBoards, ADropBeyondTheBoardGapFailsOnANewBoard) {
  auto rows = history({{nights(20, 800), kBoardA}, {{700}, kBoardB}});
  auto rep = gate(rows);
  const auto& k = only(rep);
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_EQ(k.rule, "history");
  EXPECT_TRUE(contains(k.why, "12.5% worse than the median of the last 20 runs")) << k.why;
  EXPECT_EQ(k.note, "first runs on board GPU-bbbbbbbb\u2026 (0 runs earlier on it): " +
                        kDefaultNote + "; this drop (12.5%) is beyond it")
      << k.note;
  EXPECT_TRUE(k.suspect);
  EXPECT_EQ(rep.exit_code(), 1);
  EXPECT_TRUE(contains(kb::gate_console(rep), "this drop (12.5%) is beyond it"));
}

// (e) The same histories without gpu_uuid (schema v1), or with it only on
// the newest run (a history begun before v2): today's verdicts, no notes.
TEST(KgateBoards, HistoriesWithoutBoardsAreGatedAsBefore) {
  struct Case {
    std::vector<Stretch> h;
    kb::GateStatus v1;  // the verdict without any board named
  };
  const std::vector<Case> cases = {
      {{{nights(20, 800), kBoardA}, {{772}, kBoardB}}, kb::GateStatus::fail},       // (a)
      {{{nights(20, 800), kBoardA}, {nights(12, 772), kBoardB}, {{740}, kBoardB}},  // (b)
       kb::GateStatus::fail},
      {{{nights(20, 800), kBoardA}, {{760}, kBoardA}}, kb::GateStatus::fail},  // (c)
      {{{nights(20, 800), kBoardA}, {{700}, kBoardB}}, kb::GateStatus::fail},  // (d)
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    auto rows = without_boards(history(cases[i].h));
    const auto& k = only(gate(rows));
    EXPECT_EQ(k.status, cases[i].v1) << "case " << i << ": " << k.why;
    EXPECT_NE(k.rule, "new board") << "case " << i;
    EXPECT_EQ(k.note, "") << "case " << i;
    // v1 history, v2 newest run: the old runs may have been on that board.
    rows.back().gpu_uuid = kBoardB;
    const auto& mixed = only(gate(rows));
    EXPECT_EQ(mixed.status, cases[i].v1) << "case " << i << ": " << mixed.why;
    EXPECT_EQ(mixed.why, k.why) << "case " << i;
    EXPECT_EQ(mixed.note, "") << "case " << i;
  }
}

// (f) Boards A and B in the window, 2% apart (>= 3 runs each): the key's
// own spread, twice, is the allowance for a third board C.
TEST(KgateBoards, TheKeysOwnSpreadBetweenBoardsIsTheAllowance) {
  auto with_c = [](double c) {
    return history({{nights(20, 800), kBoardA}, {nights(4, 784), kBoardB}, {{c}, kBoardC}});
  };
  // C 1.5% below B (3.5% below the baseline): within 2 x 2%.
  const auto& near = only(gate(with_c(784 * 0.985)));
  EXPECT_EQ(near.status, kb::GateStatus::inconclusive) << near.why;
  EXPECT_EQ(near.rule, "new board");
  EXPECT_TRUE(contains(near.why,
                       "boards differ by up to 4.0% on it (twice the spread of its "
                       "boards)"))
      << near.why;
  EXPECT_TRUE(contains(near.note,
                       "judged against 24 runs on 2 other boards; on this key the "
                       "medians of its 2 boards differ by up to 2.0%: a drop within 2 "
                       "x that, 4.0%, is inconclusive"))
      << near.note;
  // C 6% below B (7.9% below the baseline): beyond it.
  const auto& far = only(gate(with_c(784 * 0.94)));
  EXPECT_EQ(far.status, kb::GateStatus::fail) << far.why;
  EXPECT_TRUE(contains(far.note, "is beyond it")) << far.note;

  // A memory-bound row: boards within 0.3%, so a 3.5% drop on a new board
  // is no board's doing (the default gap would have let it through).
  auto mem = history({{nights(20, 800), kBoardA}, {nights(4, 797.6), kBoardB}, {{772}, kBoardC}});
  const auto& m = only(gate(mem));
  EXPECT_EQ(m.status, kb::GateStatus::fail) << m.why;
  EXPECT_TRUE(contains(m.note,
                       "differ by up to 0.3%: a drop within 2 x that, 0.6%, is "
                       "inconclusive; this drop (3.5%) is beyond it"))
      << m.note;
}

// The target file's `board_spread` for the key (boards of the model
// measured by kgate bringup --all-runs) stands for the window's spread
// where the window shows less of it: twice it is the allowance.
kb::GateOptions spread_in_file(double spread) {
  kb::GateOptions opt;
  kb::TargetFile f;
  f.path = "h200.json";
  f.gpu = kH100;
  f.match = {"H100"};
  kb::TargetEntry e;
  e.name = "mlp_layer_norm_gelu";
  e.metric = "tflops";
  e.dtype = "bfloat16";
  e.shape = "tokens=4096;D=16384";
  e.target = 100;  // far below: only the history rule speaks
  e.board_spread = spread;
  f.targets.push_back(e);
  opt.targets.push_back(f);
  return opt;
}

TEST(KgateBoards, TheTargetFilesBoardSpreadIsTheAllowance) {
  // 20 nights on A, tonight on B 6% lower: beyond the default 4% gap...
  auto rows = history({{nights(20, 800), kBoardA}, {{752}, kBoardB}});
  ASSERT_EQ(only(gate(rows, spread_in_file(0.001))).target, 100.0);  // the entry applies
  EXPECT_EQ(only(gate(rows)).status, kb::GateStatus::fail);
  // ...within twice a measured 3.5% spread of the model's boards.
  const auto& k = only(gate(rows, spread_in_file(0.035)));
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive) << k.why;
  EXPECT_EQ(k.rule, "new board");
  EXPECT_TRUE(contains(k.why, "differ by up to 7.0% on it (twice the target file's board_spread)"))
      << k.why;
  EXPECT_TRUE(contains(k.note,
                       "the target file measured boards of this model 3.5% apart (board_spread): "
                       "a drop within 2 x that, 7.0%, is inconclusive"))
      << k.note;
  // A quiet key's measured 0.3% is tighter than the default: 6% fails.
  const auto& tight = only(gate(rows, spread_in_file(0.003)));
  EXPECT_EQ(tight.status, kb::GateStatus::fail) << tight.why;
  EXPECT_TRUE(contains(tight.note, "0.6%, is inconclusive; this drop (6.0%) is beyond it"))
      << tight.note;
  // The window's own spread wins where it is the larger: A and B 2% apart,
  // tonight on C 3.5% below the baseline: within 2 x 2%, not 2 x 0.3%.
  auto three = history({{nights(20, 800), kBoardA}, {nights(4, 784), kBoardB}, {{772}, kBoardC}});
  const auto& own = only(gate(three, spread_in_file(0.003)));
  EXPECT_EQ(own.status, kb::GateStatus::inconclusive) << own.why;
  EXPECT_TRUE(contains(own.why, "twice the spread of its boards")) << own.why;
  // On the board's own runs (same board), the file's spread plays no part.
  auto same = history({{nights(20, 800), kBoardA}, {{752}, kBoardA}});
  EXPECT_EQ(only(gate(same, spread_in_file(0.035))).status, kb::GateStatus::fail);
}

// A run on several GPUs is judged as before (the GPUs are attempts); a run
// re-measured on its board keeps the board rule.
TEST(KgateBoards, SeveralGpusAsBeforeReMeasurementsKeepTheBoard) {
  auto rows = history({{nights(20, 800), kBoardA}, {{772}, kBoardB}});
  // The newest run on B and C at once.
  auto both = rows;
  kb::Record c = both.back();
  c.gpu_uuid = kBoardC;
  c.gpu_index = "1";
  c.device = "cuda:1";
  both.back().device = "cuda:0";
  both.push_back(c);
  auto rep = gate(both);
  const auto& k = only(rep);
  EXPECT_EQ(k.attempts, 2);
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_EQ(k.note, "");
  const auto& v1 = only(gate(without_boards(both)));
  EXPECT_EQ(v1.status, k.status);
  EXPECT_EQ(v1.why, k.why);

  // The newest run on B, re-measured on B: still B's first night.
  auto remeasured = rows;
  for (double v : {771.0, 773.0, 772.0}) {
    kb::Record a = rows.back();
    a.run_id = "r20/" + std::to_string(remeasured.size() - 19);
    a.actual = v;
    a.timestamp = "2026-01-02T00:00:00Z";
    remeasured.push_back(a);
  }
  const auto& re = only(gate(remeasured));
  EXPECT_EQ(re.attempts, 4);
  EXPECT_EQ(re.status, kb::GateStatus::inconclusive) << re.why;
  EXPECT_EQ(re.rule, "new board");
  EXPECT_TRUE(contains(re.note, "first runs on board GPU-bbbbbbbb")) << re.note;
  EXPECT_TRUE(contains(re.note, "re-measured: median of 3 re-measurement(s)")) << re.note;
}

// One board throughout, named: every verdict and number as without boards
// (the self-test table and the noise report are unchanged).
TEST(KgateBoards, OneBoardThroughoutIsGatedExactlyAsBefore) {
  std::vector<std::vector<double>> cases = {steady(30, 1000, 1001), steady(30, 1000, 900),
                                            steady(3, 1000, 700), steady(60, 1000, 960)};
  std::vector<double> sustained;
  for (int i = 0; i < 60; ++i) sustained.push_back(1000 * (1 + 0.02 * ((i * 7) % 5 - 2) / 2));
  for (int i = 0; i < 6; ++i) sustained.push_back(955);
  cases.push_back(sustained);
  for (const auto& v : cases) {
    auto plain = series("gemv", v);
    auto named = plain;
    for (auto& r : named) r.gpu_uuid = kBoardA;
    const auto& a = only(gate(plain));
    const auto& b = only(gate(named));
    EXPECT_EQ(a.status, b.status) << b.why;
    EXPECT_EQ(a.rule, b.rule);
    EXPECT_EQ(a.why, b.why);
    EXPECT_EQ(a.note, b.note);
    EXPECT_EQ(a.history_runs, b.history_runs);
    EXPECT_EQ(a.suspect, b.suspect);
  }
}

TEST(KgateBoards, BoardOfARun) {
  EXPECT_EQ(kb::short_board(kBoardA), "GPU-aaaaaaaa\u2026");
  EXPECT_EQ(kb::short_board("GPU-1"), "GPU-1");
  kb::HistoryRuleOptions rule;
  kb::BoardOptions opt;
  // No board for the newest run, or every earlier run on it: pooled.
  EXPECT_EQ(kb::plan_boards({1, 2}, {0, 1}, kb::kUnknownBoard, false, rule, opt).mode,
            kb::BoardMode::pooled);
  EXPECT_EQ(kb::plan_boards({1, 2}, {0, 0}, 0, false, rule, opt).mode, kb::BoardMode::pooled);
  // A window with a run on several GPUs: judged against them, default gap.
  auto p = kb::plan_boards({1, 2}, {kb::kSeveralBoards, 1}, 0, false, rule, opt);
  EXPECT_EQ(p.mode, kb::BoardMode::new_board);
  EXPECT_EQ(p.other_runs, 2);
  EXPECT_EQ(p.several_runs, 1);
  EXPECT_EQ(p.other_boards, 1);
  EXPECT_DOUBLE_EQ(p.allowance, 0.04);
  // Only runs inside the window count: an unnamed run beyond it does not
  // stop the rule.
  rule.window = 3;
  EXPECT_EQ(kb::plan_boards({1, 1, 1, 1}, {kb::kUnknownBoard, 1, 1, 1}, 0, false, rule, opt).mode,
            kb::BoardMode::new_board);
  EXPECT_EQ(kb::plan_boards({1, 1, 1, 1}, {1, kb::kUnknownBoard, 1, 1}, 0, false, rule, opt).mode,
            kb::BoardMode::pooled);
  // Times: the spread is relative to the faster board.
  rule.window = 60;
  auto t = kb::plan_boards({10, 10, 10, 11, 11, 11}, {1, 1, 1, 2, 2, 2}, 0, true, rule, opt);
  EXPECT_TRUE(t.observed);
  EXPECT_NEAR(t.spread, 0.10, 1e-12);
  EXPECT_NEAR(t.allowance, 0.20, 1e-12);
}

#ifdef KBENCH_KGATE_EXE
TEST(KgateBoards, BoardGapOption) {
  fs::path d = temp_dir("boards_cli");
  fs::path f = write(d / "h.csv", csv(history({{nights(20, 800), kBoardA}, {{772}, kBoardB}})));
  Result def = kgate("check --results " + f.string());
  EXPECT_EQ(def.code, 0) << def.out;
  EXPECT_TRUE(contains(def.out, "first runs on board GPU-bbbbbbbb")) << def.out;
  Result tight = kgate("check --results " + f.string() + " --board-gap 0.03");
  EXPECT_EQ(tight.code, 1) << tight.out;
  Result bad = kgate("check --results " + f.string() + " --board-gap 1");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_TRUE(contains(bad.out, "--board-gap 1: expected a number in [0.00, 1.00)")) << bad.out;
  EXPECT_TRUE(contains(kgate("--help").out, "--board-gap REL"));
}
#endif

// Nights of four GPUs at once (kbench run --device all): each night's four
// rows of the MLP key on boards A..D, GPU g at `level` x (1 + noise[n][g]).
std::vector<kb::Record> four_gpu_nights(const std::vector<std::vector<double>>& per_night) {
  const char* boards[] = {kBoardA, kBoardB, kBoardC, "GPU-dddddddd-1111-2222-3333-444444444444"};
  std::vector<kb::Record> out;
  for (size_t n = 0; n < per_night.size(); ++n) {
    std::vector<double> v = per_night[n];
    std::vector<const char*> b(boards, boards + v.size());
    auto rows = mlp_rows_on_boards(v, b);
    for (size_t g = 0; g < rows.size(); ++g) {
      rows[g].run_id = "r" + std::to_string(n);
      rows[g].timestamp = minute_stamp(n);
      rows[g].device = "cuda:" + std::to_string(g);
      rows[g].gpu_index = std::to_string(g);
    }
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

TEST(KgateBoards, AHistoryOfFourGpuNightsIsReadAsOneAttemptsNoise) {
  // The rule itself: earlier values that are medians of 4 have a median's
  // noise; the thresholds read it as one attempt's, the noise reported stays.
  std::vector<double> s;
  for (int i = 0; i < 20; ++i) s.push_back(800 * (1 + 0.012 * ((i * 7) % 5 - 2) / 2.0));
  s.push_back(800 * 0.955);
  kb::HistoryRuleOptions opt;
  const auto once = kb::history_rule(s, false, opt, 4, 1);
  const auto four = kb::history_rule(s, false, opt, 4, 4);
  EXPECT_DOUBLE_EQ(four.noise, once.noise);
  EXPECT_NEAR(four.explained / once.explained, 1 / std::sqrt(0.5 + 0.5 * kb::median_variance(4)),
              1e-9);
  EXPECT_EQ(kb::history_attempts_of({}), 1);
  EXPECT_EQ(kb::history_attempts_of({1, 5, 1}), 1);  // one GPU, a re-measured night
  EXPECT_EQ(kb::history_attempts_of({4, 4, 1, 4}), 4);

  // The gate: 20 nights of 4 GPUs whose medians wobble by +-1.2% (each
  // GPU around its night's level), tonight all four 4.5% low. Against the
  // history's own nights that is within the noise; held to a median's
  // threshold twice (before) it failed.
  std::vector<std::vector<double>> nights4;
  for (double v : s) {
    const double f = v / 800;
    nights4.push_back({800 * f * 0.999, 800 * f * 1.001, 800 * f * 0.998, 800 * f * 1.002});
  }
  const auto& k = only(gate(four_gpu_nights(nights4)));
  EXPECT_EQ(k.attempts, 4);
  EXPECT_NE(k.status, kb::GateStatus::fail) << k.why;
  EXPECT_GT(k.change, -0.047);
  // A drop well beyond the history's noise still fails.
  nights4.back() = {800 * 0.90 * 0.999, 800 * 0.90 * 1.001, 800 * 0.90 * 0.998, 800 * 0.90 * 1.002};
  const auto& big = only(gate(four_gpu_nights(nights4)));
  EXPECT_EQ(big.status, kb::GateStatus::fail) << big.why;
}

}  // namespace

namespace {

// Every row of `rows` tagged with one build; the newest run's own fields after.
std::vector<kb::Record> one_build(std::vector<kb::Record> rows, const std::string& now_sha,
                                  const std::string& now_driver = "580.159.04") {
  for (auto& r : rows) {
    r.git_sha = "0123456789ab";
    r.driver = "580.159.04";
    r.cuda = "13.0";
  }
  rows.back().git_sha = now_sha;
  rows.back().driver = now_driver;
  return rows;
}

// (h) A new board 12.5% lower, beyond what boards differ by, where the key's
// last good run is of tonight's very build (commit, driver, CUDA): only the
// board changed, so the drop is the board's. Any other change keeps (d).
TEST(KgateBoards, ADropBeyondTheGapIsTheBoardsWhenNothingElseChanged) {
  const auto rows = history({{nights(20, 800), kBoardA}, {{700}, kBoardB}});
  const auto& same = only(gate(one_build(rows, "0123456789ab")));
  EXPECT_EQ(same.status, kb::GateStatus::inconclusive) << same.why;
  EXPECT_EQ(same.rule, "new board");
  EXPECT_FALSE(same.suspect);
  EXPECT_TRUE(contains(same.why, "its last good run is of the same build, driver and CUDA"))
      << same.why;
  EXPECT_TRUE(contains(same.note,
                       "this drop (12.5%) is beyond it, but the key's last good run r19 "
                       "is of this very build (commit 0123456789ab, driver "
                       "580.159.04, CUDA 13.0): only the board changed"))
      << same.note;
  // Another commit, local changes, an unknown commit, another driver: the code may
  // have changed, so the drop fails as (d).
  for (const auto& [sha, driver] :
       std::vector<std::pair<std::string, std::string>>{{"ba9876543210", "580.159.04"},
                                                        {"0123456789ab-dirty", "580.159.04"},
                                                        {"unknown", "580.159.04"},
                                                        {"0123456789ab", "575.57.08"}}) {
    auto other = one_build(rows, sha, driver);
    if (sha == "unknown")
      for (auto& r : other) r.git_sha = "unknown";
    const auto& k = only(gate(other));
    EXPECT_EQ(k.status, kb::GateStatus::fail) << sha << " " << driver << ": " << k.why;
    EXPECT_TRUE(contains(k.note, "this drop (12.5%) is beyond it")) << k.note;
    EXPECT_FALSE(contains(k.note, "only the board changed")) << k.note;
  }
  // A slowdown injected tonight (the gate's self-test) stands for a code change.
  auto injected = one_build(rows, "0123456789ab");
  injected.back().variant += ";inject=12.5%";
  const auto& inj = only(gate(injected));
  EXPECT_EQ(inj.status, kb::GateStatus::fail) << inj.why;
  EXPECT_FALSE(contains(inj.note, "only the board changed")) << inj.note;
  // So does another kernel than the last good run's (another tuning table).
  auto retuned = one_build(rows, "0123456789ab");
  for (size_t i = 0; i + 1 < retuned.size(); ++i) retuned[i].variant += ";algo=7";
  EXPECT_NE(only(gate(retuned)).rule, "new board");
  // On a board the key knows, the same build is no excuse: (c) fails as before.
  const auto known = history({{nights(20, 800), kBoardA}, {{700}, kBoardA}});
  const auto& k = only(gate(one_build(known, "0123456789ab")));
  EXPECT_EQ(k.status, kb::GateStatus::fail) << k.why;
}

}  // namespace
