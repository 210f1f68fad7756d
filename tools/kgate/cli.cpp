#include "tools/kgate/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgate_help_text.h"
#include "reports/atomic_write.h"
#include "reports/gate_writers.h"
#include "reports/result_reader.h"
#include "suite/targets.h"
#include "tools/kgate/bringup.h"
#include "tools/kgate/compare.h"
#include "tools/kgate/dashboard.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/gen_history.h"
#include "tools/kgate/gpt_fast_export.h"
#include "tools/kgate/history.h"
#include "tools/kgate/noise.h"
#include "tools/kgate/selftest.h"
#include "tools/kgate/simulate.h"
#include "tools/kgate/suspects.h"

namespace kb {

namespace {

// Bad usage: exit 2 with the message and the command's usage line.
struct UsageError : std::runtime_error {
  explicit UsageError(const std::string& what, const char* usage_line = nullptr)
      : std::runtime_error(what), usage(usage_line ? usage_line : "") {}
  std::string usage;
};

constexpr const char* kTopUsage =
    "kgate check|compare|dashboard|noise|siblings|gpt-fast|bringup [options]   (kgate --help)";
constexpr const char* kCheckUsage =
    "kgate check --results FILE... [--targets DIR] [--markdown FILE] [--junit FILE] "
    "[--html FILE] [--suspects FILE] [--all] [options]";
constexpr const char* kCompareUsage =
    "kgate compare BASE.csv NEW.csv [--min-change REL] [--noise REL] [--markdown FILE]";
constexpr const char* kDashboardUsage =
    "kgate dashboard --results FILE... --out DIR|FILE.html [--targets DIR] [--title TEXT] "
    "[options]";
constexpr const char* kNoiseUsage = "kgate noise --results FILE... [--markdown FILE] [--csv FILE]";
constexpr const char* kSiblingsUsage =
    "kgate siblings --results FILE... [--threshold REL] [--min-points N] [--markdown FILE]";
constexpr const char* kBringupUsage =
    "kgate bringup --results FILE... --out DIR [--reference GPU|FILE.csv] [--reference-gpu NAME] "
    "[--gpu NAME] [--targets DIR] [--datasheets FILE] [--probe FILE] [--threshold REL]";
constexpr const char* kGptFastUsage =
    "kgate gpt-fast --results FILE... --csv FILE [--json FILE] [--targets DIR]";
// An output file that cannot be written: the verdict would be lost.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Args = std::vector<std::string>;

// `--opt=value` as `--opt value` (nvbench's and Google Benchmark's users
// write it so). A flag that takes no value refuses one.
Args expand_equals(const Args& in, std::initializer_list<const char*> no_value, const char* usage) {
  Args out;
  for (const auto& a : in) {
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      out.push_back(a);
      continue;
    }
    std::string flag = a.substr(0, eq);
    for (const char* f : no_value)
      if (flag == f) throw UsageError(flag + " takes no value (got '" + a + "')", usage);
    out.push_back(flag);
    out.push_back(a.substr(eq + 1));
  }
  return out;
}

// An argument where an option was expected: a file given without its flag
// gets a hint.
[[noreturn]] void unexpected(const std::string& cmd, const std::string& arg, const char* usage,
                             const char* file_flag) {
  if (arg.rfind("-", 0) == 0) throw UsageError(cmd + ": unknown option '" + arg + "'", usage);
  std::error_code ec;
  bool looks_like_file = arg.find('.') != std::string::npos || arg.find('/') != std::string::npos ||
                         std::filesystem::exists(arg, ec);
  if (looks_like_file && file_flag)
    throw UsageError(cmd + ": unexpected argument '" + arg + "': files follow " + file_flag +
                         " (kgate " + cmd + " " + file_flag + " " + arg + " ...)",
                     usage);
  throw UsageError(cmd + ": unexpected argument '" + arg + "'", usage);
}

// Reads every results file; the warnings of a file that is then refused
// are printed first, so that its error can refer to them.
void read_history(History& h, const std::vector<std::string>& files);

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// Reads the value after a flag; `i` is left on it.
const std::string& value_of(const Args& a, size_t& i) {
  if (i + 1 >= a.size()) throw UsageError(a[i] + " needs a value");
  return a[++i];
}

double parse_double(const std::string& flag, const std::string& v, double lo, double hi,
                    bool hi_open = false) {
  double x = 0;
  auto res = std::from_chars(v.data(), v.data() + v.size(), x);
  if (res.ec != std::errc() || res.ptr != v.data() + v.size() || !std::isfinite(x) || x < lo ||
      x > hi || (hi_open && x == hi))
    throw UsageError(flag + " " + v + ": expected a number in [" + std::to_string(lo).substr(0, 4) +
                     ", " + std::to_string(hi).substr(0, 4) + (hi_open ? ")" : "]"));
  return x;
}

long parse_int(const std::string& flag, const std::string& v, long lo, long hi) {
  long x = 0;
  auto res = std::from_chars(v.data(), v.data() + v.size(), x);
  if (res.ec != std::errc() || res.ptr != v.data() + v.size() || x < lo || x > hi)
    throw UsageError(flag + " " + v + ": expected a whole number from " + std::to_string(lo) +
                     " to " + std::to_string(hi));
  return x;
}

// Whole or not at all (reports/atomic_write.h): the previous file stays on any failure.
void write_file(const std::string& path, const std::string& text) { atomic_write(path, text); }

// Before anything is written: no output may be an input (the
// history above all) or another output.
void refuse_clashes(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  const std::string clash = output_clash(inputs, outputs);
  if (!clash.empty()) throw OutputError(clash);
}

// The files behind --results and the target files loaded, as inputs.
std::vector<NamedPath> inputs_of(const std::vector<std::string>& results,
                                 const std::vector<TargetFile>& targets) {
  std::vector<NamedPath> in;
  for (const auto& r : results) in.push_back({"--results", r});
  for (const auto& t : targets) in.push_back({"--targets", t.path});
  return in;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "kgate: warning: %s\n", w.c_str());
}

// For the commands that do not gate (check reports tonight's damaged rows
// as failures of the night): every damaged row is a warning.
void print_history_warnings(const History& h) {
  for (const auto& w : h.warnings()) std::fprintf(stderr, "kgate: warning: %s\n", w.text().c_str());
  for (const auto& w : h.untrusted())
    std::fprintf(stderr, "kgate: warning: %s; row skipped\n", w.text().c_str());
}

void read_history(History& h, const std::vector<std::string>& files) {
  try {
    for (const auto& p : files) h.add_file(p);
  } catch (const ResultFileError&) {
    print_history_warnings(h);
    throw;
  }
  h.finish();
}

// `--results FILE...`: the files up to the next option.
void take_files(const Args& a, size_t& i, std::vector<std::string>& files, const char* usage) {
  size_t before = files.size();
  while (i + 1 < a.size() && a[i + 1].rfind("--", 0) != 0) files.push_back(a[++i]);
  if (files.size() == before) throw UsageError("--results needs at least one file", usage);
}

int cmd_check(const Args& args) {
  const Args a = expand_equals(args, {"--strict", "--all"}, kCheckUsage);
  GateOptions opt;
  std::vector<std::string> results;
  std::string targets_dir, markdown, junit, html, suspects;
  double max_suspects = kMaxSuspectShare;
  bool all = false;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--results") {
      take_files(a, i, results, kCheckUsage);
    } else if (f == "--all") {
      all = true;
    } else if (f == "--targets") {
      targets_dir = value_of(a, i);
    } else if (f == "--window") {
      opt.rule.window = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    } else if (f == "--min-gap") {
      opt.rule.min_gap = parse_double(f, value_of(a, i), 0, 1, true);
    } else if (f == "--min-history") {
      opt.rule.min_history = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    } else if (f == "--max-noise") {
      opt.rule.max_noise = parse_double(f, value_of(a, i), 0, 1, true);
    } else if (f == "--board-gap") {
      opt.board.board_gap = parse_double(f, value_of(a, i), 0, 1, true);
    } else if (f == "--strict") {
      opt.strict = true;
    } else if (f == "--suspects") {
      suspects = value_of(a, i);
    } else if (f == "--max-suspects") {
      max_suspects = parse_double(f, value_of(a, i), 0.01, 1);
    } else if (f == "--shared-noise") {
      opt.rule.shared_noise = parse_double(f, value_of(a, i), 0, 1);
    } else if (f == "--markdown") {
      markdown = value_of(a, i);
    } else if (f == "--junit") {
      junit = value_of(a, i);
    } else if (f == "--html") {
      html = value_of(a, i);
    } else {
      unexpected("check", f, kCheckUsage, "--results");
    }
  }
  if (results.empty()) throw UsageError("check needs --results FILE...", kCheckUsage);
  if (opt.rule.min_history > opt.rule.window)
    throw UsageError("--min-history " + std::to_string(opt.rule.min_history) +
                         " is larger than --window " + std::to_string(opt.rule.window),
                     kCheckUsage);
  if (!targets_dir.empty()) opt.targets = load_target_dir(targets_dir);
  refuse_clashes(
      inputs_of(results, opt.targets),
      {{"--markdown", markdown}, {"--junit", junit}, {"--html", html}, {"--suspects", suspects}});

  History h;
  read_history(h, results);
  GateReport rep = run_gate(h, opt);
  rep.host = host_name();
  rep.generated_at = utc_now();
  print_warnings(rep.warnings);
  std::fputs(gate_console(rep, all).c_str(), stdout);
  std::fflush(stdout);
  if (!markdown.empty()) write_file(markdown, gate_markdown(rep));
  if (!junit.empty()) write_file(junit, gate_junit(rep));
  if (!html.empty()) write_file(html, gate_html(rep));
  if (!suspects.empty()) {
    size_t capped = 0;
    std::string text = suspects_csv(rep, &capped, max_suspects);
    write_file(suspects, text);
    size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) - 1;
    std::printf("suspects: %zu key(s) to re-measure written to %s", n, suspects.c_str());
    if (capped)
      std::printf(" (%zu more left out: at most %.0f%% of the keys, --max-suspects)", capped,
                  max_suspects * 100);
    std::printf("\n");
  }
  return rep.exit_code();
}

int cmd_compare(const Args& args) {
  const Args a = expand_equals(args, {}, kCompareUsage);
  CompareOptions opt;
  std::vector<std::string> files;
  std::string markdown;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--min-change")
      opt.min_change = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--noise")
      opt.default_noise = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--markdown")
      markdown = value_of(a, i);
    else if (f.rfind("-", 0) == 0 && f != "-")
      unexpected("compare", f, kCompareUsage, nullptr);
    else
      files.push_back(f);
  }
  if (files.size() != 2)
    throw UsageError(
        "compare needs two files, BASE.csv and NEW.csv (got " + std::to_string(files.size()) + ")",
        kCompareUsage);
  refuse_clashes({{"BASE", files[0]}, {"NEW", files[1]}}, {{"--markdown", markdown}});
  History base, next;
  read_history(base, {files[0]});
  read_history(next, {files[1]});
  CompareReport rep = compare_runs(base, next, opt);
  print_warnings(rep.warnings);
  std::fputs(compare_console(rep).c_str(), stdout);
  std::fflush(stdout);
  if (!markdown.empty()) write_file(markdown, compare_markdown(rep));
  return 0;
}

// The history of every key as one self-contained HTML page (dashboard.h).
int cmd_dashboard(const Args& args) {
  const Args a = expand_equals(args, {"--strict"}, kDashboardUsage);
  DashboardOptions opt;
  std::vector<std::string> results;
  std::string targets_dir, out;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--results") {
      take_files(a, i, results, kDashboardUsage);
    } else if (f == "--targets") {
      targets_dir = value_of(a, i);
    } else if (f == "--out") {
      out = value_of(a, i);
    } else if (f == "--title") {
      opt.title = value_of(a, i);
    } else if (f == "--window") {
      opt.gate.rule.window = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    } else if (f == "--min-gap") {
      opt.gate.rule.min_gap = parse_double(f, value_of(a, i), 0, 1, true);
    } else if (f == "--min-history") {
      opt.gate.rule.min_history = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    } else if (f == "--max-noise") {
      opt.gate.rule.max_noise = parse_double(f, value_of(a, i), 0, 1, true);
    } else if (f == "--board-gap") {
      opt.gate.board.board_gap = parse_double(f, value_of(a, i), 0, 1, true);
    } else if (f == "--strict") {
      opt.gate.strict = true;
    } else {
      unexpected("dashboard", f, kDashboardUsage, "--results");
    }
  }
  if (results.empty()) throw UsageError("dashboard needs --results FILE...", kDashboardUsage);
  if (out.empty())
    throw UsageError("dashboard needs --out DIR (or --out FILE.html)", kDashboardUsage);
  if (opt.gate.rule.min_history > opt.gate.rule.window)
    throw UsageError("--min-history " + std::to_string(opt.gate.rule.min_history) +
                         " is larger than --window " + std::to_string(opt.gate.rule.window),
                     kDashboardUsage);
  if (!targets_dir.empty()) opt.gate.targets = load_target_dir(targets_dir);
  // A folder (made if need be) gets index.html; a name ending in .html is the file.
  auto ends_with = [&](const char* sfx) {
    size_t n = std::strlen(sfx);
    return out.size() >= n && out.compare(out.size() - n, n, sfx) == 0;
  };
  const bool to_folder = !ends_with(".html") && !ends_with(".htm");
  const std::string path = to_folder ? (std::filesystem::path(out) / "index.html").string() : out;
  refuse_clashes(inputs_of(results, opt.gate.targets), {{"--out", path}});

  History h;
  read_history(h, results);
  RowExtras extras;
  for (uint32_t i = 0; i < results.size(); ++i) extras.add_file(i, results[i]);
  DashboardData d = build_dashboard(h, extras, opt);
  print_warnings(d.warnings);

  if (to_folder) {
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) throw OutputError("cannot make the folder " + out + ": " + ec.message());
  }
  std::string html = dashboard_html(d);
  write_file(path, html);
  std::printf("kgate dashboard: %s (%zu runs, %zu keys, %zu rows; %.1f MB)\n", path.c_str(),
              d.runs.size(), d.keys.size(), d.rows, static_cast<double>(html.size()) / 1e6);
  for (const auto& n : d.notes) std::printf("  missing: %s\n", n.c_str());
  return 0;
}

// The newest run as gpt_fast's CSV and JSON (tools/kgate/gpt_fast_export.h).
int cmd_gpt_fast(const Args& args) {
  const Args a = expand_equals(args, {}, kGptFastUsage);
  std::vector<std::string> results;
  std::string targets_dir, csv_out, json_out;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--results")
      take_files(a, i, results, kGptFastUsage);
    else if (f == "--targets")
      targets_dir = value_of(a, i);
    else if (f == "--csv")
      csv_out = value_of(a, i);
    else if (f == "--json")
      json_out = value_of(a, i);
    else
      unexpected("gpt-fast", f, kGptFastUsage, "--results");
  }
  if (results.empty()) throw UsageError("gpt-fast needs --results FILE...", kGptFastUsage);
  if (csv_out.empty() && json_out.empty())
    throw UsageError("gpt-fast needs --csv FILE and/or --json FILE", kGptFastUsage);
  std::vector<TargetFile> targets;
  if (!targets_dir.empty()) targets = load_target_dir(targets_dir);
  refuse_clashes(inputs_of(results, targets), {{"--csv", csv_out}, {"--json", json_out}});
  History h;
  read_history(h, results);
  print_history_warnings(h);
  GptFastExport ex = gpt_fast_rows(h, targets);
  for (const auto& n : ex.notes) std::fprintf(stderr, "kgate: gpt-fast: %s\n", n.c_str());
  if (ex.rows.empty())
    throw ResultFileError("no row of gpt_fast's (its seed-mean and model rows) in the newest run");
  if (!csv_out.empty()) write_file(csv_out, gpt_fast_csv(ex.rows));
  if (!json_out.empty()) write_file(json_out, gpt_fast_json(ex.rows));
  std::printf("kgate gpt-fast: %zu row(s) written%s%s%s%s\n", ex.rows.size(),
              csv_out.empty() ? "" : " to ", csv_out.c_str(),
              json_out.empty() ? "" : (csv_out.empty() ? " to " : " and "), json_out.c_str());
  return 0;
}

// The bring-up report of a new GPU (tools/kgate/bringup.h, docs/bringup.md).
// Problems of the input are lines of the report (and of stderr): the report
// is still written where it can be, and the exit code is 2.
int cmd_bringup(const Args& args) {
  const Args a = expand_equals(args, {}, kBringupUsage);
  std::vector<std::string> results;
  std::string out, datasheets;
  BringupInputs in;
  in.reference = "H100";
  bool targets_given = false;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--results") {
      take_files(a, i, results, kBringupUsage);
    } else if (f == "--out") {
      out = value_of(a, i);
    } else if (f == "--reference") {
      in.reference = value_of(a, i);
    } else if (f == "--reference-gpu") {
      in.reference_gpu = value_of(a, i);
    } else if (f == "--gpu") {
      in.gpu = value_of(a, i);
    } else if (f == "--targets") {
      in.targets_dir = value_of(a, i);
      targets_given = true;
    } else if (f == "--datasheets") {
      datasheets = value_of(a, i);
    } else if (f == "--probe") {
      in.probe_path = value_of(a, i);
    } else if (f == "--threshold") {
      in.threshold = parse_double(f, value_of(a, i), 0.01, 0.9);
    } else {
      unexpected("bringup", f, kBringupUsage, "--results");
    }
  }
  if (results.empty()) throw UsageError("bringup needs --results FILE...", kBringupUsage);
  if (out.empty()) throw UsageError("bringup needs --out DIR", kBringupUsage);
  if (in.reference.empty())
    throw UsageError("--reference needs a GPU name or a file", kBringupUsage);
  std::error_code ec;
  if (!targets_given && std::filesystem::is_directory("targets", ec)) in.targets_dir = "targets";
  if (!in.targets_dir.empty()) {
    in.targets = load_target_dir(in.targets_dir);  // a malformed file is an error, as elsewhere
    in.tuning_dir = in.targets_dir + "/tuning";
  }
  in.datasheets_path = !datasheets.empty()       ? datasheets
                       : !in.targets_dir.empty() ? datasheets_path(in.targets_dir)
                                                 : "";
  if (in.datasheets_path.empty()) {
    in.datasheets_problem =
        "no datasheet table: give --targets DIR (its datasheets/nvidia.json) "
        "or --datasheets FILE";
  } else if (std::filesystem::exists(in.datasheets_path, ec)) {
    in.datasheets = load_datasheets(in.datasheets_path);  // malformed: exit 2, as target files
  } else {
    in.datasheets_problem = in.datasheets_path + ": cannot read the datasheet table";
  }
  for (const auto& r : results) in.results_names += (in.results_names.empty() ? "" : ", ") + r;
  if (!in.probe_path.empty()) {
    std::ifstream probe(in.probe_path, std::ios::binary);
    std::stringstream text;
    if (probe) {
      text << probe.rdbuf();
      in.probe_text = text.str();
    } else {
      in.probe_problem = "cannot read it";
    }
  }

  History h;
  read_history(h, results);
  print_history_warnings(h);
  // --reference: a results file when it names one (or looks like one), else a GPU name.
  History ref;
  bool ref_is_file = std::filesystem::exists(in.reference, ec) ||
                     in.reference.find(".csv") != std::string::npos ||
                     in.reference.find('/') != std::string::npos;
  if (ref_is_file) {
    try {
      ref.add_file(in.reference);
      ref.finish();
    } catch (const ResultFileError& e) {
      in.reference_problem = std::string("--reference ") + in.reference + ": " + e.what() +
                             ": the comparison with a reference is left out";
    }
  }
  BringupReport rep =
      build_bringup(h, ref_is_file && in.reference_problem.empty() ? &ref : nullptr, in);

  const std::string draft = (std::filesystem::path(out) / rep.draft_path).string();
  const std::string md = (std::filesystem::path(out) / "bringup.md").string();
  const std::string html = (std::filesystem::path(out) / "bringup.html").string();
  std::vector<NamedPath> inputs = inputs_of(results, in.targets);
  if (ref_is_file) inputs.push_back({"--reference", in.reference});
  inputs.push_back({"--datasheets", in.datasheets_path});
  inputs.push_back({"the tuning table", (in.tuning_dir.empty() ? "targets/tuning" : in.tuning_dir) +
                                            "/" + rep.draft_path});
  refuse_clashes(inputs, {{"--out", draft}, {"--out", md}, {"--out", html}});
  std::filesystem::create_directories(out, ec);
  if (ec) throw OutputError("cannot make the folder " + out + ": " + ec.message());
  rep.draft_path = draft;
  write_file(draft, rep.draft_json);
  write_file(md, bringup_markdown(rep));
  write_file(html, bringup_html(rep));
  std::printf(
      "kgate bringup: %s, run %s%s: %zu of %zu points %.0f%% or more behind the reference\n",
      rep.gpu.c_str(), rep.run_id.c_str(),
      rep.reference_gpu.empty() ? " (no reference)" : (" against " + rep.reference_gpu).c_str(),
      rep.candidates, rep.rows.size(), rep.threshold * 100);
  std::printf("  report: %s, %s\n  drafted target file: %s\n", md.c_str(), html.c_str(),
              draft.c_str());
  for (const auto& n : rep.notes) std::printf("  note: %s\n", n.c_str());
  for (const auto& p : rep.problems) std::fprintf(stderr, "kgate: bringup: %s\n", p.c_str());
  return rep.problems.empty() ? 0 : 2;
}

// Hidden: the simulation behind the defaults (docs/gate.md).
int cmd_simulate(const Args& args) {
  const Args a = expand_equals(args, {}, nullptr);
  SimulationOptions opt;
  int nights = 1000, trials = 1000, horizon = 8;
  std::vector<double> drops = {0.05, 0.10};
  bool table = false;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--noise")
      opt.noise = parse_double(f, value_of(a, i), 0, 0.5);
    else if (f == "--nights")
      nights = static_cast<int>(parse_int(f, value_of(a, i), 1, 100000000));
    else if (f == "--trials")
      trials = static_cast<int>(parse_int(f, value_of(a, i), 1, 10000000));
    else if (f == "--horizon")
      horizon = static_cast<int>(parse_int(f, value_of(a, i), 1, 100));
    else if (f == "--seed")
      opt.seed = static_cast<uint64_t>(parse_int(f, value_of(a, i), 0, 1L << 62));
    else if (f == "--window")
      opt.rule.window = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    else if (f == "--min-gap")
      opt.rule.min_gap = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--min-history")
      opt.rule.min_history = static_cast<int>(parse_int(f, value_of(a, i), 3, 500));
    else if (f == "--z")
      opt.rule.z = parse_double(f, value_of(a, i), 0.5, 20);
    else if (f == "--max-recent")
      opt.rule.max_recent = static_cast<int>(parse_int(f, value_of(a, i), 1, 50));
    else if (f == "--drop")
      drops = {parse_double(f, value_of(a, i), 0, 1, true)};
    else if (f == "--bad-nights")
      opt.bad_nights = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--confirm")
      opt.confirm = static_cast<int>(parse_int(f, value_of(a, i), 0, 20));
    else if (f == "--suspect-z")
      opt.rule.suspect_z = parse_double(f, value_of(a, i), 0, 20);
    else if (f == "--confirm-z")
      opt.rule.confirm_z = parse_double(f, value_of(a, i), 0.5, 20);
    else if (f == "--rule-shared")
      opt.rule.shared_noise = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--shared")
      opt.shared = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--tails")
      opt.tails_dof = static_cast<double>(parse_int(f, value_of(a, i), 0, 100));
    else if (f == "--mode-rate")
      opt.mode_rate = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--mode-size")
      opt.mode_size = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--mode-stick")
      opt.mode_stick = parse_double(f, value_of(a, i), 0, 1);
    else if (f == "--table")
      table = true;
    else if (f == "--stats") {
      const std::string& v = value_of(a, i);
      if (v == "robust")
        opt.rule.stats = Statistics::robust;
      else if (v == "mad")
        opt.rule.stats = Statistics::mad;
      else if (v == "mean-sd")
        opt.rule.stats = Statistics::mean_sd;
      else
        throw UsageError("--stats: robust, mad or mean-sd");
    } else
      throw UsageError("simulate: unknown option '" + f + "'");
  }
  opt.rule.max_noise = 1;  // the simulation asks about the rule, not about the noise cap
  if (opt.rule.min_history > opt.rule.window) opt.rule.min_history = opt.rule.window;
  std::printf(
      "kgate simulate: noise %.2f%% (relative s.d. of a night), bad nights %.1f%%, stats %s, "
      "window %d, min gap %.1f%%, z %.2f, max recent %d, seed %llu\n",
      opt.noise * 100, opt.bad_nights * 100,
      opt.rule.stats == Statistics::robust ? "robust"
      : opt.rule.stats == Statistics::mad  ? "mad"
                                           : "mean-sd",
      opt.rule.window, opt.rule.min_gap * 100, opt.rule.z, opt.rule.max_recent,
      static_cast<unsigned long long>(opt.seed));
  if (opt.confirm > 0 || opt.shared < 1 || opt.tails_dof > 0 || opt.mode_rate > 0)
    std::printf(
        "  attempts: confirm %d, suspect z %.2f, confirm z %.2f, rule's shared share %.2f; "
        "noise model: shared %.2f, tails %s, slow mode %.1f%% of attempts %.1f%% slow (sticks "
        "%.0f%%)\n",
        opt.confirm, opt.rule.suspect_z, opt.rule.confirm_z, opt.rule.shared_noise, opt.shared,
        opt.tails_dof > 0 ? ("t" + std::to_string(static_cast<int>(opt.tails_dof))).c_str()
                          : "normal",
        opt.mode_rate * 100, opt.mode_size * 100, opt.mode_stick * 100);
  if (table) {
    // The table of docs/decisions/0017: one row per noise level.
    std::printf(
        "\n| noise | false failures per 1000 key-nights | suspects per 100 key-nights | "
        "5%% caught, 1st night | 10%% caught, 1st night |\n| --- | --- | --- | --- | --- |\n");
    for (double noise : {0.003, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05}) {
      SimulationOptions o = opt;
      o.noise = noise;
      FalseFailureResult ff = simulate_false_failures(o, nights);
      double five = simulate_detection(o, 0.05, trials, 1)[0];
      double ten = simulate_detection(o, 0.10, trials, 1)[0];
      std::printf("| %.1f%% | %.3f | %.2f | %.1f%% | %.1f%% |\n", noise * 100,
                  1000.0 * ff.failures / ff.nights, 100.0 * ff.suspects / ff.nights, five * 100,
                  ten * 100);
    }
    return 0;
  }
  FalseFailureResult ff = simulate_false_failures(opt, nights);
  std::printf("false failures: %d in %d nights (%.3f per 1000); inconclusive %d (%.1f%%)\n",
              ff.failures, ff.nights, 1000.0 * ff.failures / ff.nights, ff.inconclusive,
              100.0 * ff.inconclusive / ff.nights);
  if (opt.confirm > 0)
    std::printf(
        "first stage: %d suspect nights (%.2f%%), %d would have failed without "
        "confirmation (%.3f per 1000)\n",
        ff.suspects, 100.0 * ff.suspects / ff.nights, ff.first_stage_failures,
        1000.0 * ff.first_stage_failures / ff.nights);
  std::printf("caught by night (of %d trials):\n  drop ", trials);
  for (int j = 1; j <= horizon; ++j) std::printf(" %7d", j);
  std::printf("\n");
  for (double d : drops) {
    std::vector<double> c = simulate_detection(opt, d, trials, horizon);
    std::printf("  %4.1f%%", d * 100);
    for (double x : c) std::printf(" %7.4f", x);
    std::printf("\n");
  }
  return 0;
}

// Run-to-run noise per key over several runs (issue 24: `tools/noise-report.sh`).
int cmd_noise(const Args& args) {
  const Args a = expand_equals(args, {}, kNoiseUsage);
  std::vector<std::string> results;
  std::string markdown, csv_out;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--results") {
      take_files(a, i, results, kNoiseUsage);
    } else if (f == "--markdown") {
      markdown = value_of(a, i);
    } else if (f == "--csv") {
      csv_out = value_of(a, i);
    } else {
      unexpected("noise", f, kNoiseUsage, "--results");
    }
  }
  if (results.empty()) throw UsageError("noise needs --results FILE...", kNoiseUsage);
  refuse_clashes(inputs_of(results, {}), {{"--markdown", markdown}, {"--csv", csv_out}});
  History h;
  read_history(h, results);
  print_history_warnings(h);
  NoiseReport rep = noise_report(h);
  std::fputs(noise_console(rep).c_str(), stdout);
  std::fflush(stdout);
  if (!markdown.empty()) write_file(markdown, noise_markdown(rep));
  if (!csv_out.empty()) write_file(csv_out, noise_csv(rep));
  return 0;
}

// The sibling check of the newest run (bring-up of a host with several
// GPUs): each GPU against the median of its siblings. Exit 1 when a GPU is
// named, so that a bring-up script can stop on it.
int cmd_siblings(const Args& args) {
  const Args a = expand_equals(args, {}, kSiblingsUsage);
  std::vector<std::string> results;
  std::string markdown;
  SiblingOptions opt;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--results") {
      take_files(a, i, results, kSiblingsUsage);
    } else if (f == "--threshold") {
      opt.threshold = parse_double(f, value_of(a, i), 0.001, 0.9);
    } else if (f == "--min-points" || f == "--min-rows") {  // --min-rows: its first name
      opt.min_points = static_cast<size_t>(parse_int(f, value_of(a, i), 1, 100000));
    } else if (f == "--markdown") {
      markdown = value_of(a, i);
    } else {
      unexpected("siblings", f, kSiblingsUsage, "--results");
    }
  }
  if (results.empty()) throw UsageError("siblings needs --results FILE...", kSiblingsUsage);
  refuse_clashes(inputs_of(results, {}), {{"--markdown", markdown}});
  History h;
  read_history(h, results);
  print_history_warnings(h);
  const auto reps = sibling_check(h, opt);
  std::fputs(sibling_text(reps, false).c_str(), stdout);
  std::fflush(stdout);
  if (!markdown.empty()) write_file(markdown, sibling_text(reps, true));
  for (const auto& r : reps)
    for (const auto& g : r.gpus)
      if (g.named) return 1;
  return 0;
}

// Hidden: tools/gate-selftest.sh's table (docs/gate.md).
int cmd_selftest_table(const Args& args) {
  const Args a = expand_equals(args, {}, nullptr);
  SelftestInput in;
  GateOptions opt;
  std::string targets_dir, markdown;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--aa") {
      in.aa = value_of(a, i);
    } else if (f == "--drop") {
      double pct = parse_double(f, value_of(a, i), 0, 100);
      in.drops.emplace_back(pct, value_of(a, i));
    } else if (f == "--targets") {
      targets_dir = value_of(a, i);
    } else if (f == "--markdown") {
      markdown = value_of(a, i);
    } else {
      throw UsageError("selftest-table: unknown option '" + f + "'");
    }
  }
  if (in.aa.empty()) throw UsageError("selftest-table needs --aa FILE");
  std::vector<NamedPath> inputs = {{"--aa", in.aa}};
  for (const auto& d : in.drops) inputs.push_back({"--drop", d.second});
  refuse_clashes(inputs, {{"--markdown", markdown}});
  if (!targets_dir.empty()) opt.targets = load_target_dir(targets_dir);
  std::string md = selftest_markdown(in, opt);
  std::fputs(md.c_str(), stdout);
  if (!markdown.empty()) write_file(markdown, md);
  return 0;
}

// Hidden: a synthetic history for the timing in docs/gate.md.
int cmd_gen_history(const Args& args) {
  const Args a = expand_equals(args, {}, nullptr);
  GenOptions opt;
  std::string out;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--out")
      out = value_of(a, i);
    else if (f == "--runs")
      opt.runs = static_cast<int>(parse_int(f, value_of(a, i), 1, 100000000));
    else if (f == "--keys")
      opt.keys = static_cast<int>(parse_int(f, value_of(a, i), 1, 10000000));
    else if (f == "--seed")
      opt.seed = static_cast<uint64_t>(parse_int(f, value_of(a, i), 0, 1L << 62));
    else if (f == "--noise")
      opt.noise = parse_double(f, value_of(a, i), 0, 0.5);
    else if (f == "--drop")
      opt.last_drop = parse_double(f, value_of(a, i), 0, 1, true);
    else if (f == "--dropped-keys")
      opt.dropped_keys = static_cast<int>(parse_int(f, value_of(a, i), 0, 10000000));
    else if (f == "--arch")
      opt.arch = value_of(a, i);
    else if (f == "--from") {
      size_t before = opt.from.size();
      while (i + 1 < a.size() && a[i + 1].rfind("--", 0) != 0) opt.from.push_back(a[++i]);
      if (opt.from.size() == before) throw UsageError("--from needs at least one file");
    } else if (f == "--attempts")
      opt.attempts = true;
    else if (f == "--format") {
      const std::string& v = value_of(a, i);
      if (v != "kbench" && v != "gpt_fast") throw UsageError("--format: kbench or gpt_fast");
      opt.gpt_fast = v == "gpt_fast";
    } else {
      throw UsageError("gen-history: unknown option '" + f + "'");
    }
  }
  if (out.empty()) throw UsageError("gen-history needs --out FILE (- for stdout)");
  if (out == "-") {
    bool ok = opt.from.empty() ? write_history(stdout, opt) : write_history_from(stdout, opt);
    if (!ok) throw OutputError("cannot write to stdout: " + std::string(std::strerror(errno)));
    return 0;
  }
  std::vector<NamedPath> inputs;
  for (const auto& p : opt.from) inputs.push_back({"--from", p});
  refuse_clashes(inputs, {{"--out", out}});
  AtomicFile f(out);
  bool ok = opt.from.empty() ? write_history(f.stream(), opt) : write_history_from(f.stream(), opt);
  if (!ok) throw OutputError("cannot write " + out + ": " + std::strerror(errno));
  f.commit();
  return 0;
}

}  // namespace

int kgate_main(int argc, char** argv) {
  Args a(argv + 1, argv + argc);
  try {
    if (a.empty()) throw UsageError("no command given", kTopUsage);
    const std::string& cmd = a[0];
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::fputs(kKgateHelp, stdout);
      return 0;
    }
    if (cmd == "--version") {
      std::printf("kgate %s\n", KBENCH_VERSION);
      return 0;
    }
    if (cmd == "check") return cmd_check(a);
    if (cmd == "compare") return cmd_compare(a);
    if (cmd == "dashboard") return cmd_dashboard(a);
    if (cmd == "gpt-fast") return cmd_gpt_fast(a);
    if (cmd == "simulate") return cmd_simulate(a);
    if (cmd == "noise") return cmd_noise(a);
    if (cmd == "siblings") return cmd_siblings(a);
    if (cmd == "bringup") return cmd_bringup(a);
    if (cmd == "selftest-table") return cmd_selftest_table(a);
    if (cmd == "gen-history") return cmd_gen_history(a);
    std::error_code ec;
    if (std::filesystem::exists(cmd, ec) || cmd.find(".csv") != std::string::npos)
      throw UsageError(
          "'" + cmd + "' is not a command; to gate a results file: kgate check --results " + cmd,
          kTopUsage);
    throw UsageError("unknown command '" + cmd + "'", kTopUsage);
  } catch (const UsageError& e) {
    std::string usage = e.usage;
    if (usage.empty() && !a.empty())
      usage = a[0] == "check"       ? kCheckUsage
              : a[0] == "compare"   ? kCompareUsage
              : a[0] == "dashboard" ? kDashboardUsage
              : a[0] == "noise"     ? kNoiseUsage
              : a[0] == "siblings"  ? kSiblingsUsage
              : a[0] == "gpt-fast"  ? kGptFastUsage
              : a[0] == "bringup"   ? kBringupUsage
                                    : "";
    if (usage.empty()) usage = kTopUsage;
    std::fprintf(stderr, "kgate: %s\nusage: %s\n(kgate --help lists the commands and options)\n",
                 e.what(), usage.c_str());
  } catch (const ResultFileError& e) {
    std::fprintf(stderr, "kgate: error: %s\n", e.what());
  } catch (const TargetError& e) {
    std::fprintf(stderr, "kgate: error: %s\n", e.what());
  } catch (const BringupError& e) {
    std::fprintf(stderr, "kgate: bringup: %s; nothing was written\n", e.what());
  } catch (const OutputError& e) {
    std::fprintf(stderr, "kgate: error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kgate: error: %s\n", e.what());
  }
  return 2;
}

}  // namespace kb
