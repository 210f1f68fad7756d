// The nightly workflow files (.github/workflows/nightly.yml,
// ci/gitlab-nightly.yml): they parse as YAML and hold the steps a nightly
// needs, in order; and the workflow's own nightly command, run on the CPU as
// a dry run (KBENCH_NIGHTLY_DRY_RUN=1: no kbench) against a history recorded
// on an H100, gives the verdicts and reports it should: a quiet night
// passes, a night with a crashed row and a 15% drop fails, and the job's
// last step exits with that code. YAML is read through python3's yaml
// module (the test skips without it; tools/setup.sh installs python3-yaml).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/csv_reader.h"
#include "kgate_test_util.h"

#ifdef KBENCH_KGATE_EXE

namespace {

using namespace kgt;
using nlohmann::json;

const fs::path kSource = KBENCH_SOURCE_DIR;

// The file as JSON, or nullopt when python3 or its yaml module is missing.
std::optional<json> load_yaml(const fs::path& p) {
  Result r = kb::test::run_command(
      "python3",
      "-c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' " +
          p.string());
  if (r.code != 0) {
    if (contains(r.out, "No module named") || r.code == 127) return std::nullopt;
    ADD_FAILURE() << p << " does not parse as YAML:\n" << r.out;
    return json();
  }
  return json::parse(r.out);
}

std::string text_of(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// The index of the first step whose `uses` or `run` contains `what`; -1 if none.
int step_index(const json& steps, const std::string& what) {
  for (size_t i = 0; i < steps.size(); ++i)
    if (contains(text_of(steps[i], "uses"), what) || contains(text_of(steps[i], "run"), what))
      return static_cast<int>(i);
  return -1;
}

bool runs_always(const json& step) { return contains(text_of(step, "if"), "always()"); }

TEST(CiWorkflows, GithubNightlyHasEveryStepInOrder) {
  auto doc = load_yaml(kSource / ".github/workflows/nightly.yml");
  if (!doc) GTEST_SKIP() << "python3 with the yaml module is not installed";
  ASSERT_TRUE(doc->contains("jobs")) << doc->dump(1);
  const json& job = (*doc)["jobs"]["nightly"];
  // YAML 1.1 reads the key `on` as true.
  EXPECT_TRUE(doc->contains("on") || doc->contains("true")) << "no trigger";
  const std::string runner = job["runs-on"].dump();
  EXPECT_TRUE(contains(runner, "\"gpu\"")) << "no GPU runner label: " << runner;
  const json& steps = job["steps"];
  ASSERT_TRUE(steps.is_array());

  const int checkout = step_index(steps, "actions/checkout");
  const int restore = step_index(steps, "actions/cache/restore");
  const int build = step_index(steps, "tools/build.sh");
  const int nightly = step_index(steps, "tools/nightly.sh");
  const int summary = step_index(steps, "GITHUB_STEP_SUMMARY");
  const int junit = step_index(steps, "junit");
  const int save = step_index(steps, "actions/cache/save");
  const int upload = step_index(steps, "actions/upload-artifact");
  const int pages = step_index(steps, "actions/upload-pages-artifact");
  const int verdict = static_cast<int>(steps.size()) - 1;
  for (int i : {checkout, restore, build, nightly, summary, junit, save, upload, pages})
    ASSERT_GE(i, 0) << steps.dump(1);
  EXPECT_LT(checkout, restore);
  EXPECT_LT(restore, build);
  EXPECT_LT(build, nightly);
  for (int after : {summary, junit, save, upload, pages}) {
    EXPECT_LT(nightly, after);
    EXPECT_TRUE(runs_always(steps[after])) << steps[after].dump();
  }
  // One build, for the runner's own GPU.
  const std::string b = text_of(steps[build], "run");
  EXPECT_TRUE(contains(b, "-DCMAKE_CUDA_ARCHITECTURES=native")) << b;
  // The history: restored by prefix, saved on red nights too.
  EXPECT_FALSE(text_of(steps[restore]["with"], "restore-keys").empty());
  EXPECT_EQ(text_of(steps[restore]["with"], "path"), text_of(steps[save]["with"], "path"));
  // The nightly step never stops the job, and records its code ...
  const std::string n = text_of(steps[nightly], "run");
  EXPECT_TRUE(contains(n, "|| code=$?")) << n;
  EXPECT_TRUE(contains(n, "GITHUB_OUTPUT")) << n;
  EXPECT_EQ(text_of(steps[nightly], "id"), "nightly");
  // ... which the last step applies, always.
  EXPECT_TRUE(runs_always(steps[verdict]));
  EXPECT_TRUE(contains(text_of(steps[verdict], "run"), "steps.nightly.outputs.code"));
  EXPECT_EQ(text_of(steps[junit]["with"], "report_paths"), "out/junit.xml");
  EXPECT_TRUE(contains(text_of(steps[upload]["with"], "path"), "out/"));
  EXPECT_TRUE(contains(text_of(steps[summary], "run"), "out/summary.md"));
  // Pages: deployed by a job of its own, whatever the verdict.
  const json& p = (*doc)["jobs"]["pages"];
  EXPECT_TRUE(contains(text_of(p, "if"), "always()"));
  EXPECT_TRUE(contains(p["steps"].dump(), "actions/deploy-pages"));
}

TEST(CiWorkflows, GitlabNightlyHasEveryPiece) {
  auto doc = load_yaml(kSource / "ci/gitlab-nightly.yml");
  if (!doc) GTEST_SKIP() << "python3 with the yaml module is not installed";
  const json& job = (*doc)["kbench-nightly"];
  EXPECT_TRUE(contains(job["tags"].dump(), "\"gpu\"")) << job["tags"].dump();
  const std::string script = job["script"].dump();
  EXPECT_TRUE(contains(script, "-DCMAKE_CUDA_ARCHITECTURES=native")) << script;
  EXPECT_TRUE(contains(script, "tools/nightly.sh --history")) << script;
  EXPECT_TRUE(contains(script, "|| code=$?")) << script;
  EXPECT_EQ(text_of(job["artifacts"], "when"), "always");
  EXPECT_EQ(text_of(job["artifacts"]["reports"], "junit"), "out/junit.xml");
  EXPECT_EQ(text_of(job["cache"], "when"), "always");
  EXPECT_TRUE(contains(job["cache"]["paths"].dump(), "history/"));
  EXPECT_TRUE(contains((*doc)["pages"]["script"].dump(), "out/report.html"));
}

// ---- the dry run ----

// The recorded H100 run (tests/data), as `nights` runs: the earlier ones
// with a small deterministic wobble (±0.3%), the newest as recorded.
std::string recorded_history(int nights) {
  const std::string text = slurp(kSource / "tests/data/h100-2026-11-24.csv");
  kb::CsvReader in(text);
  std::vector<std::string_view> f;
  EXPECT_TRUE(in.next(f));
  std::vector<std::string> header(f.begin(), f.end());
  auto col = [&](const char* n) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), n) - header.begin());
  };
  const size_t actual = col("actual"), run_id = col("run_id"), ts = col("timestamp"),
               sha = col("git_sha");
  std::vector<std::vector<std::string>> rows;
  while (in.next(f)) rows.emplace_back(f.begin(), f.end());
  std::string out = kb::csv_line(header) + "\n";
  for (int n = 0; n < nights; ++n) {
    for (auto r : rows) {
      if (n + 1 < nights) {
        if (!r[actual].empty())
          r[actual] = kb::format_number(std::stod(r[actual]) * (1 + 0.003 * ((n * 7) % 5 - 2) / 2));
        char buf[64];
        std::snprintf(buf, sizeof buf, "2026-11-%02dT03:00:00Z", n + 1);
        r[ts] = buf;
        r[run_id] = "night" + std::to_string(n + 1);
        r[sha] = "c0ffee" + std::to_string(100000 + n);
      }
      out += kb::csv_line(r) + "\n";
    }
  }
  return out;
}

// The newest run again, as a new night: one row crashed, one key 15% slower.
std::string bad_night() {
  std::string text = slurp(kSource / "tests/data/h100-2026-11-24.csv");
  kb::CsvReader in(text);
  std::vector<std::string_view> f;
  in.next(f);
  std::vector<std::string> header(f.begin(), f.end());
  auto col = [&](const char* n) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), n) - header.begin());
  };
  std::string out;
  while (in.next(f)) {
    std::vector<std::string> r(f.begin(), f.end());
    r[col("run_id")] = "night-bad";
    r[col("timestamp")] = "2026-11-25T03:00:00Z";
    r[col("git_sha")] = "badbadbadbad";
    const bool mean = r[col("shape")] == "mean";
    if (mean && r[col("name")] == "gemv" && r[col("dtype")] == "int8")
      r[col("actual")] = kb::format_number(std::stod(r[col("actual")]) * 0.85);
    if (mean && r[col("name")] == "layer_norm") {
      r[col("status")] = "failed";
      r[col("actual")] = "";
      r[col("message")] = "worker died of signal 11";
    }
    out += kb::csv_line(r) + "\n";
  }
  return out;
}

// The GitHub nightly step's own script, in a folder that looks like the
// checkout (tools/ and targets/ linked), with the dry-run switch on.
struct Night {
  int code = -1;
  std::string log, github_output;
};

Night run_nightly_step(const fs::path& work) {
  auto doc = load_yaml(kSource / ".github/workflows/nightly.yml");
  const json& steps = (*doc)["jobs"]["nightly"]["steps"];
  const std::string script = text_of(steps[step_index(steps, "tools/nightly.sh")], "run");
  write(work / "step.sh", script);
  const std::string build = fs::path(KBENCH_KGATE_EXE).parent_path().parent_path().parent_path();
  fs::remove(work / "github_output");
  Result r = kb::test::run_command(
      "cd " + work.string() + " && KBENCH_NIGHTLY_DRY_RUN=1 KBENCH_BUILD_DIR=" + build +
          " HISTORY=history/results.csv GITHUB_OUTPUT=" + (work / "github_output").string() +
          " bash -e step.sh",
      "");
  return {r.code, r.out, slurp(work / "github_output")};
}

int run_verdict_step(const fs::path& work, const std::string& code) {
  auto doc = load_yaml(kSource / ".github/workflows/nightly.yml");
  const json& steps = (*doc)["jobs"]["nightly"]["steps"];
  std::string script = text_of(steps.back(), "run");
  const std::string expr = "${{ steps.nightly.outputs.code }}";
  script.replace(script.find(expr), expr.size(), code);
  write(work / "verdict.sh", script);
  return kb::test::run_command("bash -e " + (work / "verdict.sh").string(), "").code;
}

TEST(CiWorkflows, DryRunOfTheNightlyStepOnARecordedHistory) {
  if (!load_yaml(kSource / ".github/workflows/nightly.yml"))
    GTEST_SKIP() << "python3 with the yaml module is not installed";
  fs::path work = temp_dir("ci_dry_run");
  fs::create_directory_symlink(kSource / "tools", work / "tools");
  fs::create_directory_symlink(kSource / "targets", work / "targets");
  fs::create_directories(work / "history");
  write(work / "history/results.csv", recorded_history(13));

  // A quiet night: passes, every report written.
  Night quiet = run_nightly_step(work);
  ASSERT_EQ(quiet.code, 0) << quiet.log;
  EXPECT_EQ(quiet.github_output, "code=0\n") << quiet.log;
  EXPECT_TRUE(contains(quiet.log, "nightly.sh: dry run")) << quiet.log;
  std::string md = slurp(work / "out/summary.md");
  EXPECT_EQ(md.rfind("## kgate: PASS", 0), 0u) << md;
  EXPECT_TRUE(contains(md, "commit d691121bf87b-dirty, driver 580.159.04, CUDA 13.0")) << md;
  EXPECT_TRUE(contains(slurp(work / "out/junit.xml"), "<testsuite name=\"kgate\""));
  EXPECT_TRUE(contains(slurp(work / "out/report.html"), "</html>"));
  EXPECT_TRUE(contains(slurp(work / "out/gpt_fast_benchmark.csv"),
                       "\nLlama-2-7b-chat-hf,token_per_sec,200,"));
  EXPECT_EQ(run_verdict_step(work, "0"), 0);

  // A night with a crash and a drop: fails, and says why and since when.
  std::ofstream(work / "history/results.csv", std::ios::app) << bad_night();
  Night bad = run_nightly_step(work);
  ASSERT_EQ(bad.code, 0) << "the step must not stop the job\n" << bad.log;
  EXPECT_EQ(bad.github_output, "code=1\n") << bad.log;
  md = slurp(work / "out/summary.md");
  EXPECT_EQ(md.rfind("## kgate: FAIL: 2 regressions", 0), 0u) << md;
  EXPECT_TRUE(contains(md, "commit badbadbadbad")) << md;
  EXPECT_TRUE(contains(md, "worker died of signal 11; last good: run 20261124T092803Z-5f407d"))
      << md;
  EXPECT_TRUE(contains(md, "| **FAIL** | gemv [mean] int8 memory_bandwidth(GB/s)")) << md;
  std::string j = slurp(work / "out/junit.xml");
  EXPECT_TRUE(contains(j, "failures=\"1\" errors=\"1\"")) << j;
  EXPECT_EQ(run_verdict_step(work, "1"), 1);

  // GitLab's script, from the nightly line on, ends with the same code.
  auto gl = load_yaml(kSource / "ci/gitlab-nightly.yml");
  std::string script;
  bool from = false;
  for (const auto& line : (*gl)["kbench-nightly"]["script"]) {
    from = from || contains(line.get<std::string>(), "tools/nightly.sh");
    if (from) script += line.get<std::string>() + "\n";
  }
  write(work / "gitlab.sh", script);
  const std::string build = fs::path(KBENCH_KGATE_EXE).parent_path().parent_path().parent_path();
  Result g = kb::test::run_command("cd " + work.string() +
                                       " && KBENCH_NIGHTLY_DRY_RUN=1 KBENCH_BUILD_DIR=" + build +
                                       " HISTORY=history/results.csv bash -e gitlab.sh",
                                   "");
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_TRUE(contains(g.out, "## kgate: FAIL")) << g.out;
}

// The script's own usage errors and a history that cannot be read exit 2.
TEST(CiWorkflows, NightlyScriptUsageAndBadInput) {
  const std::string sh = (kSource / "tools/nightly.sh").string();
  const std::string build = fs::path(KBENCH_KGATE_EXE).parent_path().parent_path().parent_path();
  fs::path work = temp_dir("ci_nightly_usage");
  Result none = kb::test::run_command(sh, "");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_TRUE(contains(none.out, "usage: tools/nightly.sh --history FILE --out DIR")) << none.out;
  Result bogus = kb::test::run_command(sh, "--history h.csv --out o --frobnicate");
  EXPECT_EQ(bogus.code, 2) << bogus.out;
  EXPECT_TRUE(contains(bogus.out, "kbench run options go after --")) << bogus.out;
  Result missing = kb::test::run_command(sh, "--dry-run --build " + build + " --history " +
                                                 (work / "none.csv").string() + " --out " +
                                                 (work / "out").string());
  EXPECT_EQ(missing.code, 2) << missing.out;
  write(work / "empty.csv", "");
  Result empty = kb::test::run_command(sh, "--dry-run --build " + build + " --history " +
                                               (work / "empty.csv").string() + " --out " +
                                               (work / "out").string());
  EXPECT_EQ(empty.code, 2) << empty.out;
}

}  // namespace

#endif

#ifdef KBENCH_KGATE_EXE
namespace {

// tools/run.sh --help prints the options and builds nothing; the CMake
// options it is given (KBENCH_CUDA_ARCH, KBENCH_CMAKE_ARGS) reach the build.
TEST(CiWorkflows, RunShHelpWithoutBuildingAndCmakeOptions) {
  fs::path work = kgt::temp_dir("ci_run_sh");
  fs::path bin = work / "bin";
  fs::create_directories(bin);
  // Stand-ins that record their arguments: setup has nothing to install,
  // and the build is the stand-in cmake's record, not a build.
  kgt::write(bin / "cmake",
             "#!/bin/sh\necho \"$@\" >> " + (work / "cmake.log").string() + "\nexit 1\n");
  fs::permissions(bin / "cmake", fs::perms::owner_all);
  const std::string env = "PATH=" + bin.string() + ":$PATH ";
  const std::string run_sh = (kSource / "tools/run.sh").string();
  kgt::Result h = kb::test::run_command(env + run_sh, "--help");
  EXPECT_EQ(h.code, 0) << h.out;
  EXPECT_TRUE(kgt::contains(h.out, "kbench run [options]")) << h.out;
  EXPECT_TRUE(kgt::contains(h.out, "KBENCH_CUDA_ARCH")) << h.out;
  EXPECT_FALSE(fs::exists(work / "cmake.log")) << "--help ran cmake";
  // With the stand-in cmake the build fails; its arguments show the options.
  kgt::Result b = kb::test::run_command(
      env + "KBENCH_BUILD_DIR=" + (work / "build").string() +
          " KBENCH_CUDA_ARCH=90 KBENCH_CMAKE_ARGS='-DKBENCH_X=1 -DKBENCH_Y=2' " + run_sh,
      "--quick");
  if (!fs::exists(work / "cmake.log")) GTEST_SKIP() << "tools/setup.sh stopped first:\n" << b.out;
  EXPECT_NE(b.code, 0);
  std::string log = kgt::slurp(work / "cmake.log");
  EXPECT_TRUE(kgt::contains(log, "-DCMAKE_CUDA_ARCHITECTURES=90 -DKBENCH_X=1 -DKBENCH_Y=2")) << log;
}

}  // namespace
#endif

namespace {

// The docs cite only what is in the repository: every relative link of
// README.md and docs/*.md names a file that exists, and no page sends the
// reader to a design file or issue tracker the repository does not hold.
TEST(CiDocs, LinksResolveAndNothingOutsideTheRepoIsCited) {
  std::vector<fs::path> pages = {kSource / "README.md"};
  for (const auto& e : fs::directory_iterator(kSource / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  const std::regex link(R"(\]\(([^)#:]+)(#[^)]*)?\))");
  for (const auto& page : pages) {
    const std::string text = kgt::slurp(page);
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
      const fs::path target = page.parent_path() / (*it)[1].str();
      EXPECT_TRUE(fs::exists(target)) << page << " links to " << (*it)[1].str();
    }
    EXPECT_FALSE(kgt::contains(text, "DESIGN.md")) << page;
    EXPECT_FALSE(std::regex_search(text, std::regex(R"([Ii]ssue \d)"))) << page;
  }
  const std::string readme = kgt::slurp(kSource / "README.md");
  EXPECT_TRUE(kgt::contains(readme, "Apache License 2.0")) << "README names the license";
  EXPECT_TRUE(kgt::contains(kgt::slurp(kSource / "LICENSE"), "Apache License"));
  EXPECT_TRUE(kgt::contains(readme, "driver 580 or newer"))
      << "README states the driver requirement";
}

}  // namespace
