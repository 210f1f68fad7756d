// `kgate noise`'s verdict against issue 24's bar: a rate key's run-to-run
// noise at most 0.5% where its timed work (the median of its rows'
// median_us) is 20 us or more, at most 1.5% under 20 us; no bar for times
// (the probe's launch(us)) or for rows without median_us.
#include <gtest/gtest.h>

#include "kgate_test_util.h"
#include "tools/kgate/noise.h"

namespace {

using namespace kgt;

// 12 runs of one key: values 1000 * (1 - d, 1, 1 + d), four times each, so
// that MAD = d * 1000 and the noise is 1.4826 * d; each run's median_us
// around `us` (us * 0.95, us, us * 1.05: the median is `us`).
std::vector<kb::Record> key_rows(const std::string& name, const std::string& metric, double noise,
                                 double us, int runs = 12) {
  const double d = noise / 1.4826;
  std::vector<kb::Record> rows;
  for (int i = 0; i < runs; ++i) {
    kb::Record r = row(name, 1000 * (1 + d * ((i % 3) - 1)), "r" + std::to_string(i));
    r.metric = metric;
    if (us > 0) r.median_us = us * (1 + 0.05 * ((i % 3) - 1));
    rows.push_back(r);
  }
  return rows;
}

std::vector<kb::Record> operator+(std::vector<kb::Record> a, const std::vector<kb::Record>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

kb::NoiseReport report_of(const std::vector<kb::Record>& rows) {
  kb::History h;
  h.add_text(csv(rows), "n.csv");
  h.finish();
  return kb::noise_report(h);
}

const kb::NoiseKey& key(const kb::NoiseReport& r, const std::string& name) {
  for (const auto& k : r.keys)
    if (k.name == name) return k;
  ADD_FAILURE() << "no key " << name;
  return r.keys.at(0);
}

// The line of `name` in the CSV text.
std::string csv_line_of(const std::string& c, const std::string& name) {
  size_t at = c.find("\n" + name + ",");
  if (at == std::string::npos) return "";
  return c.substr(at + 1, c.find('\n', at + 1) - at - 1);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(KgateNoiseBar, BarByTimedWork) {
  EXPECT_DOUBLE_EQ(kb::noise_bar(30), 0.005);
  EXPECT_DOUBLE_EQ(kb::noise_bar(20), 0.005);  // 20 us is "20 us or more"
  EXPECT_DOUBLE_EQ(kb::noise_bar(19.99), 0.015);
  EXPECT_DOUBLE_EQ(kb::noise_bar(10), 0.015);
  EXPECT_DOUBLE_EQ(kb::noise_bar(4.3), 0.015);
}

// The brief's cases, one key each, and the summary's count.
TEST(KgateNoiseBar, VerdictPerKey) {
  std::vector<kb::Record> rows = key_rows("long_over", "tflops", 0.006, 30);
  rows = rows + key_rows("short_ok", "memory_bandwidth(GB/s)", 0.006, 10);
  rows = rows + key_rows("short_over", "memory_bandwidth(GB/s)", 0.02, 10);
  rows = rows + key_rows("long_ok", "gemm_share", 0.003, 400);
  // A time, not a rate: no bar although its rows have median_us.
  rows = rows + key_rows("launch_probe", "launch(us)", 0.014, 5);
  // A rate without median_us (a seed-mean row): no timed work, no bar.
  rows = rows + key_rows("seed_mean", "memory_bandwidth(GB/s)", 0.001, 0);
  const kb::NoiseReport rep = report_of(rows);
  ASSERT_EQ(rep.keys.size(), 6u);

  const kb::NoiseKey& lo = key(rep, "long_over");
  EXPECT_NEAR(lo.noise, 0.006, 1e-6);
  ASSERT_TRUE(lo.timed_us.has_value());
  EXPECT_DOUBLE_EQ(*lo.timed_us, 30);
  EXPECT_DOUBLE_EQ(lo.bar, 0.005);
  EXPECT_FALSE(lo.meets_bar);

  const kb::NoiseKey& so = key(rep, "short_ok");
  EXPECT_DOUBLE_EQ(so.bar, 0.015);
  EXPECT_TRUE(so.meets_bar);

  const kb::NoiseKey& sv = key(rep, "short_over");
  EXPECT_NEAR(sv.noise, 0.02, 1e-6);
  EXPECT_DOUBLE_EQ(sv.bar, 0.015);
  EXPECT_FALSE(sv.meets_bar);

  EXPECT_TRUE(key(rep, "long_ok").meets_bar);

  const kb::NoiseKey& lp = key(rep, "launch_probe");
  ASSERT_TRUE(lp.timed_us.has_value());
  EXPECT_DOUBLE_EQ(lp.bar, 0);
  EXPECT_FALSE(lp.meets_bar);

  const kb::NoiseKey& sm = key(rep, "seed_mean");
  EXPECT_FALSE(sm.timed_us.has_value());
  EXPECT_DOUBLE_EQ(sm.bar, 0);

  const std::string con = kb::noise_console(rep);
  EXPECT_TRUE(contains(con, "; 2 of 4 rate keys meet their bar\n")) << con;
  EXPECT_TRUE(contains(con, "\n0.60%  0.5% OVER        30 ")) << con;
  EXPECT_TRUE(contains(con, "\n0.60%    1.5% ok        10 ")) << con;
  EXPECT_TRUE(contains(con, "\n2.00%  1.5% OVER        10 ")) << con;
  EXPECT_TRUE(contains(con, "\n1.40%          -         5 ")) << con;
  EXPECT_TRUE(contains(con, "\n0.10%          -         - ")) << con;

  const std::string md = kb::noise_markdown(rep);
  EXPECT_TRUE(contains(md, "2 of 4 rate keys meet their bar.\n")) << md;
  EXPECT_TRUE(contains(md, "| noise | bar | timed_us | runs | median |")) << md;
  EXPECT_TRUE(contains(md, "| 0.60% | 0.5% OVER | 30 | 12 | 1000 |")) << md;
  EXPECT_TRUE(contains(md, "| 1.40% | - | 5 | 12 |")) << md;
}

// The CSV keeps its columns in their order and appends timed_us, bar and
// meets_bar (empty where the key has none).
TEST(KgateNoiseBar, CsvColumns) {
  std::vector<kb::Record> rows = key_rows("long_over", "tflops", 0.006, 30);
  rows = rows + key_rows("short_ok", "memory_bandwidth(GB/s)", 0.006, 10);
  rows = rows + key_rows("launch_probe", "launch(us)", 0.014, 5);
  rows = rows + key_rows("seed_mean", "memory_bandwidth(GB/s)", 0.001, 0);
  const std::string c = kb::noise_csv(report_of(rows));
  EXPECT_EQ(c.substr(0, c.find('\n')),
            "name,metric,dtype,shape,arch,device,runs,median,noise_rel,noise_class,variants,"
            "modes,mode_runs,boards,board_spread,noise_all_boards,timed_us,bar,meets_bar");
  EXPECT_TRUE(ends_with(csv_line_of(c, "long_over"), ",0,0.006,30,0.005,no"))
      << csv_line_of(c, "long_over");
  EXPECT_TRUE(ends_with(csv_line_of(c, "short_ok"), ",0,0.006,10,0.015,yes"))
      << csv_line_of(c, "short_ok");
  EXPECT_TRUE(ends_with(csv_line_of(c, "launch_probe"), ",0.014,5,,")) << c;
  EXPECT_TRUE(ends_with(csv_line_of(c, "seed_mean"), ",0.001,,,")) << c;
}

// Fewer than kMinRunsForBar runs prove nothing (one run reads 0% noise):
// the bar is shown, the key does not meet it.
TEST(KgateNoiseBar, TooFewRunsDoNotMeetTheBar) {
  const kb::NoiseReport rep = report_of(key_rows("short", "tflops", 0.0, 50, 2));
  ASSERT_EQ(rep.keys.size(), 1u);
  EXPECT_EQ(rep.keys[0].runs, 2);  // median_us 47.5 and 50: timed work 48.75
  EXPECT_DOUBLE_EQ(rep.keys[0].bar, 0.005);
  EXPECT_FALSE(rep.keys[0].meets_bar);
  EXPECT_TRUE(contains(kb::noise_console(rep), "0.5% few runs")) << kb::noise_console(rep);
  EXPECT_TRUE(contains(kb::noise_console(rep), "; 0 of 1 rate keys meet their bar\n"));
  EXPECT_TRUE(ends_with(csv_line_of(kb::noise_csv(rep), "short"), ",48.75,0.005,no"));
}

// Two boards 3% apart, each quiet: the verdict is on each board's own noise
// (the figure the table shows), not on the pooled one.
TEST(KgateNoiseBar, TwoBoardsJudgedOnTheirOwnNoise) {
  std::vector<kb::Record> rows;
  for (int i = 0; i < 22; ++i) {
    const bool b = i >= 11;
    kb::Record r =
        row("mlp", (b ? 970 : 1000) * (1 + 0.001 * ((i % 3) - 1)), "r" + std::to_string(i));
    r.metric = "tflops";
    r.median_us = b ? 412 : 400;
    r.gpu_uuid = b ? "GPU-bbbb" : "GPU-aaaa";
    rows.push_back(r);
  }
  const kb::NoiseReport rep = report_of(rows);
  ASSERT_EQ(rep.keys.size(), 1u);
  const kb::NoiseKey& k = rep.keys[0];
  EXPECT_EQ(k.boards, 2);
  EXPECT_GT(k.noise_all, 0.005);  // pooled: over the bar
  EXPECT_LT(k.noise, 0.005);      // each board's own: within it
  EXPECT_TRUE(k.meets_bar);
  EXPECT_TRUE(contains(kb::noise_console(rep), "0.5% ok")) << kb::noise_console(rep);
}

#ifdef KBENCH_KGATE_EXE
// The CLI reads median_us from a file and writes the verdict.
TEST(KgateNoiseBar, Cli) {
  fs::path d = temp_dir("noise_bar_cli");
  std::vector<kb::Record> rows = key_rows("long_over", "tflops", 0.006, 30);
  rows = rows + key_rows("short_ok", "memory_bandwidth(GB/s)", 0.006, 10);
  fs::path f = write(d / "h.csv", csv(rows));
  Result n = kgate("noise --results " + f.string() + " --csv " + (d / "n.csv").string() +
                   " --markdown " + (d / "n.md").string());
  EXPECT_EQ(n.code, 0) << n.out;
  EXPECT_TRUE(contains(n.out, "; 1 of 2 rate keys meet their bar\n")) << n.out;
  EXPECT_TRUE(contains(n.out, "0.5% OVER")) << n.out;
  const std::string c = slurp(d / "n.csv");
  EXPECT_TRUE(ends_with(csv_line_of(c, "short_ok"), ",10,0.015,yes")) << c;
  EXPECT_TRUE(contains(slurp(d / "n.md"), "| 1.5% ok | 10 |")) << slurp(d / "n.md");
}
#endif

}  // namespace
