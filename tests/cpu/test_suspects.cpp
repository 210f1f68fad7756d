// The suspects file (suite/suspects.h) and `kbench run --rerun`'s bad input:
// one clear message, exit 2, nothing appended.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/suspects.h"
#include "tests/cpu/run_command.h"

namespace {

namespace fs = std::filesystem;

const char* kHeader = "run_id,name,dtype,shape,variant,metric,arch,reason\n";

// parse_suspects' message for `text` read as `path`, or "no error".
std::string parse_error(const std::string& text, const std::string& path) {
  try {
    kb::parse_suspects(text, path);
  } catch (const kb::SuspectsError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Suspects, ParsesLinesInAnyColumnOrder) {
  auto s = kb::parse_suspects(
      std::string(kHeader) +
          "R1,gemv,int8,N=4096;K=4096,bound=memory,memory_bandwidth(GB/s),NVIDIA H100,\"3.1% "
          "worse, "
          "within noise\"\n"
          "R1,layer_norm,bfloat16,mean,,memory_bandwidth(GB/s),NVIDIA H100,target\n",
      "s.csv");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "gemv");
  EXPECT_EQ(s[0].shape, "N=4096;K=4096");
  EXPECT_EQ(s[0].reason, "3.1% worse, within noise");
  EXPECT_EQ(s[0].line, 2u);
  EXPECT_EQ(s[1].shape, "mean");
  auto other = kb::parse_suspects(
      "name,shape,dtype,run_id,variant,metric,arch,reason\ngemv,D=1,int8,R2,,,,\n", "o.csv");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].run_id, "R2");
  EXPECT_TRUE(kb::parse_suspects(kHeader, "empty-body.csv").empty());
}

TEST(Suspects, MalformedFilesNameFileAndLine) {
  auto msg = [](const std::string& text) { return parse_error(text, "bad.csv"); };
  EXPECT_NE(msg("").find("bad.csv: empty"), std::string::npos);
  EXPECT_NE(msg("name,metric,target,actual\n").find("no 'run_id' column"), std::string::npos);
  EXPECT_NE(msg(std::string(kHeader) + "R1,gemv,int8,,,,,\n").find("bad.csv:2: empty shape"),
            std::string::npos);
  EXPECT_NE(msg(std::string(kHeader) + "R1,gemv,int8,D=1,\"open\n").find("bad.csv:2"),
            std::string::npos);
  try {
    kb::read_suspects("/nonexistent/suspects.csv");
    FAIL() << "no error for a missing file";
  } catch (const kb::SuspectsError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/suspects.csv: cannot read"),
              std::string::npos);
  }
}

// A row with fewer fields than the header (a line cut off, a column lost)
// was read with the missing fields empty: an empty variant matches any
// point's. Refused as the results reader refuses one, and so is a longer row.
TEST(Suspects, RowsWithoutTheHeadersFieldsAreRefused) {
  auto msg = [](const std::string& text) { return parse_error(text, "cut.csv"); };
  const std::string ok = "R1,gemv,int8,D=1024,,,,\n";
  EXPECT_EQ(msg(std::string(kHeader) + ok + "R1,gemv,int8,D=1024\n"),
            "cut.csv:3: 4 field(s) where the header has 8");
  EXPECT_EQ(msg(std::string(kHeader) + "R1,gemv,int8,D=1024,,,\n" + ok),
            "cut.csv:2: 7 field(s) where the header has 8");
  EXPECT_EQ(msg(std::string(kHeader) + ok + "R1,gemv,int8,D=1024,,,,,\n"),
            "cut.csv:3: 9 field(s) where the header has 8");
  EXPECT_EQ(msg("run_id,name,dtype,shape,variant,metric,arch,reason,extra\n" + ok),
            "cut.csv:2: 8 field(s) where the header has 9");
}

// kgate ends every line it writes with a line end: a last line without one
// is a file cut off mid-write (maybe inside its last field, with the field
// count intact), refused as the results reader refuses such a row.
TEST(Suspects, ALastLineWithoutALineEndIsRefused) {
  auto msg = [](const std::string& text) { return parse_error(text, "half.csv"); };
  const std::string cut = "half.csv:3: the last line has no line end: the file was cut off mid-row";
  const std::string ok = "R1,gemv,int8,D=1024,,,,\n";
  EXPECT_EQ(msg(std::string(kHeader) + ok +
                "R1,gemv,int8,D=1024,,memory_bandwidth(GB/s),NVIDIA H100,tar"),
            cut);
  EXPECT_EQ(msg(std::string(kHeader) + ok + "R1,gemv,int8,D=10"), cut);
  EXPECT_EQ(msg(std::string(kHeader) + ok + "R1,gemv,int8,D=1024,,,,\"cut"),
            "half.csv:3: a quoted field is not closed before the end of the file (file cut off?)");
  EXPECT_EQ(msg("run_id,name,dtype,shape,variant,metric,arch,reason"),
            "half.csv:1: the last line has no line end: the file was cut off mid-row");
  EXPECT_EQ(msg(std::string(kHeader) + ok + "\r\n"), "no error");
  EXPECT_EQ(kb::parse_suspects(std::string(kHeader) + ok, "whole.csv").size(), 1u);
}

TEST(Suspects, AttemptNumbersContinueAfterTheLastOne) {
  EXPECT_EQ(kb::next_attempt("", "R1"), 2);
  EXPECT_EQ(kb::next_attempt("a,R1,b\nc,R1/2,d\nc,R1/4,d\nx,R10/9,y\n", "R1"), 5);
  EXPECT_EQ(kb::attempt_run_id("R1", 3), "R1/3");
}

#ifdef KBENCH_EXE
kb::test::CommandResult kbench(const std::string& args) {
  return kb::test::run_command(KBENCH_EXE, args);
}

struct RerunInput : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kb_rerun_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
  // Runs kbench and checks exit 2, the message, and that the CSV was not created.
  void refused(const std::string& args, const std::string& what) {
    const std::string csv = (dir / "results.csv").string();
    auto r = kbench("run " + args + " --csv " + csv);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(what), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(csv)) << "a refused rerun appended rows";
  }
};

TEST_F(RerunInput, BadSuspectsFilesAreRefused) {
  refused("--rerun " + (dir / "missing.csv").string(), "missing.csv: cannot read");
  refused("--rerun " + write("m.csv", "a,b\n1,2\n"), "m.csv:1: the header has no 'run_id'");
  refused(
      "--rerun " + write("u.csv", std::string(kHeader) + "R1,no_such_experiment,int8,D=1,,,,\n"),
      "u.csv:2: no experiment 'no_such_experiment'");
  refused("--rerun " + write("s.csv", std::string(kHeader) + "R1,gemv,int8,D=3,,,,\n"),
          "s.csv:2: experiment 'gemv' has no point shape=D=3 dtype=int8");
  refused("--rerun " + write("short.csv", std::string(kHeader) + "R1,gemv,int8,D=1024\n"),
          "short.csv:2: 4 field(s) where the header has 8");
  refused("--rerun " + write("half.csv", std::string(kHeader) + "R1,gemv,int8,D=1024,,,,bo"),
          "half.csv:2: the last line has no line end: the file was cut off mid-row");
  refused("--rerun " + write("two.csv", std::string(kHeader) + "R1,gemv,int8,D=1024,,,,\n" +
                                            "R2,gemv,int8,D=1024,,,,\n"),
          "two.csv:3: suspects of two runs");
}

// --filter with --rerun re-measures the suspects whose experiment it
// selects (the nightly hands its kbench options to the re-measurement);
// it was ignored, and every suspect measured.
TEST_F(RerunInput, FilterSelectsTheSuspects) {
  const std::string s = write("f.csv", std::string(kHeader) + "R1,gemv,int8,D=1024,,,,\n" +
                                           "R1,no_such_experiment,int8,D=1,,,,\n");
  const std::string csv = (dir / "results.csv").string();
  auto none = kbench("run --rerun " + s + " --filter layer_norm --csv " + csv);
  EXPECT_EQ(none.code, 0) << none.out;
  EXPECT_NE(none.out.find("keeps 0 of the 2 suspect(s)"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("nothing to re-measure"), std::string::npos) << none.out;
  EXPECT_FALSE(fs::exists(csv)) << none.out;
  // The suspect left out is not looked up; the kept one goes on to the
  // device (none here: 3, or out of range: 2).
  auto one = kbench("run --rerun " + s + " --filter '^gemv$' --device 999 --csv " + csv);
  EXPECT_NE(one.out.find("keeps 1 of the 2 suspect(s)"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("no_such_experiment"), std::string::npos) << one.out;
  EXPECT_TRUE(one.code == 3 || one.code == 2) << one.out;
  EXPECT_FALSE(fs::exists(csv)) << one.out;
  refused("--rerun " + s + " --filter '('", "--filter '(' is not a valid regex");
  refused("--rerun " + s + " --filter nothing_named_so", "matches no experiment");
}

TEST_F(RerunInput, BadRepeatAndInjectionAreUsageErrors) {
  const std::string ok = write("ok.csv", std::string(kHeader) + "R1,gemv,int8,D=1024,,,,\n");
  refused("--rerun " + ok + " --repeat 0", "--repeat needs a whole number from 1");
  refused("--rerun " + ok + " --repeat -2", "--repeat needs a whole number from 1");
  refused("--repeat 3", "--repeat N needs --rerun FILE");
  refused("--inject-slowdown gemv=5", "needs --allow-injected-slowdown");
  refused("--inject-slowdown gemv --allow-injected-slowdown", "needs REGEX=PCT");
  refused("--inject-slowdown gemv=0 --allow-injected-slowdown", "PCT must be a number in (0, 100]");
  refused("--allow-injected-slowdown", "without --inject-slowdown");
}
#endif

}  // namespace
