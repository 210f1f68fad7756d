// Bad input, one test each: a clear message naming the file and
// the line, and either the row skipped with a warning (row-level damage in
// an older run), the night failed (row-level damage in tonight's run:
// test_kgate_fail_closed.cpp) or exit code 2 (file-level damage). Never a
// crash, never a pass because a file could not be read.
#include <gtest/gtest.h>

#include "kgate_test_util.h"
#include "tools/kgate/history.h"

namespace {

const size_t kCols = kb::csv_columns().size();  // the header good_rows() writes

using namespace kgt;

// Reads `text` as file `name`; returns the error ("" if none) and fills `h`.
std::string load(kb::History& h, const std::string& text, const std::string& name = "r.csv") {
  try {
    h.add_text(text, name);
    h.finish();
  } catch (const kb::ResultFileError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> warnings(const kb::History& h) {
  std::vector<std::string> w;
  for (const auto& x : h.warnings()) w.push_back(x.text());
  return w;
}

std::string good_rows() { return csv({row("layer_norm", 1000, "r1"), row("gemv", 900, "r1")}); }

std::string line_of(const kb::Record& r) { return kb::csv_line(kb::record_fields(r)) + "\n"; }

// `bad` lines inside an older run r1 (from line 3), then tonight's run r2:
// history, so each is a warning and the rest is read.
std::string in_older_run(const std::string& bad) {
  return csv({row("layer_norm", 1000, "r1")}) + bad + line_of(row("gemv", 900, "r1")) +
         line_of(row("layer_norm", 1000, "r2")) + line_of(row("gemv", 900, "r2"));
}

const std::string kOlder = "; row skipped (an older run's row: history, not tonight's)";

std::vector<std::string> untrusted(const kb::History& h) {
  std::vector<std::string> w;
  for (const auto& x : h.untrusted()) w.push_back(x.text());
  return w;
}

TEST(KgateInput, EmptyFileIsFileLevel) {
  kb::History h;
  EXPECT_EQ(load(h, ""), "r.csv: empty file (expected a header line, then rows)");
  kb::History h2;
  EXPECT_EQ(load(h2, "\n\n"), "r.csv: empty file (expected a header line, then rows)");
}

TEST(KgateInput, HeaderOnlyIsFileLevel) {
  kb::History h;
  EXPECT_EQ(load(h, kb::csv_header() + "\n"), "r.csv: header only, no result rows");
}

TEST(KgateInput, MissingColumnIsFileLevel) {
  kb::History h;
  std::string e =
      load(h, "name,metric,target,dtype,device,arch,is_model\nx,tflops,,bfloat16,cuda,A,False\n");
  EXPECT_TRUE(contains(e, "r.csv:1: the header lacks column(s) actual")) << e;
  kb::History h2;
  std::string e2 =
      load(h2, "name,metric,target,actual,dtype,device,status\nx,tflops,,1,bf16,cuda,ok\n");
  EXPECT_TRUE(contains(e2, "r.csv:1: the header lacks column(s) arch, is_model, shape, variant"))
      << e2;
}

// A kbench header that lost `status` (dropped by a tool, misspelled) is
// still ours, not gpt_fast's: read as gpt_fast, every row would pass as
// `ok` and every shape would be `mean`.
TEST(KgateInput, OurHeaderWithoutStatusIsFileLevel) {
  for (const std::string& renamed : {std::string("Status"), std::string("state")}) {
    std::string text = good_rows();
    text.replace(text.find(",status,"), 8, "," + renamed + ",");
    kb::History h;
    std::string e = load(h, text);
    EXPECT_TRUE(contains(e, "r.csv:1: the header lacks column(s) status")) << e;
  }
}

TEST(KgateInput, NotAHeaderIsFileLevel) {
  kb::History h;
  std::string e = load(h, "layer_norm,memory_bandwidth(GB/s),950,1000,bfloat16,cuda,A,False\n");
  EXPECT_TRUE(contains(e, "r.csv:1: the first line is not a header")) << e;
}

TEST(KgateInput, ExtraHeaderColumnIsWarnedAndIgnored) {
  kb::History h;
  std::string text =
      "name,metric,target,actual,dtype,device,arch,is_model,color\n"
      "gemv,memory_bandwidth(GB/s),,900,int8,cuda,A,False,blue\n";
  EXPECT_EQ(load(h, text), "");
  EXPECT_EQ(h.rows(), 1u);
  EXPECT_EQ(warnings(h),
            (std::vector<std::string>{"r.csv:1: unknown column 'color' in the header: ignored"}));
}

TEST(KgateInput, RowWithExtraOrMissingFieldsInAnOlderRunIsAWarning) {
  std::string bad = kb::csv_line(kb::record_fields(row("extra", 1, "r1"))) + ",surplus\n";
  bad += "short,row\n";
  kb::History h;
  EXPECT_EQ(load(h, in_older_run(bad)), "");
  EXPECT_EQ(h.rows(), 4u);
  EXPECT_TRUE(h.untrusted().empty()) << untrusted(h)[0];
  EXPECT_EQ(warnings(h),
            (std::vector<std::string>{
                "r.csv:3: " + std::to_string(kCols + 1) + " field(s) where the header has " +
                    std::to_string(kCols) + kOlder,
                "r.csv:4: 2 field(s) where the header has " + std::to_string(kCols) + kOlder}));
}

TEST(KgateInput, BadActualInAnOlderRunIsAWarning) {
  std::string bad;
  for (const char* v : {"abc", "nan", "inf", "-inf", "", "0", "-5", "1e308"}) {
    auto f = kb::record_fields(row("bad", 1, "r1"));
    f[3] = v;  // actual
    bad += kb::csv_line(f) + "\n";
  }
  kb::History h;
  EXPECT_EQ(load(h, in_older_run(bad)), "");
  EXPECT_EQ(h.rows(), 4u);
  EXPECT_TRUE(h.untrusted().empty());
  EXPECT_EQ(
      warnings(h),
      (std::vector<std::string>{
          "r.csv:3: actual 'abc' is not a number" + kOlder, "r.csv:4: actual 'nan' is NaN" + kOlder,
          "r.csv:5: actual 'inf' is infinite" + kOlder,
          "r.csv:6: actual '-inf' is infinite" + kOlder,
          "r.csv:7: actual is empty on a row with status ok" + kOlder,
          "r.csv:8: actual '0' is not > 0" + kOlder, "r.csv:9: actual '-5' is not > 0" + kOlder,
          "r.csv:10: actual '1e308' is beyond 1e12 (no metric reaches it)" + kOlder}));
}

TEST(KgateInput, AFileOfOnlyBadRowsIsFileLevel) {
  kb::Record r = row("bad", 1, "r1");
  auto f = kb::record_fields(r);
  f[3] = "abc";
  kb::History h;
  std::string e = load(h, kb::csv_header() + "\n" + kb::csv_line(f) + "\n");
  EXPECT_EQ(e, "r.csv: no readable rows: all 1 were skipped (see the warnings above)");
}

TEST(KgateInput, SecondHeaderMidFile) {
  // The same header again (cat a.csv b.csv): skipped with a warning.
  std::string text = csv({row("layer_norm", 1000, "r1")}) + csv({row("layer_norm", 990, "r2")});
  kb::History h;
  EXPECT_EQ(load(h, text), "");
  EXPECT_EQ(h.rows(), 2u);
  EXPECT_EQ(
      warnings(h),
      (std::vector<std::string>{"r.csv:3: a second header (files concatenated?): line skipped"}));
  // A different header: the rows below it mean something else. File-level.
  kb::History h2;
  std::string mixed = csv({row("layer_norm", 1000, "r1")}) +
                      "name,metric,target,actual,dtype,device,arch,is_model\n"
                      "gemv,memory_bandwidth(GB/s),,900,int8,cuda,A,False\n";
  std::string e = load(h2, mixed);
  EXPECT_TRUE(contains(e, "r.csv:3: a second header, different from line 1's")) << e;
}

TEST(KgateInput, CrlfReadsLikeLf) {
  std::string lf = good_rows();
  std::string crlf;
  for (char c : lf) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  kb::History a, b;
  EXPECT_EQ(load(a, lf), "");
  EXPECT_EQ(load(b, crlf), "");
  ASSERT_EQ(a.rows(), 2u);
  ASSERT_EQ(b.rows(), 2u);
  EXPECT_TRUE(b.warnings().empty());
  EXPECT_EQ(b.keys()[1].name, "gemv");
  EXPECT_EQ(b.observations()[1].actual, 900);
  EXPECT_EQ(b.runs()[0].label, "r1");  // no CR left on the last column's neighbours
}

TEST(KgateInput, Utf8BomIsSkipped) {
  kb::History h;
  EXPECT_EQ(load(h, "\xEF\xBB\xBF" + good_rows()), "");
  EXPECT_EQ(h.rows(), 2u);
  EXPECT_EQ(h.keys()[0].name, "layer_norm");
}

TEST(KgateInput, QuotedFieldsWithCommasAndQuotes) {
  kb::Record r = row("gemv", 800, "r1");
  r.status = "failed";
  r.actual.reset();
  r.message = "out of memory, needs \"64 GiB\"\nretry with --quick";
  r.shape = "BS=1,2;D=3";
  kb::History h;
  EXPECT_EQ(load(h, csv({row("layer_norm", 1000, "r1"), r})), "");
  ASSERT_EQ(h.rows(), 2u);
  EXPECT_EQ(h.keys()[1].shape, "BS=1,2;D=3");
  EXPECT_EQ(h.observations()[1].message, "out of memory, needs \"64 GiB\"\nretry with --quick");
  EXPECT_TRUE(h.warnings().empty());
}

// min_us and max_us (the dashboard's error bars) are read where the file
// has them; an empty cell, a missing column or a gpt_fast file read as none.
TEST(KgateInput, MinAndMaxTimesAreReadWhereGiven) {
  kb::Record timed = row("gemv", 900, "r1");
  timed.median_us = 10;
  timed.min_us = 9.5;
  timed.max_us = 12;
  kb::History h;
  ASSERT_EQ(load(h, csv({timed, row("layer_norm", 1000, "r1")})), "");
  EXPECT_EQ(h.observations()[0].min_us(), 9.5);
  EXPECT_EQ(h.observations()[0].max_us(), 12);
  EXPECT_EQ(h.observations()[0].median_us(), 10);
  EXPECT_FALSE(h.observations()[1].min_us() || h.observations()[1].max_us());  // empty cells
  kb::History g;
  ASSERT_EQ(load(g,
                 "name,metric,target,actual,dtype,device,arch,is_model\n"
                 "gemv,memory_bandwidth(GB/s),,900,int8,cuda,A,False\n"),
            "");
  EXPECT_FALSE(g.observations()[0].min_us() || g.observations()[0].max_us());
  EXPECT_EQ(g.observations()[0].actual, 900);
}

// The last line of an earlier file, cut: that file's last run's row, a
// warning (tonight's is in test_kgate_fail_closed.cpp).
TEST(KgateInput, TruncatedLastLineOfAnEarlierFile) {
  std::string last = kb::csv_line(kb::record_fields(row("gather_gemv", 700, "r1")));
  std::string tonight = csv({row("layer_norm", 1000, "r2"), row("gemv", 900, "r2")});
  kb::History h;
  h.add_text(good_rows() + last.substr(0, last.size() / 2), "old.csv");  // cut mid-row
  h.add_text(tonight, "new.csv");
  h.finish();
  EXPECT_EQ(h.rows(), 4u);
  EXPECT_TRUE(h.untrusted().empty());
  ASSERT_EQ(h.warnings().size(), 1u);
  EXPECT_TRUE(contains(h.warnings()[0].text(), "old.csv:4: "));
  EXPECT_TRUE(
      contains(h.warnings()[0].text(), "(the last line, without a line end: file cut off?)"))
      << h.warnings()[0].text();
  // Cut inside a quoted message.
  kb::Record q = row("gather_gemv", 700, "r1");
  q.message = "a message, long";
  q.host = "a host, long";  // the last column, quoted: the cut falls inside it
  std::string line = kb::csv_line(kb::record_fields(q));
  kb::History h2;
  h2.add_text(good_rows() + line.substr(0, line.size() - 3), "old.csv");
  h2.add_text(tonight, "new.csv");
  h2.finish();
  ASSERT_EQ(h2.warnings().size(), 1u);
  EXPECT_EQ(h2.warnings()[0].text(),
            "old.csv:4: a quoted field is not closed before the end of the file (file cut off?)" +
                kOlder);
}

TEST(KgateInput, UnknownMetricInAnOlderRunIsAWarning) {
  kb::Record r = row("gemv", 5, "r1");
  r.metric = "furlongs_per_fortnight";
  kb::History h;
  EXPECT_EQ(load(h, in_older_run(line_of(r))), "");
  EXPECT_EQ(h.rows(), 4u);
  ASSERT_EQ(h.warnings().size(), 1u);
  EXPECT_TRUE(contains(h.warnings()[0].text(),
                       "r.csv:3: unknown metric 'furlongs_per_fortnight' (kgate cannot tell "
                       "whether higher or lower is better"))
      << h.warnings()[0].text();
}

TEST(KgateInput, UnknownStatusInAnOlderRunIsAWarning) {
  kb::Record r = row("gemv", 5, "r1");
  r.status = "great";
  kb::History h;
  EXPECT_EQ(load(h, in_older_run(line_of(r))), "");
  ASSERT_EQ(h.warnings().size(), 1u);
  EXPECT_EQ(h.warnings()[0].text(),
            "r.csv:3: status 'great' is not one of ok, below_target, incorrect, failed, skipped, "
            "throttled" +
                kOlder);
}

TEST(KgateInput, DuplicateKeyWithinOneRun) {
  kb::History h;
  EXPECT_EQ(load(h, csv({row("layer_norm", 1000, "r1"), row("gemv", 900, "r1"),
                         row("layer_norm", 500, "r1")})),
            "");
  ASSERT_EQ(h.warnings().size(), 1u);
  EXPECT_EQ(h.warnings()[0].text(),
            "r.csv:4: the same key again in run r1 (first at r.csv:2); row skipped");
  // The first row is the one kept.
  const auto& s = h.series(0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(h.observations()[s[0]].actual, 1000);
}

TEST(KgateInput, SameKeyOnTwoDevicesIsNotADuplicate) {
  kb::Record a = row("layer_norm", 1000, "r1"), b = row("layer_norm", 990, "r1");
  a.device = "cuda:0";
  b.device = "cuda:1";
  kb::History h;
  EXPECT_EQ(load(h, csv({a, b})), "");
  EXPECT_TRUE(h.warnings().empty());
  EXPECT_EQ(h.keys().size(), 2u);
}

TEST(KgateInput, DirectoryAndMissingPath) {
  fs::path d = temp_dir("dir_input");
  kb::History h;
  try {
    h.add_file(d.string());
    FAIL() << "a directory was read";
  } catch (const kb::ResultFileError& e) {
    EXPECT_EQ(std::string(e.what()), d.string() + ": is a directory, expected a results CSV file");
  }
  try {
    h.add_file((d / "nope.csv").string());
    FAIL() << "a missing file was read";
  } catch (const kb::ResultFileError& e) {
    EXPECT_EQ(std::string(e.what()),
              (d / "nope.csv").string() + ": cannot read: No such file or directory");
  }
}

TEST(KgateInput, ManyBadRowsAreCappedInTheWarnings) {
  std::string bad;
  for (int i = 0; i < 120; ++i) bad += "x,y\n";
  kb::History h;
  EXPECT_EQ(load(h, in_older_run(bad)), "");
  ASSERT_EQ(h.warnings().size(), kb::History::kMaxWarningsPerFile + 1);
  EXPECT_EQ(h.warnings().back().text(), "r.csv: 70 more warning(s) in this file not shown");
}

#ifdef KBENCH_KGATE_EXE

TEST(KgateInput, BinaryExits2OnFileLevelDamageEvenWithAGoodFile) {
  fs::path d = temp_dir("bin_input");
  fs::path good = write(d / "good.csv", good_rows());
  fs::path empty = write(d / "empty.csv", "");
  fs::path header = write(d / "header.csv", kb::csv_header() + "\n");
  for (const fs::path& bad : {empty, header, d, d / "missing.csv"}) {
    Result r = kgate("check --results " + good.string() + " " + bad.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_TRUE(contains(r.out, "kgate: error: " + bad.string())) << r.out;
    EXPECT_FALSE(contains(r.out, "PASS")) << r.out;
  }
}

TEST(KgateInput, BinaryWarnsOnRowLevelDamageOfAnOlderRunAndGoesOn) {
  fs::path d = temp_dir("bin_rows");
  fs::path f = write(d / "r.csv", in_older_run("x,y\n"));
  Result r = kgate("check --results " + f.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "kgate: warning: " + f.string() +
                                  ":3: 2 field(s) where the header has " + std::to_string(kCols) +
                                  kOlder))
      << r.out;
}

#endif

}  // namespace
