// The kbench command line: usage errors, bad input and the no-GPU path, run
// as a real process. (On a machine with a GPU, the no-GPU test checks the
// out-of-range device message instead.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/record.h"
#include "tests/cpu/run_command.h"
#include "tests/cpu/temp_root.h"
#include "tests/gpu/gpu_policy.h"

// kbench exits 3 where it finds no CUDA device: the test skips, naming
// that, or fails where KBENCH_REQUIRE_GPU is set (tests/gpu/gpu_policy.h).
#define KB_SKIP_IF_NO_GPU(result)                                                          \
  do {                                                                                     \
    if ((result).code == 3) {                                                              \
      if (::kb::test::gpu_required())                                                      \
        GTEST_FAIL() << "no CUDA device, and KBENCH_REQUIRE_GPU is set: " << (result).out; \
      GTEST_SKIP() << "no CUDA device";                                                    \
    }                                                                                      \
  } while (0)

#ifdef KBENCH_EXE

namespace {

namespace fs = std::filesystem;

using Result = kb::test::CommandResult;

Result kbench(const std::string& args) { return kb::test::run_command(KBENCH_EXE, args); }

fs::path temp_dir(const std::string& name) {
  fs::path d = kb::test::process_temp_root("kb_cli_") / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

TEST(Cli, HelpAndList) {
  auto h = kbench("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_TRUE(contains(h.out, "kbench run")) << h.out;
  EXPECT_TRUE(contains(h.out, "--filter REGEX"));
  // Every command and option the parser takes is in the help.
  for (const char* o :
       {"kbench tune", "--rerun FILE", "--repeat N", "--inject-slowdown REGEX=PCT",
        "--allow-injected-slowdown", "--buffer-sets N", "--processes N", "--short-processes N",
        "--reps N", "--candidates N", "--opt=VALUE", "--detail"})
    EXPECT_TRUE(contains(h.out, o)) << o << "\n" << h.out;
  auto l = kbench("list");
  EXPECT_EQ(l.code, 0);
  EXPECT_TRUE(contains(l.out, "layer_norm"));
  EXPECT_TRUE(contains(l.out, "D={1024,4096,8192,16384}")) << l.out;
}

// The commit in --version (and in every row's git_sha) is the source
// tree's as of the build: 12 hex digits, "-dirty" when tracked files
// differed from it, or "unknown" outside a git checkout.
TEST(Cli, VersionNamesTheBuildsCommit) {
  auto v = kbench("--version");
  EXPECT_EQ(v.code, 0);
  const std::regex form(R"(kbench \S+ \(([0-9a-f]{12}(-dirty)?|unknown)\)\n)");
  EXPECT_TRUE(std::regex_match(v.out, form)) << v.out;
  // The source tree's commit now (the build just before the tests saw the
  // same one): a commit made after the build directory was configured must
  // show (a configure-time id did not).
  auto git = kb::test::run_command(
      "git", std::string("-C '") + KBENCH_SOURCE_DIR + "' rev-parse --short=12 HEAD");
  if (git.code != 0 || git.out.size() < 12) GTEST_SKIP() << "not a git checkout";
  EXPECT_TRUE(contains(v.out, "(" + git.out.substr(0, 12))) << v.out << " against " << git.out;
}

TEST(Cli, UsageErrorsExit2) {
  auto none = kbench("");
  EXPECT_EQ(none.code, 2);
  auto bogus = kbench("frobnicate");
  EXPECT_EQ(bogus.code, 2);
  EXPECT_TRUE(contains(bogus.out, "unknown command 'frobnicate'"));
  auto opt = kbench("run --fast");
  EXPECT_EQ(opt.code, 2);
  EXPECT_TRUE(contains(opt.out, "unknown option '--fast'"));
  auto missing = kbench("run --csv");
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.out, "--csv needs a value"));
  auto noise = kbench("run --max-noise zero");
  EXPECT_EQ(noise.code, 2);
}

// inf reaches the workers as JSON null (every row failed); a seed read as a
// double seeds another run than the one asked for (1.5 -> 1, 1e30: undefined).
TEST(Cli, NonFiniteNumbersAndInexactSeedsAreRefused) {
  for (const char* bad :
       {"--max-time inf", "--max-time=infinity", "--max-noise inf", "--timeout inf", "--seed inf",
        "--seed 1e30", "--seed 1.5", "--seed 18446744073709551616", "--seed -1"}) {
    auto r = kbench(std::string("run --filter layer_norm --no-csv ") + bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
  }
  auto ok = kbench("run --filter layer_norm --no-csv --seed 18446744073709551615 --max-time 1e3");
  EXPECT_NE(ok.code, 2) << ok.out;
}

// An empty file name is not the option left out: `--rerun ""` measured
// the whole suite as a new run, `--json=` wrote no JSON.
TEST(Cli, EmptyFileNamesAreRefused) {
  for (const char* bad :
       {"run --rerun ''", "run --rerun=", "run --filter layer_norm --json= --no-csv",
        "run --filter layer_norm --targets '' --no-csv",
        "run --filter layer_norm --csv=", "probe --write=", "tune --write ''"}) {
    auto r = kbench(bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "needs a file or folder name")) << bad << "\n" << r.out;
  }
}

// --no-csv beside --csv FILE: one of the two is a mistake. The pair was
// accepted and the run wrote no CSV, silently.
TEST(Cli, NoCsvWithCsvIsRefused) {
  const std::string csv = (temp_dir("no_csv") / "r.csv").string();
  for (const std::string& args : {"run --filter layer_norm --device 999 --no-csv --csv " + csv,
                                  "run --filter layer_norm --device 999 --csv=" + csv + " --no-csv",
                                  "run --rerun " + csv + ".suspects --no-csv --csv " + csv}) {
    auto r = kbench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "--no-csv and --csv")) << args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(csv)) << args;
  }
}

TEST(Cli, UnknownFilterListsExperiments) {
  auto r = kbench("run --filter no_such_experiment --no-csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, "matches no experiment")) << r.out;
  EXPECT_TRUE(contains(r.out, "layer_norm")) << r.out;
  auto bad = kbench("run --filter '(' --no-csv");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.out, "not a valid regex")) << bad.out;
}

TEST(Cli, BadTargetFilesExit2WithFileAndField) {
  auto missing = kbench("run --filter layer_norm --no-csv --targets /nonexistent/kb_targets");
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.out, "/nonexistent/kb_targets")) << missing.out;

  auto dir = temp_dir("targets");
  std::ofstream(dir / "broken.json")
      << R"J({"gpu": "X", "peaks": {"hbm_gbps": "lots"}, "targets": []})J";
  auto broken = kbench("run --filter layer_norm --no-csv --targets " + dir.string());
  EXPECT_EQ(broken.code, 2);
  EXPECT_TRUE(contains(broken.out, "broken.json")) << broken.out;
  EXPECT_TRUE(contains(broken.out, "peaks.hbm_gbps")) << broken.out;
}

// A number no double holds, a key given twice: exit 2 naming the file and
// the line (1e400 used to end in nlohmann's out_of_range.406 and exit 1).
TEST(Cli, TargetFileNumberOutOfRangeOrDuplicateKeyExit2WithLine) {
  auto dir = temp_dir("targets_strict");
  std::ofstream(dir / "big.json") << "{\"gpu\": \"X\",\n \"peaks\": {\"hbm_gbps\": 1e400},\n"
                                     " \"targets\": []}";
  auto big = kbench("run --filter layer_norm --no-csv --targets " + dir.string());
  EXPECT_EQ(big.code, 2) << big.out;
  EXPECT_TRUE(contains(big.out, "big.json:2:")) << big.out;
  EXPECT_TRUE(contains(big.out, "peaks.hbm_gbps: number out of range")) << big.out;
  EXPECT_FALSE(contains(big.out, "json.exception")) << big.out;
  fs::remove(dir / "big.json");
  std::ofstream(dir / "twice.json")
      << "{\"gpu\": \"X\", \"peaks\": {\"hbm_gbps\": 1},\n \"targets\": [],\n \"gpu\": \"Y\"}";
  auto twice = kbench("run --filter layer_norm --no-csv --targets " + dir.string());
  EXPECT_EQ(twice.code, 2) << twice.out;
  EXPECT_TRUE(contains(twice.out, "twice.json:3: gpu: given twice")) << twice.out;
}

// Two target files for the GPU: exit 2 naming both, before measuring.
TEST(Cli, TwoTargetFilesForOneGpuExit2NamingBoth) {
  auto dir = temp_dir("targets_two");
  const char* any_nvidia =
      R"J({"gpu": "X", "match": ["NVIDIA"], "peaks": {"hbm_gbps": 1000}, "targets": []})J";
  std::ofstream(dir / "a.json") << any_nvidia;
  std::ofstream(dir / "b.json") << any_nvidia;
  auto r = kbench("run --filter layer_norm --no-csv --targets " + dir.string());
  KB_SKIP_IF_NO_GPU(r);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, (dir / "a.json").string())) << r.out;
  EXPECT_TRUE(contains(r.out, (dir / "b.json").string())) << r.out;
}

TEST(Cli, ForeignCsvHeaderIsRefusedBeforeMeasuring) {
  auto dir = temp_dir("csv");
  const auto csv = dir / "theirs.csv";
  const std::string content = "a,b,c\n1,2,3\n";
  std::ofstream(csv) << content;
  auto r = kbench("run --filter layer_norm --csv " + csv.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "header")) << r.out;
  std::ifstream in(csv);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), content);
}

// A --csv that the append at the end would refuse is refused before
// anything is measured (exit 2, not 3 here or a night measured for
// nothing on a GPU), and a FIFO is not opened (a read of it blocks).
TEST(Cli, UnappendableCsvIsRefusedBeforeMeasuring) {
  auto dir = temp_dir("csv_paths");
  fs::create_directories(dir / "folder.csv");
  std::ofstream(dir / "file") << "x\n";
  ASSERT_EQ(::mkfifo((dir / "fifo.csv").c_str(), 0600), 0);
  std::ofstream(dir / "cut.csv") << kb::csv_header();  // no newline: the append refuses it
  for (const std::string& csv :
       {(dir / "folder.csv").string(), (dir / "fifo.csv").string(),
        (dir / "file" / "r.csv").string(), (dir / "cut.csv").string(), std::string("''")}) {
    auto r = kb::test::run_command(std::string("timeout 20 ") + KBENCH_EXE,
                                   "run --filter layer_norm --csv " + csv);
    EXPECT_EQ(r.code, 2) << csv << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "kbench: ")) << csv << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(dir / "file" / "r.csv"));
  // A new file in folders not there yet stays fine (created by the append).
  auto ok = kbench("run --filter layer_norm --device 999 --csv " +
                   (dir / "new" / "deeper" / "r.csv").string());
  EXPECT_TRUE(ok.code == 3 || (ok.code == 2 && contains(ok.out, "out of range"))) << ok.out;
  EXPECT_FALSE(fs::exists(dir / "new"));
}

// --json onto the history (by name or a link) or --csv onto the suspects
// file would destroy it: refused, exit 2, before anything runs.
TEST(Cli, OutputThatIsAnInputIsRefusedBeforeMeasuring) {
  auto dir = temp_dir("clash");
  const auto h = dir / "h.csv";
  const std::string content = std::string(KBENCH_SOURCE_DIR) + "\n";  // any text: never read
  std::ofstream(h) << content;
  fs::create_symlink("h.csv", dir / "link.json");
  for (const std::string& args :
       {"run --filter layer_norm --csv " + h.string() + " --json " + h.string(),
        "run --filter layer_norm --csv " + h.string() + " --json " + (dir / "link.json").string(),
        "run --rerun " + h.string() + " --csv " + (dir / "link.json").string()}) {
    auto r = kbench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "is the same file as")) << args << "\n" << r.out;
    std::ifstream in(h);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), content) << args;
  }
}

TEST(Cli, NoGpuIsOneClearLineOrDeviceOutOfRange) {
  auto r = kbench("run --filter layer_norm --no-csv --device 999");
  if (r.code == 3) {
    EXPECT_TRUE(contains(r.out, "no CUDA device found")) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  } else {
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_TRUE(contains(r.out, "--device 999 is out of range")) << r.out;
  }
  auto bad = kbench("run --filter layer_norm --no-csv --device minus-one");
  EXPECT_EQ(bad.code, 2) << bad.out;
}

// Without a GPU (or driver) the one line says which of the two is missing:
// CUDA's cudaErrorInsufficientDriver alone reads as "no device".
TEST(Cli, NoDriverOrOldDriverIsNamed) {
  auto r = kbench("run --filter layer_norm --no-csv");
  if (r.code != 3) GTEST_SKIP() << "a CUDA device is present";
  if (!contains(r.out, "cudaErrorInsufficientDriver"))
    GTEST_SKIP() << "a driver is loaded: " << r.out;
  EXPECT_TRUE(contains(r.out, "no NVIDIA driver is loaded") ||
              contains(r.out, "is too old: it supports CUDA"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "which needs NVIDIA driver")) << r.out;
}

// Command lines as nvbench and Google Benchmark users type them.
TEST(Cli, OptEqualsValueAndDeviceLists) {
  // --filter=REGEX is --filter REGEX: an unknown experiment is refused by name.
  auto f = kbench("run --filter=no_such_experiment --no-csv");
  EXPECT_EQ(f.code, 2) << f.out;
  EXPECT_TRUE(contains(f.out, "--filter 'no_such_experiment' matches no experiment")) << f.out;
  // A device list is accepted (then: no device here, or out of range).
  auto d = kbench("run --filter=layer_norm --no-csv -d 0,1");
  EXPECT_TRUE(d.code == 3 || d.code == 2 || d.code == 0 || d.code == 1) << d.out;
  EXPECT_FALSE(contains(d.out, "needs a GPU index")) << d.out;
  // A malformed device is bad usage (2) on any machine, before any device is looked for.
  for (const char* bad : {"--device abc", "--device=1,x", "--device 0,0", "-d ''"}) {
    auto r = kbench(std::string("run --filter layer_norm --no-csv ") + bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
  }
  auto flag = kbench("run --quick=1");
  EXPECT_EQ(flag.code, 2);
  EXPECT_TRUE(contains(flag.out, "--quick takes no value")) << flag.out;
}

TEST(Cli, UsageErrorsPrintTheUsageLine) {
  auto r = kbench("run --fast");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, "\nusage: kbench run [")) << r.out;
  auto p = kbench("probe --bogus");
  EXPECT_TRUE(contains(p.out, "\nusage: kbench probe [")) << p.out;
  EXPECT_TRUE(contains(p.out, "[--quick] [--replace]")) << p.out;
  auto t = kbench("tune --bogus");
  EXPECT_EQ(t.code, 2);
  EXPECT_TRUE(contains(t.out, "\nusage: kbench tune [--filter REGEX] [--device N]")) << t.out;
  EXPECT_TRUE(contains(t.out, "[--reps N] [--candidates N]")) << t.out;
  // run's usage names its re-measurement form.
  EXPECT_TRUE(contains(r.out, "kbench run --rerun SUSPECTS.csv [--repeat N]")) << r.out;
}

// main's options in the `--opt=value` form: the same rules as `--opt value`.
TEST(Cli, RerunRepeatAndInjectionTakeEqualsValues) {
  auto r = kbench("run --repeat=3 --no-csv");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--repeat N needs --rerun FILE")) << r.out;
  auto i = kbench("run --inject-slowdown=gemv=5 --no-csv");
  EXPECT_EQ(i.code, 2) << i.out;
  EXPECT_TRUE(contains(i.out, "needs --allow-injected-slowdown")) << i.out;
  auto a = kbench("run --allow-injected-slowdown=yes --inject-slowdown=gemv=5 --no-csv");
  EXPECT_EQ(a.code, 2) << a.out;
  EXPECT_TRUE(contains(a.out, "--allow-injected-slowdown takes no value")) << a.out;
  auto b = kbench("run --buffer-sets=0 --no-csv");
  EXPECT_EQ(b.code, 2) << b.out;
  EXPECT_TRUE(contains(b.out, "--buffer-sets needs a whole number from 1 to 1000")) << b.out;
  for (const char* bad : {"0", "10", "three"}) {
    auto p = kbench(std::string("run --processes=") + bad + " --no-csv");
    EXPECT_EQ(p.code, 2) << p.out;
    EXPECT_TRUE(contains(p.out, "--processes needs a whole number from 1 to 9")) << p.out;
    auto q = kbench(std::string("run --short-processes=") + bad + " --no-csv");
    EXPECT_EQ(q.code, 2) << q.out;
    EXPECT_TRUE(contains(q.out, "--short-processes needs a whole number from 1 to 9")) << q.out;
  }
  auto c = kbench("probe --replace=yes");
  EXPECT_EQ(c.code, 2) << c.out;
  EXPECT_TRUE(contains(c.out, "--replace takes no value")) << c.out;
  auto t = kbench("tune --reps=0");
  EXPECT_EQ(t.code, 2) << t.out;
  EXPECT_TRUE(contains(t.out, "--reps needs a whole number from 1 to 1000")) << t.out;
  // A malformed device is bad usage before tune looks for a GPU.
  auto d = kbench("tune --device=x");
  EXPECT_EQ(d.code, 2) << d.out;
  EXPECT_TRUE(contains(d.out, "--device needs a GPU index")) << d.out;
}

// An option another command takes is refused, not silently ignored.
TEST(Cli, OptionsACommandDoesNotTakeAreRefused) {
  for (const auto& [args, what] : std::vector<std::pair<std::string, std::string>>{
           {"run --write draft.json", "run does not take --write"},
           {"probe --csv x.csv", "probe does not take --csv"},
           {"probe --filter gemv", "probe does not take --filter"},
           {"list --quick", "list does not take --quick"},
           {"probe --device 0,1", "probe measures one GPU"},
           {"probe --rerun s.csv", "probe does not take --rerun"},
           {"tune --csv x.csv", "tune does not take --csv"},
           {"tune --repeat 3", "tune does not take --repeat"},
           {"run --reps 5", "run does not take --reps"},
           {"run --candidates 4", "run does not take --candidates"},
           {"probe --inject-slowdown gemv=5", "probe does not take --inject-slowdown"},
           {"run --replace", "run does not take --replace"},
           {"probe --detail", "probe does not take --detail"}}) {
    auto r = kbench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, what)) << args << "\n" << r.out;
  }
}

TEST(Cli, AFileWithoutItsFlagGetsAHint) {
  auto r = kbench("run run14.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, "the results file follows --csv (kbench run --csv run14.csv)"))
      << r.out;
  auto p = kbench("probe h100.json");
  EXPECT_EQ(p.code, 2);
  EXPECT_TRUE(contains(p.out, "follows --write (kbench probe --write h100.json)")) << p.out;
}

}  // namespace

#endif  // KBENCH_EXE

#ifdef KBENCH_SELFTEST_EXE
#include "reports/json_writer.h"

namespace {

// With a GPU: a kernel fault and a crash each make one point `failed`, and
// the points after them still run (each experiment in its own worker
// process; a new worker after a lost context or a crash). kbench_selftest
// is kbench's CLI with the self-test experiment alone.
TEST(CliIsolation, FaultAndCrashAreFailedRowsAndTheRunGoesOn) {
  auto dir = temp_dir("isolation");
  auto json_path = dir / "rows.json";
  auto r = kb::test::run_command(
      KBENCH_SELFTEST_EXE,
      "run --filter _selftest_isolation --quick --no-csv --json " + json_path.string());
  KB_SKIP_IF_NO_GPU(r);
  EXPECT_EQ(r.code, 1) << r.out;  // failed rows -> exit 1
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << r.out;
  auto j = nlohmann::json::parse(in);
  std::vector<kb::Record> rows;
  for (const auto& x : j)
    if (x["name"] == "_selftest_isolation") rows.push_back(kb::record_from_json(x));
  ASSERT_EQ(rows.size(), 5u) << r.out;
  EXPECT_EQ(rows[0].status, "ok") << rows[0].message;
  EXPECT_EQ(rows[1].status, "failed");
  EXPECT_TRUE(contains(rows[1].message, "cudaError")) << rows[1].message;
  EXPECT_EQ(rows[2].status, "ok") << rows[2].message;
  EXPECT_EQ(rows[3].status, "failed");
  EXPECT_TRUE(contains(rows[3].message, "signal")) << rows[3].message;
  EXPECT_EQ(rows[4].status, "ok") << rows[4].message;
  EXPECT_TRUE(rows[4].actual.has_value());
}

TEST(CliIsolation, TheProductCarriesNoSelfTest) {
  auto l = kb::test::run_command(KBENCH_EXE, "list");
  EXPECT_FALSE(contains(l.out, "_selftest")) << l.out;
  EXPECT_TRUE(contains(l.out, "nccl_all_reduce")) << l.out;
}

}  // namespace
#endif

#ifdef KBENCH_EXE
namespace {

TEST(Cli, ProbeWithoutGpuOrDraftsATargetFile) {
  auto dir = temp_dir("probe");
  auto path = dir / "draft.json";
  auto r = kbench("probe --quick --write " + path.string());
  if (r.code == 3) EXPECT_TRUE(contains(r.out, "no CUDA device found")) << r.out;
  KB_SKIP_IF_NO_GPU(r);  // the draft itself needs a GPU
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in);
  EXPECT_GT(j["measured"]["read_gbps"].get<double>(), 100);
  EXPECT_GT(j["measured"]["launch_us"].get<double>(), 0);
  EXPECT_FALSE(j["targets"].empty());
  // The chains, measured in worker processes as rows are (the mean of
  // three): a further-launch cost per chain size (8 MB and up, to the
  // ladder's largest rung).
  EXPECT_TRUE(contains(r.out, "in worker processes of their own")) << r.out;
  EXPECT_TRUE(contains(r.out, "the mean of 3, as a row's")) << r.out;
  EXPECT_TRUE(contains(r.out, "chain graph x8 8 MB: ")) << r.out;
  const auto& ladder = j["measured"]["ladder"];
  EXPECT_GE(ladder.at("graph_node_extra_by_link").size(), 1u) << ladder.dump();
  EXPECT_EQ(ladder.at("launch_extra_by_link").size(), ladder.at("graph_node_extra_by_link").size());
  // Peaks from the datasheet table where the GPU is in it (H100, H200 ...),
  // never the measured read bandwidth passed off as a datasheet figure.
  const std::string source = j["peaks"]["source"].get<std::string>();
  if (contains(source, "NOT A DATASHEET FIGURE")) {
    EXPECT_TRUE(contains(r.out, "is not in the datasheet table")) << r.out;
  } else {
    EXPECT_TRUE(contains(source, "datasheets/nvidia.json")) << source;
    EXPECT_NE(j["peaks"]["hbm_gbps"].get<double>(), j["measured"]["read_gbps"].get<double>());
    EXPECT_GT(j["peaks"]["bf16_tflops"].get<double>(), 0);
  }
}

}  // namespace
#endif
