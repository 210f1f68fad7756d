// No output of kgate can destroy an input: an output that is the history
// (by name, a symbolic link or a hard link) or another output is refused
// with exit 2 before anything is written, and an output that cannot be
// written whole leaves the previous file as it was.
#include <gtest/gtest.h>

#include "kgate_test_util.h"

#ifdef KBENCH_KGATE_EXE

namespace {

using namespace kgt;

const std::string kHistory = std::string(KBENCH_SOURCE_DIR) + "/tests/data/h100-2026-11-24.csv";

// Every file in `d` and its size: a temporary left behind shows here.
std::string listing(const fs::path& d) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(d))
    names.push_back(e.path().filename().string() + (fs::is_symlink(e.symlink_status()) ? "@" : ""));
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names) s += n + " ";
  return s;
}

// Every command and option that writes a file, with `OUT` where the
// output goes and `H` where the history is read.
const std::vector<std::string> kWriters = {
    "gpt-fast --results H --csv OUT",      "gpt-fast --results H --json OUT",
    "check --results H --markdown OUT",    "check --results H --junit OUT",
    "check --results H --html OUT",        "check --results H --suspects OUT",
    "noise --results H --markdown OUT",    "noise --results H --csv OUT",
    "siblings --results H --markdown OUT", "compare H H --markdown OUT",
    "dashboard --results H --out OUT",
};

std::string with(const std::string& cmd, const std::string& h, const std::string& out) {
  std::istringstream words(cmd);
  std::string w, s;
  while (words >> w) s += (s.empty() ? "" : " ") + (w == "H" ? h : w == "OUT" ? out : w);
  return s;
}

TEST(KgateOutputs, OutputThatIsTheHistoryIsRefused) {
  fs::path d = temp_dir("outputs_history");
  const std::string before = slurp(kHistory);
  ASSERT_GT(before.size(), 10000u);
  // The history named .html too, so that the dashboard's --out FILE.html can be it.
  fs::path h = write(d / "h.csv.html", before);
  fs::create_symlink(h.filename(), d / "link.html");
  fs::create_hard_link(h, d / "hard.html");
  for (const auto& cmd : kWriters) {
    for (const char* out : {"h.csv.html", "link.html", "hard.html"}) {
      const std::string c = with(cmd, h.string(), (d / out).string());
      Result r = kgate(c);
      EXPECT_EQ(r.code, 2) << c << "\n" << r.out;
      EXPECT_TRUE(contains(r.out, "kgate: error: output ")) << c << "\n" << r.out;
      EXPECT_TRUE(contains(r.out, "is the same file as input")) << c << "\n" << r.out;
      EXPECT_TRUE(contains(r.out, "nothing was written")) << c << "\n" << r.out;
      ASSERT_TRUE(slurp(h) == before) << c << ": the history changed";
    }
  }
  EXPECT_EQ(listing(d), "h.csv.html hard.html link.html@ ");
}

TEST(KgateOutputs, TwoOutputsOfOneFileAreRefused) {
  fs::path d = temp_dir("outputs_twice");
  fs::path h = write(d / "h.csv", slurp(kHistory));
  const std::string o = (d / "o.txt").string();
  for (const std::string& args :
       {"gpt-fast --results " + h.string() + " --csv " + o + " --json " + o,
        "check --results " + h.string() + " --markdown " + o + " --junit " + o,
        "noise --results " + h.string() + " --markdown " + o + " --csv " + o}) {
    Result r = kgate(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "is the same file as output")) << args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(o)) << args;
  }
}

TEST(KgateOutputs, TargetFileIsAnInput) {
  fs::path d = temp_dir("outputs_targets");
  fs::path h = write(d / "h.csv", slurp(kHistory));
  fs::create_directories(d / "targets");
  const std::string target = slurp(std::string(KBENCH_SOURCE_DIR) + "/targets/h100-sxm5-80gb.json");
  fs::path t = write(d / "targets" / "h100-sxm5-80gb.json", target);
  Result r = kgate("check --results " + h.string() + " --targets " + (d / "targets").string() +
                   " --markdown " + t.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "is the same file as input --targets")) << r.out;
  EXPECT_EQ(slurp(t), target);
}

// bringup writes three files into --out: a link there to the history, or
// --out the targets folder (its draft is named as the GPU's target file).
TEST(KgateOutputs, BringupOutputsAreChecked) {
  fs::path d = temp_dir("outputs_bringup");
  const std::string before = slurp(kHistory);
  fs::path h = write(d / "h.csv", before);
  fs::create_directories(d / "out");
  fs::create_symlink("../h.csv", d / "out" / "bringup.md");
  fs::copy(std::string(KBENCH_SOURCE_DIR) + "/targets", d / "targets", fs::copy_options::recursive);
  const std::string target = slurp(d / "targets" / "h100-sxm5-80gb.json");
  const std::string t = " --targets " + (d / "targets").string();
  Result r = kgate("bringup --results " + h.string() + " --out " + (d / "out").string() + t);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "bringup.md is the same file as input --results")) << r.out;
  r = kgate("bringup --results " + h.string() + " --out " + (d / "targets").string() + t);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "h100-sxm5-80gb.json is the same file as input --targets")) << r.out;
  EXPECT_TRUE(slurp(h) == before);
  EXPECT_TRUE(slurp(d / "targets" / "h100-sxm5-80gb.json") == target);
  EXPECT_FALSE(fs::exists(d / "targets" / "bringup.md"));
}

// A write cut short (a full disk, here a file size limit: the write fails
// with EFBIG) leaves the previous output whole and no temporary behind.
TEST(KgateOutputs, FailedWriteKeepsThePreviousFile) {
  fs::path d = temp_dir("outputs_full");
  fs::path h = write(d / "h.csv", slurp(kHistory));
  const std::string limited = "bash -c 'ulimit -f 16; trap \"\" XFSZ; exec \"$0\" \"$@\"' ";
  for (const auto& cmd : kWriters) {
    fs::path out = d / "previous.html";
    const std::string previous(40000, 'p');  // larger than the limit, as a good report would be
    write(out, previous);
    const std::string c = with(cmd, h.string(), out.string());
    Result r = kb::test::run_command(limited + KBENCH_KGATE_EXE, c);
    if (r.code != 2) {
      // This command's output fits under the limit: it was written whole.
      EXPECT_TRUE(slurp(out) != previous) << c;
      continue;
    }
    EXPECT_EQ(r.code, 2) << c << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "kgate: error: cannot write " + out.string())) << c << r.out;
    EXPECT_TRUE(slurp(out) == previous) << c << ": the previous file was damaged";
    EXPECT_EQ(listing(d), "h.csv previous.html ") << c;
  }
  // The dashboard of this history (over 1 MB) cannot fit: it must have failed.
  Result r = kb::test::run_command(
      limited + KBENCH_KGATE_EXE,
      "dashboard --results " + h.string() + " --out " + (d / "previous.html").string());
  EXPECT_EQ(r.code, 2) << r.out;
}

}  // namespace

#endif
