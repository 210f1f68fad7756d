// Fail closed (DESIGN.md "The gate's rules", rule 5; docs/gate.md "Fail
// closed"): whatever kgate cannot read or judge about tonight's run fails
// the night, on the recorded H100 run (tests/data, 240 keys) as 28 nights.
// - KgateNewestRun: which run is tonight's is append order, not clocks or
//   run id order; a stray row cannot take its place, a partial run fails;
// - KgateUntrustedRow: a damaged row of tonight's run fails the night
//   (exit 1, file and line), of an older run it is a warning;
// - KgateReaderBounds: a file that is not CSV text, or a line over 64 KiB,
//   exits 2 without being read whole.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/csv_reader.h"
#include "kgate_test_util.h"

#if defined(KBENCH_KGATE_EXE) && defined(KBENCH_SOURCE_DIR)
namespace {

using namespace kgt;

const fs::path kSource = KBENCH_SOURCE_DIR;
const char* kTonight = "20261124T092803Z-5f407d";  // the recorded run's id
const size_t kKeys = 240;

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  size_t col(const char* n) const {
    return static_cast<size_t>(std::find(header.begin(), header.end(), n) - header.begin());
  }
  std::string text() const {
    std::string out = kb::csv_line(header) + "\n";
    for (const auto& r : rows) out += kb::csv_line(r) + "\n";
    return out;
  }
  // Line (1-based) of row i.
  static size_t line(size_t i) { return i + 2; }
  size_t tonight(size_t k) const { return rows.size() - kKeys + k; }
};

// The recorded run as 28 nights: 27 earlier ones with a small deterministic
// wobble (±0.3%), the newest as recorded. `v2`: the v2 columns added (the
// GPU and the host named).
Table nights28(bool v2 = false) {
  const std::string text = slurp(kSource / "tests/data/h100-2026-11-24.csv");
  kb::CsvReader in(text);
  std::vector<std::string_view> f;
  EXPECT_TRUE(in.next(f));
  Table t;
  t.header.assign(f.begin(), f.end());
  std::vector<std::vector<std::string>> recorded;
  while (in.next(f)) recorded.emplace_back(f.begin(), f.end());
  if (v2) {
    for (const char* c : {"gpu_index", "gpu_uuid", "gpu_bus_id", "host"}) t.header.push_back(c);
    for (auto& r : recorded)
      for (const char* v : {"0", "GPU-77d2a092", "00000000:18:00.0", "gpu-node-07"}) r.push_back(v);
  }
  const size_t actual = t.col("actual"), run_id = t.col("run_id"), ts = t.col("timestamp");
  for (int n = 0; n < 28; ++n) {
    for (auto r : recorded) {
      if (n < 27) {
        if (!r[actual].empty())
          r[actual] = kb::format_number(std::stod(r[actual]) * (1 + 0.003 * ((n * 7) % 5 - 2) / 2));
        char buf[64];
        std::snprintf(buf, sizeof buf, "2026-10-%02dT03:00:00Z", n + 1);
        r[ts] = buf;
        r[run_id] = "night" + std::to_string(n + 1);
      }
      t.rows.push_back(r);
    }
  }
  return t;
}

Result check(const fs::path& f) { return kgate("check --results " + f.string()); }

std::string gated(const std::string& run) {
  return "gated NVIDIA H100 80GB HBM3: run " + run + " (";
}

// ---- which run is tonight's ----

TEST(KgateNewestRun, TheRecordedNightIsGatedAndPasses) {
  fs::path d = temp_dir("newest_base");
  Result r = check(write(d / "h.csv", nights28().text()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, gated(kTonight))) << r.out;
  EXPECT_TRUE(contains(r.out, "240 keys")) << r.out;
}

// One stray row: a copy of one of tonight's rows under another run id
// and time, appended after tonight's rows or put anywhere in the file.
struct Stray {
  const char* what;
  std::string run_id, timestamp;
  const char* expect;  // in the output of a night that fails on it
};

std::vector<Stray> strays() {
  return {
      {"stamped 2099", "20991231T000000Z-ffffff", "2099-12-31T00:00:00Z",
       "FAIL partial run NVIDIA H100 80GB HBM3: the newest run 20991231T000000Z-ffffff has 1 key "
       "where the run before it, 20261124T092803Z-5f407d, had 240"},
      {"in another time zone", "20261124T182803-0900", "2026-11-24T18:28:03+09:00",
       "timestamp '2026-11-24T18:28:03+09:00' is not ISO-8601 UTC"},
      {"under a garbage id", "zz~garbage~", "2026-11-24T09:28:03Z",
       "run_id 'zz~garbage~' is not a run id kbench writes"},
      {"under an empty id", "", "2026-11-24T09:28:03Z", "run_id '' is not a run id kbench writes"},
      {"as <newest>/02 with the newest's own time", std::string(kTonight) + "/02",
       "2026-11-24T09:28:03Z", "run_id '20261124T092803Z-5f407d/02' is not a run id"},
  };
}

std::vector<std::string> stray_row(const Table& t, const Stray& s) {
  std::vector<std::string> r = t.rows[t.tonight(7)];
  r[t.col("run_id")] = s.run_id;
  r[t.col("timestamp")] = s.timestamp;
  return r;
}

TEST(KgateNewestRun, AStrayRowAppendedLastFailsTheNightNamingIt) {
  fs::path d = temp_dir("newest_stray_last");
  for (const Stray& s : strays()) {
    Table t = nights28();
    t.rows.push_back(stray_row(t, s));
    fs::path f = write(d / "h.csv", t.text());
    Result r = check(f);
    EXPECT_EQ(r.code, 1) << s.what << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, s.expect)) << s.what << "\n" << r.out;
    if (s.run_id != "20991231T000000Z-ffffff") {  // a row kgate cannot trust: its line
      const std::string at = f.string() + ":" + std::to_string(Table::line(t.rows.size() - 1));
      EXPECT_TRUE(contains(r.out, "FAIL untrusted row " + at + ": ")) << s.what << "\n" << r.out;
    }
  }
}

// The same row among older nights: it is not tonight, tonight is gated.
TEST(KgateNewestRun, AStrayRowAmongOlderNightsDoesNotTakeTonightsPlace) {
  fs::path d = temp_dir("newest_stray_top");
  for (const Stray& s : strays()) {
    Table t = nights28();
    t.rows.insert(t.rows.begin() + 3, stray_row(t, s));
    Result r = check(write(d / "h.csv", t.text()));
    EXPECT_EQ(r.code, 0) << s.what << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, gated(kTonight))) << s.what << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "(240 keys;")) << s.what << "\n" << r.out;
  }
}

// A re-measurement of tonight (`<newest>/2`) is tonight's, not a run.
TEST(KgateNewestRun, AReMeasurementBelongsToItsRun) {
  fs::path d = temp_dir("newest_attempt");
  Table t = nights28();
  Stray s{"", std::string(kTonight) + "/2", "2026-11-24T10:00:00Z", ""};
  t.rows.push_back(stray_row(t, s));
  Result r = check(write(d / "h.csv", t.text()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, gated(kTonight))) << r.out;
  EXPECT_TRUE(contains(r.out, "(240 keys;")) << r.out;
}

// Fewer than half of the previous run's keys: a partial run, named.
TEST(KgateNewestRun, APartialRunFails) {
  fs::path d = temp_dir("newest_partial");
  Table t = nights28();
  t.rows.resize(t.rows.size() - kKeys + 100);  // tonight cut after 100 of 240 keys
  Result r = check(write(d / "h.csv", t.text()));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL partial run NVIDIA H100 80GB HBM3: the newest run " +
                                  std::string(kTonight) +
                                  " has 100 keys where the run before it, night27, had 240"))
      << r.out;
  // Half of them or more: the keys it lacks are reported, not a failure.
  Table half = nights28();
  half.rows.resize(half.rows.size() - kKeys + 120);
  Result h = check(write(d / "h.csv", half.text()));
  EXPECT_EQ(h.code, 0) << h.out;
  EXPECT_TRUE(contains(h.out, "not in the newest run")) << h.out;
}

// ---- rows of tonight kgate cannot trust ----

struct Damage {
  const char* column;
  const char* value;
  const char* expect;
};

TEST(KgateUntrustedRow, EachFieldOfTonightsRowFailsTheNightWithFileAndLine) {
  fs::path d = temp_dir("untrusted_fields");
  const Damage damages[] = {
      {"status", "Failed", "status 'Failed' is not one of ok, below_target, incorrect, failed"},
      {"status", "great", "status 'great' is not one of"},
      {"status", " ok", "status ' ok' is not one of"},
      {"actual", "nan", "actual 'nan' is NaN"},
      {"actual", "inf", "actual 'inf' is infinite"},
      {"actual", "0", "actual '0' is not > 0"},
      {"actual", "-812.5", "actual '-812.5' is not > 0"},
      {"actual", "1e308", "actual '1e308' is beyond 1e12"},
      {"noise_rel", "NaN", "noise_rel 'NaN' is NaN"},
      {"noise_rel", "-0.01", "noise_rel '-0.01' is negative"},
      {"roofline", "inf", "roofline 'inf' is infinite"},
      {"samples", "-1", "samples '-1' is not a count"},
      {"is_model", "yes", "is_model is 'yes' (expected True or False)"},
      {"is_model", "true", "is_model is 'true' (expected True or False)"},
      {"timestamp", "2026-11-24 09:28:03", "timestamp '2026-11-24 09:28:03' is not ISO-8601"},
  };
  for (const Damage& x : damages) {
    Table t = nights28();
    const size_t i = t.tonight(100);
    t.rows[i][t.col(x.column)] = x.value;
    fs::path f = write(d / "h.csv", t.text());
    Result r = check(f);
    const std::string what = std::string(x.column) + "=" + x.value;
    EXPECT_EQ(r.code, 1) << what << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "FAIL untrusted row " + f.string() + ":" +
                                    std::to_string(Table::line(i)) + ": " + x.expect))
        << what << "\n"
        << r.out;
    EXPECT_TRUE(contains(r.out, "(a row of tonight's run " + std::string(kTonight) + ")"))
        << what << "\n"
        << r.out;
  }
}

// Every report says why the night failed: a JUnit failure case per input
// failure (CI shows it), a Markdown and an HTML list.
TEST(KgateUntrustedRow, TheReportsNameIt) {
  fs::path d = temp_dir("untrusted_reports");
  Table t = nights28();
  const size_t i = t.tonight(3);
  t.rows[i][t.col("status")] = "Failed";
  fs::path f = write(d / "h.csv", t.text());
  const std::string at = f.string() + ":" + std::to_string(Table::line(i));
  Result r = kgate("check --results " + f.string() + " --junit " + (d / "j.xml").string() +
                   " --markdown " + (d / "s.md").string() + " --html " + (d / "r.html").string());
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string j = slurp(d / "j.xml");
  EXPECT_TRUE(contains(j, "<testcase classname=\"kgate.input\" name=\"" + at +
                              "\" time=\"0\">\n      <failure message=\"status &apos;Failed&apos;"))
      << j;
  EXPECT_TRUE(contains(j, "failures=\"1\"")) << j;
  const std::string md = slurp(d / "s.md");
  EXPECT_TRUE(contains(md, "## kgate: FAIL: 1 input failure (tonight's input cannot be trusted)"))
      << md;
  EXPECT_TRUE(contains(md, "- **untrusted row** " + at + ": status 'Failed'")) << md;
  EXPECT_TRUE(contains(slurp(d / "r.html"), "<li><b>untrusted row</b> " + at)) << md;
}

// The same damage in an older night: history, a warning; the night passes.
TEST(KgateUntrustedRow, AnOlderNightsDamagedRowIsAWarning) {
  fs::path d = temp_dir("untrusted_older");
  Table t = nights28();
  const size_t i = 5 * kKeys + 100;  // night 6
  t.rows[i][t.col("status")] = "Failed";
  fs::path f = write(d / "h.csv", t.text());
  Result r = check(f);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "kgate: warning: " + f.string() + ":" +
                                  std::to_string(Table::line(i)) +
                                  ": status 'Failed' is not one of"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "an older run's row: history, not tonight's")) << r.out;
}

TEST(KgateUntrustedRow, TonightsRowsWithAnExtraColumnFailTheNight) {
  fs::path d = temp_dir("untrusted_extra");
  Table t = nights28();
  for (size_t k = 0; k < kKeys; ++k) t.rows[t.tonight(k)].push_back("surplus");
  fs::path f = write(d / "h.csv", t.text());
  Result r = check(f);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL untrusted row " + f.string() + ":" +
                                  std::to_string(Table::line(t.tonight(0))) +
                                  ": 28 field(s) where the header has 27"))
      << r.out;
  // Nothing of tonight is readable: last night is not gated again as if it were.
  EXPECT_FALSE(contains(r.out, "PASS")) << r.out;
}

TEST(KgateUntrustedRow, V1RowsUnderAV2HeaderFailTheNight) {
  fs::path d = temp_dir("untrusted_v1_v2");
  Table t = nights28(true);
  for (size_t k = 0; k < kKeys; ++k) t.rows[t.tonight(k)].resize(27);
  fs::path f = write(d / "h.csv", t.text());
  Result r = check(f);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL untrusted row " + f.string() + ":" +
                                  std::to_string(Table::line(t.tonight(0))) +
                                  ": 27 field(s) where the header has 31"))
      << r.out;
}

// A file cut mid-field: inside its last field (the field count is right),
// and inside an earlier one.
TEST(KgateUntrustedRow, AFileCutMidFieldFailsTheNight) {
  fs::path d = temp_dir("untrusted_cut");
  const std::string text = nights28(true).text();  // ends "...,gpu-node-07\n"
  const size_t last = Table::line(28 * kKeys - 1);
  for (size_t cut : {3, 40}) {
    fs::path f = write(d / "h.csv", text.substr(0, text.size() - cut));
    Result r = check(f);
    EXPECT_EQ(r.code, 1) << cut << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "FAIL untrusted row " + f.string() + ":" + std::to_string(last)))
        << cut << "\n"
        << r.out;
    EXPECT_TRUE(contains(r.out, cut == 3 ? "the last line has no line end: the file was cut off"
                                         : "(the last line, without a line end: file cut off?)"))
        << cut << "\n"
        << r.out;
  }
}

// ---- bounds ----

// kgate with `args` under a 60 s limit (and a 2 GiB address space unless
// `mapped`: then a large file is mapped, not read), its peak memory (KiB)
// printed last by /usr/bin/time.
Result bounded(const std::string& args, bool mapped = false) {
  const std::string limit = mapped ? "" : "ulimit -v 2000000; ";
  return kb::test::run_command("bash", "-c '" + limit +
                                           "exec timeout 60 /usr/bin/time -f \"peak_kib=%M\" " +
                                           std::string(KBENCH_KGATE_EXE) + " " + args + "'");
}

long peak_kib(const std::string& out) {
  size_t at = out.rfind("peak_kib=");
  return at == std::string::npos ? -1 : std::stol(out.substr(at + 9));
}

TEST(KgateReaderBounds, DevZeroExits2WithBoundedMemory) {
  Result r = bounded("check --results /dev/zero");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "kgate: error: /dev/zero:1: a NUL byte: not CSV text")) << r.out;
  EXPECT_GT(peak_kib(r.out), 0) << r.out;
  EXPECT_LT(peak_kib(r.out), 64 * 1024) << r.out;
}

// A file of zeros (a crash can leave one): 3 GiB, sparse (no disk), read
// through (under an address-space limit, it cannot be mapped) and mapped.
TEST(KgateReaderBounds, ALargeFileOfZerosExits2WithBoundedMemory) {
  fs::path d = temp_dir("bounds_zeros");
  fs::path f = d / "zeros.csv";
  { std::ofstream(f, std::ios::binary); }
  fs::resize_file(f, uint64_t{3} << 30);
  for (bool mapped : {false, true}) {
    Result r = bounded("check --results " + f.string(), mapped);
    EXPECT_EQ(r.code, 2) << mapped << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, f.string() + ":1: a NUL byte: not CSV text")) << r.out;
    EXPECT_GT(peak_kib(r.out), 0) << r.out;
    EXPECT_LT(peak_kib(r.out), 64 * 1024) << mapped << "\n" << r.out;
  }
  fs::remove(f);
}

TEST(KgateReaderBounds, ALineOver64KiBExits2) {
  fs::path d = temp_dir("bounds_long");
  Table t = nights28();
  t.rows.back()[t.col("message")] = std::string(100 * 1024, 'x');
  fs::path f = write(d / "h.csv", t.text());
  Result r = check(f);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "kgate: error: " + f.string() + ":" +
                                  std::to_string(Table::line(t.rows.size() - 1)) +
                                  ": a line longer than 65536 bytes"))
      << r.out;
  // Through a pipe (not mapped): the same.
  Result p = kb::test::run_command(
      "bash", "-c 'cat " + f.string() + " | " + KBENCH_KGATE_EXE + " check --results /dev/stdin'");
  EXPECT_EQ(p.code, 2) << p.out;
  EXPECT_TRUE(contains(p.out, "a line longer than 65536 bytes")) << p.out;
}

// Old-Mac CR line ends over 64 KiB, read through (a pipe) as when mapped:
// each CR ends a line, for the bound and for the line an error names.
TEST(KgateReaderBounds, CrLineEndsReadThroughAsMapped) {
  fs::path d = temp_dir("bounds_cr");
  Table t = nights28();
  std::string text = t.text();
  std::replace(text.begin(), text.end(), '\n', '\r');
  ASSERT_GT(text.size(), size_t{64} << 10);
  const fs::path f = write(d / "h.csv", text);
  auto piped = [&](const fs::path& file) {
    return kb::test::run_command("bash", "-c 'cat " + file.string() + " | " + KBENCH_KGATE_EXE +
                                             " check --results /dev/stdin'");
  };
  Result mapped = check(f), through = piped(f);
  EXPECT_NE(mapped.code, 2) << mapped.out;
  EXPECT_EQ(through.code, mapped.code) << through.out;
  EXPECT_FALSE(contains(through.out, "a line longer")) << through.out;
  // A NUL in the last row: named at that row's line, CR lines counted.
  t.rows.back()[t.col("message")] = std::string("a\0b", 3);
  text = t.text();
  std::replace(text.begin(), text.end(), '\n', '\r');
  const fs::path g = write(d / "nul.csv", text);
  Result nul = piped(g);
  EXPECT_EQ(nul.code, 2) << nul.out;
  EXPECT_TRUE(contains(
      nul.out, "/dev/stdin:" + std::to_string(Table::line(t.rows.size() - 1)) + ": a NUL byte"))
      << nul.out;
}

}  // namespace
#endif
