#include "suite/cli.h"

#include <cublasLt.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "git_sha.h"
#include "help_text.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/gemm/gemm.h"
#include "reports/atomic_write.h"
#include "reports/console_table.h"
#include "reports/csv_writer.h"
#include "reports/json_writer.h"
#include "suite/chain_probe.h"
#include "suite/datasheets.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "suite/exit_status.h"
#include "suite/experiment.h"
#include "suite/gemv_tune_run.h"
#include "suite/gpu_name.h"
#include "suite/ideal_kernels.h"
#include "suite/ladder_probe.h"
#include "suite/nccl_bench.h"
#include "suite/probe.h"
#include "suite/runner.h"
#include "suite/shard.h"
#include "suite/suspects.h"
#include "suite/targets.h"
#include "suite/tuning.h"

namespace kb {

namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each command's usage line, printed under a usage error.
std::string usage_line(const std::string& command) {
  if (command == "run")
    return "kbench run [--filter REGEX] [--device N|N,M|all] [--shard I/N] [--csv FILE] "
           "[options]\n"
           "       kbench run --rerun SUSPECTS.csv [--repeat N] [--device N] [--csv FILE] "
           "[options]";
  if (command == "probe")
    return "kbench probe [--device N] [--write FILE] [--targets DIR] [--quick] [--replace] "
           "[--chains-in-process]";
  if (command == "tune")
    return "kbench tune [--filter REGEX] [--device N] [--targets DIR] [--write FILE] [--reps N] "
           "[--candidates N]\n"
           "       kbench tune gemv [--device N] [--targets DIR] [--write FILE] [--reps N]";
  if (command == "list") return "kbench list [--points [--filter REGEX] [--shard I/N]]";
  return "kbench list | run [options] | probe [options] | tune [options] | --help";
}

// The options each command takes (with `true`: followed by a value).
struct OptionSpec {
  const char* name;
  bool takes_value;
};
const std::vector<OptionSpec> kRunOptions = {
    {"--filter", true},       {"--device", true},          {"--quick", false},
    {"--csv", true},          {"--no-csv", false},         {"--json", true},
    {"--targets", true},      {"--max-noise", true},       {"--max-time", true},
    {"--seed", true},         {"--timeout", true},         {"--rerun", true},
    {"--repeat", true},       {"--inject-slowdown", true}, {"--allow-injected-slowdown", false},
    {"--buffer-sets", true},  {"--buffer-mib", true},      {"--shard", true},
    {"--run-id", true},       {"--processes", true},       {"--short-processes", true},
    {"--extend-spread", true}};
const std::vector<OptionSpec> kListOptions = {
    {"--points", false}, {"--filter", true}, {"--shard", true}};
const std::vector<OptionSpec> kProbeOptions = {
    {"--device", true}, {"--write", true},    {"--targets", true},
    {"--quick", false}, {"--replace", false}, {"--chains-in-process", false}};
const std::vector<OptionSpec> kTuneOptions = {{"--filter", true},  {"--device", true},
                                              {"--targets", true}, {"--write", true},
                                              {"--reps", true},    {"--candidates", true}};

const std::vector<OptionSpec>* options_of(const std::string& command) {
  if (command == "run") return &kRunOptions;
  if (command == "probe") return &kProbeOptions;
  if (command == "tune") return &kTuneOptions;
  if (command == "list") return &kListOptions;
  return nullptr;  // help, version, unknown: judged later
}

struct Args {
  std::string command;
  bool replace = false;            // probe --write: the new ladder alone, not the faster of both
  bool chains_in_process = false;  // probe: the chains in the probe's process, not a worker
  std::string filter;
  std::string device = "0";
  bool quick = false;
  std::string csv = "reports/results.csv";
  bool no_csv = false;
  std::string json;
  std::string targets;
  std::string write;
  double timeout_s = 1800;
  EngineOptions engine;
  std::string rerun;         // suspects file to re-measure
  int repeat = 0;            // attempts per suspect (--repeat; 0 = not given)
  int processes = 0;         // worker processes per kernel point (--processes; 0 = the default)
  int short_processes = 0;   // ... per point under 20 us (--short-processes; 0 = the default)
  double extend_spread = 0;  // --extend-spread PCT, as a fraction (0 = off)
  std::string inject;        // --inject-slowdown REGEX=PCT
  bool allow_inject = false;
  int reps = 20;           // kbench tune: samples per candidate
  int candidates = 16;     // kbench tune: algorithms asked of the heuristic
  ShardSpec shard;         // --shard i/n (1/1: the whole suite)
  std::string run_id;      // --run-id: one id shared by the shards of a job array
  bool points = false;     // kbench list --points
  bool tune_gemv = false;  // kbench tune gemv: the GEMV table instead of cuBLASLt's
};

// --run-id: what a scheduler gives every task of one job (Slurm's array job
// id, a Kubernetes Job's name), so that the shards' rows are one run. No
// '/': that would read as an attempt (<run>/<N>, docs/csv-schema.md).
std::string check_run_id(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 128;
  for (char c : id)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
                c == ':' || c == '+');
  if (!ok)
    throw UsageError("--run-id needs 1 to 128 characters of A-Z a-z 0-9 - _ . : + (no '/'), got '" +
                     id + "'");
  return id;
}

int parse_count(const std::string& flag, const std::string& v, long max = 1000) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1 || n > max)
    throw UsageError(flag + " needs a whole number from 1 to " + std::to_string(max) + ", got '" +
                     v + "'");
  return static_cast<int>(n);
}

double parse_double(const std::string& flag, const std::string& v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used != v.size() || !(d > 0)) throw std::invalid_argument(v);
    return d;
  } catch (const std::exception&) {
    throw UsageError(flag + " needs a number > 0, got '" + v + "'");
  }
}

// --inject-slowdown REGEX=PCT: the experiments it applies to and the fraction.
struct Injection {
  std::regex re;
  double fraction = 0;
};

Injection parse_injection(const std::string& spec) {
  const auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("--inject-slowdown needs REGEX=PCT (e.g. 'gemv=5'), got '" + spec + "'");
  Injection inj;
  const std::string pct = spec.substr(eq + 1);
  char* end = nullptr;
  const double v = std::strtod(pct.c_str(), &end);
  if (pct.empty() || *end != '\0' || !(v > 0) || v > 100)
    throw UsageError("--inject-slowdown: PCT must be a number in (0, 100], got '" + pct + "'");
  inj.fraction = v / 100;
  try {
    inj.re = std::regex(spec.substr(0, eq), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError("--inject-slowdown: '" + spec.substr(0, eq) +
                     "' is not a valid regex: " + e.what());
  }
  return inj;
}

// The option as given, checked against the command: `--opt=value` is
// `--opt value`; an option the command does not take is refused (not
// silently ignored); a file given without its flag gets a hint.
std::vector<std::string> normalize(const std::string& command, const std::vector<std::string>& in) {
  const std::vector<OptionSpec>* spec = options_of(command);
  std::vector<std::string> out;
  for (size_t i = 0; i < in.size(); ++i) {
    std::string f = in[i];
    if (f == "--help" || f == "-h") {
      out.push_back(f);
      continue;
    }
    std::optional<std::string> inline_value;
    if (size_t eq = f.find('='); f.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = f.substr(eq + 1);
      f = f.substr(0, eq);
    }
    if (f == "-d") f = "--device";  // nvbench's short form
    if (!spec) {
      out.push_back(f);
      if (inline_value) out.push_back(*inline_value);
      continue;
    }
    if (f.rfind("-", 0) != 0) {
      std::error_code ec;
      bool file_like = f.find(".csv") != std::string::npos ||
                       f.find(".json") != std::string::npos || std::filesystem::exists(f, ec);
      if (file_like && command == "run")
        throw UsageError("run: unexpected argument '" + f +
                         "': the results file follows --csv (kbench run --csv " + f + ")");
      if (file_like && command == "probe")
        throw UsageError("probe: unexpected argument '" + f +
                         "': the target file to write follows --write (kbench probe --write " + f +
                         ")");
      throw UsageError(command + ": unexpected argument '" + f + "'");
    }
    const OptionSpec* o = nullptr;
    for (const auto& x : *spec)
      if (f == x.name) o = &x;
    if (!o) {
      bool known = false;
      for (const auto* list : {&kRunOptions, &kProbeOptions, &kTuneOptions, &kListOptions})
        for (const auto& x : *list) known = known || f == x.name;
      if (known) throw UsageError(command + " does not take " + f);
      throw UsageError("unknown option '" + f + "'");
    }
    if (!o->takes_value && inline_value)
      throw UsageError(f + " takes no value (got '" + in[i] + "')");
    out.push_back(f);
    if (inline_value)
      out.push_back(*inline_value);
    else if (o->takes_value) {
      if (i + 1 >= in.size()) throw UsageError(f + " needs a value");
      out.push_back(in[++i]);
    }
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> raw(argv + 1, argv + argc);
  if (raw.empty()) throw UsageError("no command given");
  a.command = raw[0];
  std::vector<std::string> v = {raw[0]};
  size_t first = 1;
  if (a.command == "tune" && raw.size() > 1 && raw[1] == "gemv") {  // kbench tune gemv
    a.tune_gemv = true;
    first = 2;
  }
  const auto rest = normalize(a.command, std::vector<std::string>(raw.begin() + first, raw.end()));
  v.insert(v.end(), rest.begin(), rest.end());
  for (size_t i = 1; i < v.size(); ++i) {
    const std::string& f = v[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= v.size()) throw UsageError(f + " needs a value");
      return v[++i];
    };
    if (f == "--filter")
      a.filter = value();
    else if (f == "--device")
      a.device = value();
    else if (f == "--quick")
      a.quick = true;
    else if (f == "--csv")
      a.csv = value();
    else if (f == "--no-csv")
      a.no_csv = true;
    else if (f == "--json")
      a.json = value();
    else if (f == "--targets")
      a.targets = value();
    else if (f == "--write")
      a.write = value();
    else if (f == "--max-noise")
      a.engine.max_noise = parse_double(f, value());
    else if (f == "--max-time")
      a.engine.max_time_s = parse_double(f, value());
    else if (f == "--timeout")
      a.timeout_s = parse_double(f, value());
    else if (f == "--seed")
      a.engine.seed = static_cast<uint64_t>(parse_double(f, value()));
    else if (f == "--rerun")
      a.rerun = value();
    else if (f == "--repeat")
      a.repeat = parse_count(f, value());
    else if (f == "--processes")
      a.processes = parse_count(f, value(), kMaxProcesses);
    else if (f == "--short-processes")
      a.short_processes = parse_count(f, value(), kMaxProcesses);
    else if (f == "--extend-spread")
      a.extend_spread = parse_double(f, value()) / 100;
    else if (f == "--buffer-sets")
      a.engine.max_buffer_sets = parse_count(f, value());
    else if (f == "--buffer-mib")
      a.engine.sampled_bytes_goal = static_cast<size_t>(parse_count(f, value(), 1 << 20)) << 20;
    else if (f == "--inject-slowdown")
      a.inject = value();
    else if (f == "--allow-injected-slowdown")
      a.allow_inject = true;
    else if (f == "--reps")
      a.reps = parse_count(f, value());
    else if (f == "--candidates")
      a.candidates = parse_count(f, value());
    else if (f == "--shard") {
      try {
        a.shard = parse_shard(value());
      } catch (const ShardError& e) {
        throw UsageError(e.what());
      }
    } else if (f == "--run-id")
      a.run_id = check_run_id(value());
    else if (f == "--points")
      a.points = true;
    else if (f == "--replace")
      a.replace = true;
    else if (f == "--chains-in-process")
      a.chains_in_process = true;
    else if (f == "--help" || f == "-h")
      a.command = "help";
    else
      throw UsageError("unknown option '" + f + "'");
  }
  a.engine.quick = a.quick;
  if (!a.inject.empty() && !a.allow_inject)
    throw UsageError(
        "--inject-slowdown makes measured work slower on purpose, to validate the "
        "gate; it needs --allow-injected-slowdown as well (never in a nightly)");
  if (!a.inject.empty()) parse_injection(a.inject);  // refuse a bad spec before anything runs
  if (a.allow_inject && a.inject.empty())
    throw UsageError("--allow-injected-slowdown without --inject-slowdown REGEX=PCT");
  if (a.repeat > 0 && a.rerun.empty())
    throw UsageError("--repeat N needs --rerun FILE (the suspects to measure N times)");
  if (!a.rerun.empty() && !a.shard.whole())
    throw UsageError("--rerun measures the suspects it is given: it takes no --shard");
  if (!a.rerun.empty() && !a.run_id.empty())
    throw UsageError("--rerun appends attempts of the suspects' own run: it takes no --run-id");
  // An output that is an input or another output would destroy it (the
  // history above all): refused before anything runs.
  std::vector<NamedPath> outputs = {{"--json", a.json}};
  if (a.command == "run" && !a.no_csv) outputs.insert(outputs.begin(), {"--csv", a.csv});
  if (a.command == "tune") outputs.push_back({"--write", a.write});
  const std::string clash = output_clash({{"--rerun", a.rerun}}, outputs);
  if (!clash.empty()) throw UsageError(clash);
  return a;
}

std::string experiment_names() {
  std::string s;
  for (const auto& e : Registry::instance().all())
    if (!e.is_hidden()) s += "  " + e.name() + "\n";
  for (const auto& c : collective_names()) s += "  " + c + "\n";
  return s;
}

std::vector<const Experiment*> select(const std::string& filter) {
  std::vector<const Experiment*> out;
  std::regex re;
  try {
    re = std::regex(filter.empty() ? ".*" : filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError("--filter '" + filter + "' is not a valid regex: " + e.what());
  }
  for (const auto& e : Registry::instance().all()) {
    // Hidden self-tests run only when the filter names them in full.
    const bool match = e.is_hidden() ? !filter.empty() && std::regex_match(e.name(), re)
                                     : std::regex_search(e.name(), re);
    if (match) out.push_back(&e);
  }
  if (out.empty() && collectives_matching(filter).empty())
    throw UsageError("--filter '" + filter + "' matches no experiment. Experiments:\n" +
                     experiment_names());
  return out;
}

// Default targets/: the source tree's, else ./targets.
std::string targets_dir(const Args& a, bool* explicit_dir) {
  *explicit_dir = !a.targets.empty();
  if (*explicit_dir) return a.targets;
  std::error_code ec;
  std::string src = std::string(KBENCH_SOURCE_DIR) + "/targets";
  if (std::filesystem::is_directory(src, ec)) return src;
  return "targets";
}

std::vector<TargetFile> load_targets(const Args& a) {
  bool explicit_dir = false;
  std::string dir = targets_dir(a, &explicit_dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    if (explicit_dir) throw TargetError(dir + ": not a directory of target files");
    std::fprintf(stderr, "kbench: warning: no targets/ folder found; every GPU is unknown\n");
    return {};
  }
  return load_target_dir(dir);
}

// Refuse before measuring, not after: a results file with another header.
void precheck_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // new file
  std::string line;
  if (!std::getline(in, line)) return;  // empty file
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  if (schema_columns(line) == 0)
    throw CsvError(path +
                   ": its header is not kbench's CSV schema (v2, or v1 before it); the file was "
                   "left untouched. Write to another file with --csv FILE");
}

// What one run measures, in order: each selected experiment with its points
// (all of them, or this shard's share), then each selected collective
// (NCCL; all its sizes, across the run's GPUs, once per run).
struct Step {
  const Experiment* e = nullptr;
  std::vector<size_t> indices;  // e's points in this run, ascending
  std::string collective;       // or a collective's name
};

std::vector<Step> plan_steps(const std::vector<const Experiment*>& experiments,
                             const std::vector<std::string>& collectives, const ShardSpec& shard) {
  // The same list on every node: the registry's order, each point in
  // order; collectives last (one unit each: they need every GPU of a host).
  std::vector<ShardItem> items;
  std::vector<std::pair<size_t, size_t>> where;  // (step, point) of each item
  std::vector<Step> all;
  for (const Experiment* e : experiments) {
    const auto points = e->points();
    for (size_t i = 0; i < points.size(); ++i) {
      items.push_back({e->name(), points[i].in_seed_mean,
                       std::string(dtype_name(points[i].dtype)) + ";" + points[i].variant});
      where.emplace_back(all.size(), i);
    }
    all.push_back({e, {}, ""});
  }
  for (const auto& c : collectives) {
    items.push_back({c, false, ""});
    where.emplace_back(all.size(), 0);
    all.push_back({nullptr, {}, c});
  }
  const std::vector<int> dealt = deal_shards(items, shard.count);
  std::vector<char> keep(all.size(), 0);
  for (size_t k = 0; k < items.size(); ++k) {
    if (dealt[k] != shard.index) continue;
    Step& st = all[where[k].first];
    keep[where[k].first] = 1;
    if (st.e) st.indices.push_back(where[k].second);
  }
  std::vector<Step> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (keep[i]) out.push_back(std::move(all[i]));
  return out;
}

// `kbench list`: the experiments and their axes; `--points`: every point a
// run would measure (with --filter and --shard as `kbench run` takes them),
// one per line: experiment, shape, dtype, variant (tab-separated). Needs no GPU.
int cmd_list(const Args& a) {
  if (!a.points) {
    if (!a.filter.empty() || !a.shard.whole())
      throw UsageError("--filter and --shard go with --points (the points a run would measure)");
    std::printf("%-22s  %s\n", "experiment", "axes");
    for (const auto& e : Registry::instance().all()) {
      if (e.is_hidden()) continue;
      std::printf("%-22s  %s\n", e.name().c_str(), e.axes_text().c_str());
      if (!e.description().empty()) std::printf("%-22s  %s\n", "", e.description().c_str());
    }
    for (const auto& c : collective_names())
      std::printf("%-22s  %s\n", c.c_str(), collective_axes_text().c_str());
    return kExitOk;
  }
  for (const Step& st : plan_steps(select(a.filter), collectives_matching(a.filter), a.shard)) {
    if (st.e) {
      const auto points = st.e->points();
      for (size_t i : st.indices)
        std::printf("%s\t%s\t%s\t%s\n", st.e->name().c_str(), points[i].shape.str().c_str(),
                    dtype_name(points[i].dtype), points[i].variant.c_str());
    } else {
      for (const auto& p : collective_points(st.collective))
        std::printf("%s\t%s\t%s\t%s\n", st.collective.c_str(), p.shape.c_str(), "bfloat16", "");
    }
  }
  return kExitOk;
}

// `--device N`, `N,M,...` or `all`: the indices asked for (empty for
// all), checked for form before any device is looked for (a typo is a
// usage error, exit 2, on any machine).
std::vector<int> parse_device_spec(const std::string& spec) {
  if (spec == "all") return {};
  std::vector<int> out;
  size_t start = 0;
  while (true) {
    size_t comma = spec.find(',', start);
    std::string one =
        spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    long n = std::strtol(one.c_str(), &end, 10);
    if (one.empty() || *end != '\0' || n < 0 || n > 1023 ||
        !std::isdigit(static_cast<unsigned char>(one[0])))
      throw UsageError("--device needs a GPU index, a list of them (0,1) or 'all', got '" + spec +
                       "'");
    if (std::find(out.begin(), out.end(), static_cast<int>(n)) != out.end())
      throw UsageError("--device " + spec + " names GPU " + one + " twice");
    out.push_back(static_cast<int>(n));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int> devices_for(const std::string& spec, int count) {
  std::vector<int> asked = parse_device_spec(spec);
  if (asked.empty()) {
    for (int i = 0; i < count; ++i) asked.push_back(i);
    return asked;
  }
  for (int n : asked)
    if (n >= count)
      throw UsageError("--device " + spec + " is out of range: this machine has " +
                       std::to_string(count) + " CUDA device(s) (0.." + std::to_string(count - 1) +
                       ")");
  return asked;
}

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's path (/proc/self/exe)");
  return p.string();
}

int require_devices() {
  std::string why;
  int n = cuda_device_count(&why);
  if (n == 0) {
    // A driver missing or too old for this build's runtime reads, in CUDA's
    // words, as cudaErrorInsufficientDriver: name which it is, and the fix.
    std::string driver = driver_problem();
    if (!driver.empty()) why = driver + " (" + why + ")";
    std::fprintf(stderr, "kbench: no CUDA device found: %s; nothing was measured\n", why.c_str());
  }
  return n;
}

const TargetFile* target_for(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                             const Args& a) {
  const TargetFile* tf = match_gpu(files, dev.name);
  if (!tf) {
    bool explicit_dir = false;
    std::string dir = targets_dir(a, &explicit_dir);
    std::fprintf(stderr,
                 "kbench: warning: no target file in %s matches GPU '%s'; using targets of %.0f%% "
                 "of the roofline measured now. To add one: kbench probe --device %d --write "
                 "%s/%s.json, then fill in the datasheet peaks and targets\n",
                 dir.c_str(), dev.name.c_str(), kFallbackRooflineFraction * 100, dev.index,
                 dir.c_str(), gpu_slug(dev.name).c_str());
  }
  return tf;
}

// The inputs a GPU's chain reads, checked before anything is measured: two
// target files for the GPU, or a tuning file that does not parse, are the
// run's error (exit 2), not one GPU's stopped chain that the run outlives.
void check_gpu_inputs(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                      const WorkerConfig& cfg) {
  const TargetFile* tf = match_gpu(files, dev.name);
  if (cfg.targets_dir.empty()) return;
  const std::string tpath = tuning_path(cfg.targets_dir, tf, dev.name);
  load_pins(tpath, dev.name, nullptr);
  load_gemv_table(tpath, dev.name, nullptr);
}

// `gpus`: how many GPUs the run measures at once (worker_processes).
WorkerConfig worker_config(const Args& a, int gpus = 1) {
  WorkerConfig cfg;
  cfg.exe = self_exe();
  bool explicit_dir = false;
  const std::string tdir = targets_dir(a, &explicit_dir);
  std::error_code ec;
  if (std::filesystem::is_directory(tdir, ec)) cfg.targets_dir = tdir;
  cfg.engine = a.engine;
  if (cfg.engine.seed == 0)  // one fresh seed per run, shared by its workers
    cfg.engine.seed = static_cast<uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count() & 0x7fffffffffffull);
  cfg.timeout_s = a.timeout_s;
  const ProcessCounts pc = worker_processes(a.processes, a.short_processes, a.quick, gpus);
  cfg.processes = pc.processes;
  cfg.short_processes = pc.short_processes;
  cfg.spread_extend = a.extend_spread;
  cfg.info.run_id = a.run_id.empty() ? new_run_id() : a.run_id;
  cfg.info.timestamp = utc_timestamp();
  cfg.info.suite_version = KBENCH_VERSION;
  cfg.info.git_sha = KBENCH_GIT_SHA;
  return cfg;
}

double injection_for(const Injection& inj, const std::string& experiment) {
  return inj.fraction > 0 && std::regex_search(experiment, inj.re) ? inj.fraction : 0;
}

// Prints the failed rows of one step and the step's line; returns how many.
size_t report_step(const std::vector<Record>& er, double seconds) {
  size_t bad = 0;
  for (const auto& r : er)
    if (r.status == status::failed || r.status == status::incorrect) ++bad;
  std::printf(" %zu rows, %.1f s%s\n", er.size(), seconds,
              bad ? (", " + std::to_string(bad) + " failed/incorrect").c_str() : "");
  for (const auto& r : er)
    if (r.status == status::failed || r.status == status::incorrect)
      std::printf("    %s %s %s: %s: %s\n", r.shape.c_str(), r.dtype.c_str(), r.metric.c_str(),
                  r.status.c_str(), r.message.c_str());
  return bad;
}

int finish_run(const Args& a, const std::vector<Record>& rows) {
  std::printf("\n%s", console_table(rows).c_str());
  if (!a.no_csv) {
    const size_t columns = append_csv(a.csv, rows);
    std::printf("%zu rows appended to %s\n", rows.size(), a.csv.c_str());
    if (columns == csv_columns_v1())
      std::printf(
          "note: %s has CSV schema v1: its rows were written in v1, without the GPU identity "
          "columns (gpu_index, gpu_uuid, gpu_bus_id, host; docs/csv-schema.md, schema v2)\n",
          a.csv.c_str());
  }
  if (!a.json.empty()) write_json(a.json, rows);
  for (const auto& r : rows)
    if (r.status == status::failed || r.status == status::incorrect) return kExitRowsFailed;
  return kExitOk;
}

void stamp_gpu(std::vector<Record>& rows, const DeviceInfo& dev, const std::string& host);

// One point to measure again, and the seed-mean groups to recompute.
struct RerunPoint {
  const Experiment* e = nullptr;
  size_t index = 0;
};
struct RerunMean {
  const Experiment* e = nullptr;
  std::string dtype, variant;
};

// A row's variant without the mark of an injected slowdown (the last field).
std::string without_inject(const std::string& v) {
  if (v.rfind("inject=", 0) == 0) return "";
  const auto f = v.find(";inject=");
  return f == std::string::npos ? v : v.substr(0, f);
}

bool point_matches(const Point& p, const Suspect& s) {
  return dtype_name(p.dtype) == s.dtype &&
         (p.variant.empty() || variant_matches(p.variant, s.variant));
}

// `kbench run --rerun FILE --repeat N`: the suspects' points, N times,
// interleaved (A B C A B C), each in a fresh worker process, appended as
// attempts of the suspects' run (run_id <run>/<attempt>).
int cmd_rerun(const Args& a) {
  const std::vector<Suspect> sus = read_suspects(a.rerun);
  const int repeat = a.repeat > 0 ? a.repeat : 3;
  auto files = load_targets(a);
  if (!a.no_csv) precheck_csv(a.csv);
  std::vector<RerunPoint> todo;
  std::vector<RerunMean> means;
  std::string base;
  for (const Suspect& s : sus) {
    const std::string at = a.rerun + ":" + std::to_string(s.line) + ": ";
    if (base.empty()) base = s.run_id;
    if (s.run_id != base)
      throw SuspectsError(at + "suspects of two runs (" + base + ", " + s.run_id +
                          "): re-measure one run at a time");
    const Experiment* e = Registry::instance().find(s.name);
    if (!e)
      throw SuspectsError(at + "no experiment '" + s.name + "' in this build. Experiments:\n" +
                          experiment_names());
    const auto points = e->points();
    auto add = [&](size_t i) {
      for (const auto& t : todo)
        if (t.e == e && t.index == i) return;
      todo.push_back({e, i});
    };
    bool found = false;
    if (s.shape == "mean") {
      for (size_t i = 0; i < points.size(); ++i)
        if (points[i].in_seed_mean && point_matches(points[i], s)) {
          add(i);
          found = true;
        }
      if (found) {
        const std::string v = without_inject(s.variant);
        bool dup = false;
        for (const auto& m : means) dup |= m.e == e && m.dtype == s.dtype && m.variant == v;
        if (!dup) means.push_back({e, s.dtype, v});
      }
    } else {
      for (size_t i = 0; i < points.size() && !found; ++i)
        if (points[i].shape.str() == s.shape && point_matches(points[i], s)) {
          add(i);
          found = true;
        }
    }
    if (!found)
      throw SuspectsError(at + "experiment '" + s.name + "' has no point shape=" + s.shape +
                          " dtype=" + s.dtype + (s.variant.empty() ? "" : " variant=" + s.variant) +
                          " (was the suspects file written for another build?)");
  }
  if (todo.empty()) {
    std::printf("kbench: %s names no suspects: nothing to re-measure\n", a.rerun.c_str());
    return kExitOk;
  }
  const int count = require_devices();
  if (count == 0) return kExitNoDevice;
  const std::vector<int> devices = devices_for(a.device, count);
  if (devices.size() != 1) throw UsageError("--rerun measures on one GPU: give --device N");
  DeviceInfo dev = query_device(devices.front());
  for (const Suspect& s : sus)
    if (!s.arch.empty() && !same_gpu_name(s.arch, dev.name))
      throw SuspectsError(a.rerun + ":" + std::to_string(s.line) + ": a suspect of '" + s.arch +
                          "', but this GPU is '" + dev.name + "'");
  WorkerConfig cfg = worker_config(a);
  check_gpu_inputs(files, dev, cfg);
  const Injection inject = a.inject.empty() ? Injection{} : parse_injection(a.inject);
  const TargetFile* tf = target_for(files, dev, a);
  std::string text;
  {
    std::ifstream in(a.csv, std::ios::binary);
    std::ostringstream ss;
    if (in) ss << in.rdbuf();
    text = ss.str();
  }
  const int first = next_attempt(text, base);
  std::printf(
      "kbench: re-measuring %zu point(s) of run %s, %d time(s) each, interleaved, as "
      "attempts %d..%d on %s\n",
      todo.size(), base.c_str(), repeat, first, first + repeat - 1, dev.name.c_str());
  ProbeResult probed;
  run_probe_worker(cfg, dev, &probed);
  const std::string host = host_name();
  std::vector<Record> rows;
  for (int k = 0; k < repeat; ++k) {
    cfg.info.run_id = attempt_run_id(base, first + k);
    cfg.info.timestamp = utc_timestamp();
    std::map<const Experiment*, std::vector<std::vector<Record>>> per_point;
    // One worker per experiment and attempt (a fresh process, fresh
    // allocations), its suspect points in order: A B C, then A B C again.
    std::vector<const Experiment*> order;
    for (const auto& t : todo)
      if (std::find(order.begin(), order.end(), t.e) == order.end()) order.push_back(t.e);
    for (const Experiment* e : order) {
      std::vector<size_t> idx;
      for (const auto& t : todo)
        if (t.e == e) idx.push_back(t.index);
      std::printf("[attempt %d] %s, %zu point(s) ...", first + k, e->name().c_str(), idx.size());
      std::fflush(stdout);
      const auto t0 = std::chrono::steady_clock::now();
      cfg.engine.inject_slowdown = injection_for(inject, e->name());
      auto got = run_points_isolated(cfg, *e, idx, dev, tf, probed);
      std::vector<Record> er;
      auto& pp = per_point[e];
      if (pp.empty()) pp.resize(e->points().size());
      for (size_t n = 0; n < idx.size(); ++n) {
        pp[idx[n]] = got[n];
        er.insert(er.end(), got[n].begin(), got[n].end());
      }
      report_step(er, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      rows.insert(rows.end(), er.begin(), er.end());
    }
    for (const auto& m : means) {
      for (const auto& r : seed_mean_rows(m.e->source(), m.e->points(), per_point[m.e], tf)) {
        const std::string v = without_inject(r.variant);
        if (r.dtype == m.dtype && v == m.variant) rows.push_back(r);
      }
    }
  }
  stamp_gpu(rows, dev, host);
  return finish_run(a, rows);
}

// Console lines of several GPUs' chains at once: each line written whole,
// prefixed with its GPU when there are several.
class Console {
 public:
  explicit Console(bool prefixed) : prefixed_(prefixed) {}
  void line(int device, const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (prefixed_)
      std::printf("[gpu %d] %s\n", device, text.c_str());
    else
      std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }

 private:
  bool prefixed_;
  std::mutex mu_;
};

// The step's line ("12 rows, 3.4 s, 1 failed/incorrect") and its failed rows.
std::string step_text(const std::vector<Record>& er, double seconds) {
  size_t bad = 0;
  for (const auto& r : er)
    if (r.status == status::failed || r.status == status::incorrect) ++bad;
  char head[96];
  std::snprintf(head, sizeof head, "%zu rows, %.1f s", er.size(), seconds);
  std::string s = head;
  if (bad) s += ", " + std::to_string(bad) + " failed/incorrect";
  for (const auto& r : er)
    if (r.status == status::failed || r.status == status::incorrect)
      s += "\n    " + r.shape + " " + r.dtype + " " + r.metric + ": " + r.status + ": " + r.message;
  return s;
}

// Every row names the GPU and host that measured it (schema v2).
void stamp_gpu(std::vector<Record>& rows, const DeviceInfo& dev, const std::string& host) {
  for (auto& r : rows) {
    if (r.gpu_index.empty()) r.gpu_index = std::to_string(dev.index);
    if (r.gpu_uuid.empty()) r.gpu_uuid = dev.uuid;
    if (r.gpu_bus_id.empty()) r.gpu_bus_id = dev.pci_bus_id;
    if (r.host.empty()) r.host = host;
  }
}

// The rows of steps that could not run on a GPU (its ceiling probe failed,
// it vanished): `failed`, with the reason, so that the night shows them.
std::vector<Record> failed_steps(const std::vector<Step>& steps, const std::string& why,
                                 const WorkerConfig& cfg, const GpuIdentity& gpu,
                                 const TargetFile* tf) {
  std::vector<Record> rows;
  for (const Step& st : steps) {
    if (!st.e) continue;
    const auto points = st.e->points();
    std::vector<Point> ps;
    std::vector<std::vector<Record>> per;
    for (size_t i : st.indices) {
      ps.push_back(points[i]);
      per.push_back(
          status_rows(st.e->source(), points[i], status::failed, why, "", cfg.info, gpu, tf));
      rows.insert(rows.end(), per.back().begin(), per.back().end());
    }
    auto means = seed_mean_rows(st.e->source(), ps, per, tf);
    rows.insert(rows.end(), means.begin(), means.end());
  }
  return rows;
}

// One GPU's chain: its ceiling probe, then each step in order, every one in
// worker processes of its own pinned to this GPU. Chains of several GPUs
// run at once (one thread each, waiting on its workers): the references and
// checks run in the workers, so no GPU waits on another's CPU work. Whatever
// goes wrong becomes this GPU's failed rows; it never stops the others.
std::vector<Record> run_chain(const Args& a, WorkerConfig cfg, int d,
                              const std::vector<Step>& steps, const std::vector<TargetFile>& files,
                              const Injection& inject, const std::string& host, Console& con) {
  DeviceInfo dev;
  try {
    dev = query_device(d);
  } catch (const std::exception& ex) {
    dev.index = d;
    dev.name = "unknown";
    auto rows =
        failed_steps(steps, std::string("cannot query GPU ") + std::to_string(d) + ": " + ex.what(),
                     cfg, gpu_identity(dev), nullptr);
    stamp_gpu(rows, dev, host);
    return rows;
  }
  const TargetFile* tf = target_for(files, dev, a);
  char head[512];
  std::snprintf(head, sizeof head,
                "kbench %s: %s (device %d, %s, %s, %d SMs, %zu MB L2, driver %s, CUDA %s), "
                "targets: %s",
                cfg.info.run_id.c_str(), dev.name.c_str(), d, dev.pci_bus_id.c_str(),
                dev.uuid.c_str(), dev.sm_count, dev.l2_bytes >> 20, dev.driver.c_str(),
                dev.cuda.c_str(), tf ? tf->path.c_str() : "roofline fallback");
  con.line(d, head);
  if (!cfg.targets_dir.empty()) {
    const std::string tpath = tuning_path(cfg.targets_dir, tf, dev.name);
    std::string warning;
    const auto pins = load_pins(tpath, dev.name, &warning);
    if (!warning.empty()) std::fprintf(stderr, "kbench: warning: %s\n", warning.c_str());
    con.line(d, "cuBLASLt choices: " +
                    (pins.empty() ? "none pinned (" + tpath + " " +
                                        (warning.empty() ? "does not exist" : "not used") +
                                        "): the heuristic's first choice; kbench tune writes the "
                                        "table"
                                  : std::to_string(pins.size()) + " pinned in " + tpath));
    std::string gemv_warning;
    const auto table = load_gemv_table(tpath, dev.name, &gemv_warning);
    if (!gemv_warning.empty()) std::fprintf(stderr, "kbench: warning: %s\n", gemv_warning.c_str());
    con.line(d, "GEMV choices: " + (table.empty() ? "the generic rule (no gemv table in " + tpath +
                                                        (gemv_warning.empty() ? "" : ": not used") +
                                                        "; kbench tune gemv writes it)"
                                                  : std::to_string(table.size()) + " buckets in " +
                                                        tpath + ", the generic rule elsewhere"));
  }
  std::vector<Record> rows;
  ProbeResult probed;
  try {
    auto probe_rows = run_probe_worker(cfg, dev, &probed);
    rows.insert(rows.end(), probe_rows.begin(), probe_rows.end());
  } catch (const std::exception& ex) {
    con.line(
        d, std::string("the ceiling probe failed: ") + ex.what() + ": this GPU's rows are failed");
    auto failed =
        failed_steps(steps, std::string("the ceiling probe failed on this GPU: ") + ex.what(), cfg,
                     gpu_identity(dev), tf);
    rows.insert(rows.end(), failed.begin(), failed.end());
    stamp_gpu(rows, dev, host);
    return rows;
  }
  const Ceilings c = merge_ceilings(tf, probed);
  char line[640];
  std::snprintf(
      line, sizeof line,
      "ceilings used: read %.0f GB/s, copy %.0f GB/s, launch %.2f us, graph node %.2f us, "
      "HBM latency %.2f us, bf16 %.0f TFLOP/s, int8 %.0f TOP/s; measured now: read %.0f, "
      "copy %.0f (cudaMemcpy %.0f), launch %.2f us, graph node %.2f us, HBM latency %.2f us",
      c.read_gbps, c.copy_gbps, c.launch_us, c.graph_node_us, c.mem_latency_us, c.bf16_tflops,
      c.int8_tops, probed.read_gbps, probed.copy_gbps, probed.memcpy_gbps, probed.launch_us,
      probed.graph_node_us, probed.mem_latency_us);
  con.line(d, line);
  size_t n = 0, total = 0;
  for (const Step& st : steps) total += st.e ? 1 : 0;
  for (const Step& st : steps) {
    if (!st.e) continue;
    const Experiment& e = *st.e;
    ++n;
    auto t0 = std::chrono::steady_clock::now();
    cfg.engine.inject_slowdown = injection_for(inject, e.name());
    std::vector<Record> er;
    try {
      er = run_experiment_isolated(cfg, e, dev, tf, probed, st.indices);
    } catch (const std::exception& ex) {
      er = failed_steps({st}, ex.what(), cfg, gpu_identity(dev), tf);
    }
    con.line(
        d,
        "[" + std::to_string(n) + "/" + std::to_string(total) + "] " + e.name() + ": " +
            step_text(
                er, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    rows.insert(rows.end(), er.begin(), er.end());
  }
  stamp_gpu(rows, dev, host);
  return rows;
}

int cmd_run(const Args& a) {
  parse_device_spec(a.device);  // a malformed --device is a usage error on any machine
  if (!a.rerun.empty()) return cmd_rerun(a);
  auto experiments = select(a.filter);
  const auto collectives = collectives_matching(a.filter);
  const std::vector<Step> steps = plan_steps(experiments, collectives, a.shard);
  auto files = load_targets(a);
  if (!a.no_csv) precheck_csv(a.csv);
  const int count = require_devices();
  if (count == 0) return kExitNoDevice;
  const std::vector<int> devices = devices_for(a.device, count);

  WorkerConfig cfg = worker_config(a, static_cast<int>(devices.size()));
  const Injection inject = a.inject.empty() ? Injection{} : parse_injection(a.inject);
  // Several GPUs in one run: each row says which (cuda:N); the gate takes
  // them as attempts of one key (docs/gate.md).
  const bool several = devices.size() > 1;
  cfg.info.device_label = "cuda";
  const std::string host = host_name();
  if (!a.shard.whole()) {
    size_t points = 0;
    for (const Step& st : steps) points += st.e ? st.indices.size() : 1;
    std::printf("kbench: shard %d/%d: %zu step(s), %zu point(s) of the suite\n", a.shard.index,
                a.shard.count, steps.size(), points);
  }
  if (several)
    std::printf(
        "kbench: %zu GPUs at once, one chain of worker processes each; a kernel point in %d "
        "worker process(es) on each GPU, %d under %g us (docs/measuring.md)\n",
        devices.size(), cfg.processes, cfg.short_processes, kShortPointUs);

  for (int d : devices) {
    DeviceInfo dev;
    try {
      dev = query_device(d);
    } catch (const std::exception&) {
      continue;  // its chain makes its rows failed, saying why
    }
    check_gpu_inputs(files, dev, cfg);
  }

  Console con(several);
  std::vector<std::vector<Record>> per_gpu(devices.size());
  std::vector<std::exception_ptr> stopped(devices.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < devices.size(); ++k) {
    WorkerConfig c = cfg;
    if (several) c.info.device_label = "cuda:" + std::to_string(devices[k]);
    threads.emplace_back([&, c, k] {
      try {
        per_gpu[k] = run_chain(a, c, devices[k], steps, files, inject, host, con);
      } catch (...) {  // run_chain turns errors into rows; this is a bug
        stopped[k] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  // A GPU without its rows must not leave a run that reads as complete.
  for (const auto& e : stopped)
    if (e) std::rethrow_exception(e);
  std::vector<Record> rows;
  for (auto& r : per_gpu) rows.insert(rows.end(), r.begin(), r.end());

  // Collectives last, with every GPU of the run idle: one worker across them.
  for (const Step& st : steps) {
    if (st.e) continue;
    std::printf("%s across %zu GPU(s) ...", st.collective.c_str(), devices.size());
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    auto cr = run_collective_isolated(cfg, st.collective, devices, host);
    std::printf(
        " %s\n",
        step_text(cr, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())
            .c_str());
    rows.insert(rows.end(), cr.begin(), cr.end());
  }
  return finish_run(a, rows);
}

// `kbench tune`: builds every point of the selected experiments (gemm and
// the MLP by default) to learn which cuBLASLt GEMMs they plan, then for each
// GEMM times every candidate of the heuristic, interleaved (one cold sample
// of each candidate in turn, `--reps` rounds) exactly as the engine times
// samples, and writes the fastest by median into the GPU's tuning table with
// what was measured. Other sections of an existing table are kept.
constexpr double kTuneMinGain = 0.02;

// What both tuning commands tune: the one GPU of --device (made current),
// its target file and the tuning table to write. None without a GPU.
struct TuneTarget {
  DeviceInfo dev;
  const TargetFile* tf;
  std::string out;
};
std::optional<TuneTarget> tune_target(const Args& a, const std::vector<TargetFile>& files) {
  parse_device_spec(a.device);
  const int count = require_devices();
  if (count == 0) return std::nullopt;
  const int d = devices_for(a.device, count).front();
  TuneTarget t{query_device(d), nullptr, ""};
  KB_CUDA_CHECK(cudaSetDevice(d));
  t.tf = match_gpu(files, t.dev.name);
  bool explicit_dir = false;
  t.out = a.write.empty() ? tuning_path(targets_dir(a, &explicit_dir), t.tf, t.dev.name) : a.write;
  return t;
}

// `kbench tune gemv`: the GEMV dispatch table (suite/gemv_tune.h).
int cmd_tune_gemv(const Args& a) {
  if (!a.filter.empty() || a.candidates != 16)
    throw UsageError(
        "tune gemv takes no --filter or --candidates: it times the suite's GEMV shapes");
  parse_device_spec(a.device);
  auto files = load_targets(a);
  const auto t = tune_target(a, files);
  if (!t) return kExitNoDevice;
  const auto& [dev, tf, out] = *t;
  const auto shapes = gemv_tuning_shapes();
  std::printf(
      "kbench tune gemv: %zu GEMV shapes on %s, %d interleaved cold samples per candidate\n",
      shapes.size(), dev.name.c_str(), a.reps);
  try {
    tune_gemv_table(dev, tf, out, a.reps, shapes);
  } catch (const TuningError& e) {
    throw UsageError(std::string(e.what()) + ": fix or remove it; nothing was written");
  }
  return kExitOk;
}

int cmd_tune(const Args& a) {
  if (a.tune_gemv) return cmd_tune_gemv(a);
  parse_device_spec(a.device);  // a malformed --device is a usage error on any machine
  auto experiments = select(a.filter.empty() ? "^(gemm|mlp_layer_norm_gelu)$" : a.filter);
  auto files = load_targets(a);
  const auto t = tune_target(a, files);
  if (!t) return kExitNoDevice;
  const auto& [dev, tf, out] = *t;

  gemm::set_pinned_algos({});
  gemm::clear_planned_keys();
  for (const Experiment* e : experiments)
    for (const Point& p : e->points()) {
      if (!e->unsupported_reason(p, dev.prop).empty()) continue;
      try {
        e->make_case(p);  // plans its GEMMs; destroyed at once
      } catch (const std::exception& ex) {
        cudaGetLastError();
        std::fprintf(stderr, "kbench tune: %s %s %s: not tuned: %s\n", e->name().c_str(),
                     p.shape.str().c_str(), dtype_name(p.dtype), ex.what());
      }
    }
  const std::vector<gemm::AlgoKey> keys = gemm::planned_keys();
  if (keys.empty()) throw UsageError("the selected experiments plan no cuBLASLt GEMM");
  std::printf(
      "kbench tune: %zu cuBLASLt GEMMs on %s, up to %d candidates each, %d interleaved "
      "cold samples per candidate\n",
      keys.size(), dev.name.c_str(), a.candidates, a.reps);

  RunInfo info;
  EngineOptions eo;
  Engine engine(dev, tf, eo, info);
  int version = static_cast<int>(cublasLtGetVersion());
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const auto& k : keys) {
    gemm::Options o;
    o.input = k.input;
    o.epilogue = k.epilogue;
    o.candidates = a.candidates;
    o.use_pins = false;
    const size_t in_size = k.input == gemm::Input::bf16 ? 2 : 1;
    DeviceBuffer<unsigned char> A(static_cast<size_t>(k.M * k.K) * in_size),
        W(static_cast<size_t>(k.N * k.K) * in_size), D(static_cast<size_t>(k.M * k.N) * 2),
        bias(static_cast<size_t>(k.N) * 2);
    cudaStream_t s0 = nullptr;
    if (k.input == gemm::Input::bf16) {
      fill_uniform_bf16(reinterpret_cast<gemm::bf16*>(A.get()), k.M * k.K, 1, -1.f, 1.f, s0);
      fill_uniform_bf16(reinterpret_cast<gemm::bf16*>(W.get()), k.N * k.K, 2, -1.f, 1.f, s0);
    } else {
      fill_uniform_fp8_e4m3(reinterpret_cast<gemm::fp8*>(A.get()), k.M * k.K, 1, -1.f, 1.f, s0);
      fill_uniform_fp8_e4m3(reinterpret_cast<gemm::fp8*>(W.get()), k.N * k.K, 2, -1.f, 1.f, s0);
    }
    fill_uniform_bf16(reinterpret_cast<gemm::bf16*>(bias.get()), k.N, 3, -1.f, 1.f, s0);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    gemm::Gemm g(k.M, k.N, k.K, o);
    const void* bp = gemm::has_bias(k.epilogue) ? bias.get() : nullptr;
    auto launch = [&](cudaStream_t s) {
      if (k.input == gemm::Input::bf16)
        g.run(reinterpret_cast<const gemm::bf16*>(A.get()),
              reinterpret_cast<const gemm::bf16*>(W.get()), static_cast<const gemm::bf16*>(bp),
              reinterpret_cast<gemm::bf16*>(D.get()), s);
      else
        g.run(reinterpret_cast<const gemm::fp8*>(A.get()),
              reinterpret_cast<const gemm::fp8*>(W.get()), static_cast<const gemm::bf16*>(bp),
              reinterpret_cast<gemm::bf16*>(D.get()), s);
    };
    const int n = g.candidates();
    std::vector<std::vector<double>> t(static_cast<size_t>(n));
    std::vector<gemm::AlgoConfig> cfg(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {  // warm-up, and each candidate's configuration
      g.use_candidate(i);
      cfg[i] = g.algo();
      engine.time_cold(launch);
    }
    for (int r = 0; r < a.reps; ++r)
      for (int i = 0; i < n; ++i) {
        g.use_candidate(i);
        t[i].push_back(engine.time_cold(launch));
      }
    std::vector<double> med(static_cast<size_t>(n));
    int best = 0;
    for (int i = 0; i < n; ++i) {
      med[i] = median(t[i]);
      if (med[i] < med[best]) best = i;
    }
    // The heuristic's first choice stays unless another candidate beats it
    // clearly: a win of under 2% is within what the tuning's own conditions
    // (back-to-back samples, the GPU's power state) can shift, and on the
    // H100 such near-ties chosen away from the first measured up to 12%
    // slower in the suite (docs/targets.md).
    if (best != 0 && med[0] / med[best] - 1 < kTuneMinGain) best = 0;
    int second = -1;
    for (int i = 0; i < n; ++i)
      if (i != best && (second < 0 || med[i] < med[second])) second = i;
    gemm::PinnedAlgo pin{k, cfg[best], ""};
    nlohmann::ordered_json m;
    m["median_us"] = std::round(med[best] * 1e8) / 100;
    m["noise_rel"] = std::round(summarize(t[best]).noise_rel * 1e5) / 1e5;
    m["heuristic_rank"] = best + 1;
    m["heuristic_first_us"] = std::round(med[0] * 1e8) / 100;
    if (second >= 0) {
      m["runner_up"] = gemm::algo_id(cfg[second]);
      m["runner_up_us"] = std::round(med[second] * 1e8) / 100;
    }
    m["candidates"] = n;
    m["samples"] = a.reps;
    m["date"] = utc_timestamp();
    m["driver"] = dev.driver;
    m["cublaslt_version"] = version;
    entries.push_back(pin_json(pin, m));
    std::printf(
        "  %s M=%lld N=%lld K=%lld: %s %.2f us (heuristic's #%d; its first %.2f us%s)\n",
        gemm::input_name(k.input), (long long)k.M, (long long)k.N, (long long)k.K,
        gemm::algo_id(cfg[best]).c_str(), med[best] * 1e6, best + 1, med[0] * 1e6,
        second >= 0 ? (", runner-up " + std::to_string(med[second] * 1e6) + " us").c_str() : "");
  }
  nlohmann::ordered_json doc;
  try {
    doc = read_tuning_doc(out);
  } catch (const TuningError& e) {
    throw UsageError(std::string(e.what()) + ": fix or remove it; nothing was written");
  }
  doc["gpu"] = dev.name;
  doc["cublaslt"] = entries;
  write_tuning_doc(doc, out);
  std::printf("tuning table written to %s (%zu cuBLASLt entries): review and commit it\n",
              out.c_str(), keys.size());
  return kExitOk;
}

// The ladder probe's chains (suite/chain_probe.h), in seconds in the order
// of `chains`, measured as a `kbench run` measures roofline_ideal's rows:
// in kChainProcesses worker processes of their own, one after the other
// (measure_points_isolated: the same worker, engine and measurement), each
// measuring the experiment's points as a run's worker does, the chains
// among them (chain_worker_points), each with its share of the buffer-set
// bytes; per chain the mean over the processes, as a row's time is (a
// launch's cost is a state of the process). A row of a chain is bounded by
// the probe's time of that very chain, and timed in the
// probe's own process, after the ladder, the graph chains read 1.3 us
// slower than as rows (H100: rows at 1.050 and 1.037 of their bound;
// docs/decisions/0009-chains-probed-in-worker-processes.md). This process's CUDA context goes
// first, so that the workers are alone on the GPU as a run's workers are (a run's parent never
// makes one); the caller makes no CUDA call after this. Where a worker fails, the probe fails with
// the reason and writes nothing: in-process chains would give a bound the rows are known to beat,
// so they are only ever asked for (--chains-in-process), never a silent fallback.
std::vector<double> chains_in_workers(const Args& a, const DeviceInfo& dev,
                                      const std::vector<Point>& chains,
                                      std::vector<Point>* all_points,
                                      std::vector<double>* all_seconds) {
  const Experiment& e = chain_experiment();
  KB_CUDA_CHECK(cudaDeviceReset());
  WorkerConfig cfg = worker_config(a);
  cfg.info.device_label = "cuda";
  // No target files: times without rows need no ceilings, and the ideal
  // kernels no cuBLASLt or GEMV choices; a target file the probe is about
  // to write (or fix) must not stop it.
  cfg.targets_dir.clear();
  static_assert(kChainProcesses == kDefaultProcesses, "the chains are measured as rows are");
  cfg.engine.sampled_bytes_goal =
      std::max<size_t>(cfg.engine.sampled_bytes_goal / kChainProcesses, 1);
  try {
    std::vector<Point> runs_points;
    for (const Point& p : e.points())
      if (e.unsupported_reason(p, dev.prop).empty()) runs_points.push_back(p);
    std::vector<size_t> at;
    const std::vector<Point> points = chain_worker_points(runs_points, chains, &at);
    std::vector<std::vector<double>> per_process;
    for (int i = 0; i < kChainProcesses; ++i) {
      const std::vector<PointTime> t = measure_points_isolated(cfg, e, points, dev);
      std::vector<double> v;
      for (const PointTime& pt : t) v.push_back(pt.value_s);
      per_process.push_back(std::move(v));
    }
    // Every point's mean (the single launches fold into the rungs:
    // fold_worker_rungs), the chains' in the order of `chains`.
    *all_seconds = mean_over_processes(per_process);
    *all_points = points;
    std::vector<double> out;
    for (size_t k : at) out.push_back(all_seconds->at(k));
    return out;
  } catch (const std::exception& ex) {
    throw std::runtime_error(
        std::string("the ladder probe's chains, measured in worker processes as rows are, "
                    "failed: ") +
        ex.what() +
        "; nothing was written (kbench probe --chains-in-process measures them in this "
        "process instead, whose graph chains read slower than the rows: docs/metrics.md)");
  }
}

int cmd_probe(const Args& a) {
  if (parse_device_spec(a.device).size() != 1)
    throw UsageError("probe measures one GPU: --device N, got '" + a.device + "'");
  // The files it reads, before it measures: one that does not parse is exit
  // 2 with nothing measured. No datasheet table: the draft says so.
  // (--replace: the file's ladder may be what is broken; set_ladder reads the rest.)
  if (!a.write.empty() && !a.replace && std::filesystem::exists(a.write)) load_target_file(a.write);
  bool explicit_dir = false;
  const std::string table = datasheets_path(targets_dir(a, &explicit_dir));
  std::optional<DatasheetTable> sheets;
  std::error_code exists_ec;
  if (std::filesystem::exists(table, exists_ec)) sheets = load_datasheets(table);
  const int count = require_devices();
  if (count == 0) return kExitNoDevice;
  const int d = devices_for(a.device, count).front();
  DeviceInfo dev = query_device(d);
  // Which target file of the folder is this GPU's, before measuring: the
  // line tools/bringup.sh reads rather than matching names itself.
  std::fprintf(stderr, "%s\n", target_file_line(load_targets(a), dev.name).c_str());
  KB_CUDA_CHECK(cudaSetDevice(d));
  cudaStream_t s;
  KB_CUDA_CHECK(cudaStreamCreate(&s));
  ProbeResult p = probe_ceilings(s, dev.mem_bytes, a.quick);
  cudaStreamDestroy(s);
  // The speed of light: the ideal kernels timed as the engine times samples.
  LadderProbe lp;
  std::vector<Point> chains;
  std::vector<double> chain_s;
  {
    // The options of a run (the chains are measured as its rows are), quick
    // with --quick.
    EngineOptions eo;
    eo.quick = a.quick;
    Engine engine(dev, nullptr, eo, RunInfo{});
    lp = probe_ladder(engine, dev.sm_count, dev.mem_bytes, a.quick);
    chains = chain_points(lp.max_bytes);
    if (a.chains_in_process) chain_s = time_chains_in_process(engine, chains);
  }
  std::vector<std::string> folded;
  if (!a.chains_in_process) {
    std::vector<Point> worker_points;
    std::vector<double> worker_s;
    chain_s = chains_in_workers(a, dev, chains, &worker_points, &worker_s);
    std::vector<std::string> reads, copies;
    for (Ideal k : kIdealReads) reads.push_back(ideal_name(k));
    for (Ideal k : kIdealCopies) copies.push_back(ideal_name(k));
    folded = fold_worker_rungs(lp.sol, worker_points, worker_s, reads, copies);
  }
  lp.chain_report = set_further_launches(lp.sol, chains, chain_s);
  std::fprintf(stderr, "chains: roofline_ideal's chain points measured %s\n",
               a.chains_in_process
                   ? "in this process, after the ladder (--chains-in-process)"
                   : "in worker processes of their own (kbench __worker, each measuring "
                     "roofline_ideal's points as a run's worker does; the mean of 3, as a row's)");
  for (const auto* rungs : {&lp.read, &lp.copy})
    for (const auto& r : *rungs) {
      std::fprintf(stderr, "ladder %s %.0f B:", rungs == &lp.read ? "read" : "copy", r.bytes);
      for (const auto& [k, t] : r.median_s) std::fprintf(stderr, " %s %.3f us", k.c_str(), t * 1e6);
      std::fprintf(stderr, "\n");
    }
  for (const auto& line : folded)
    std::fprintf(stderr, "rung measured as rows are, faster than this process: %s\n", line.c_str());
  for (const auto& line : lp.chain_report) std::fprintf(stderr, "chain %s\n", line.c_str());
  const std::string today = utc_timestamp().substr(0, 10);
  if (!a.write.empty() && std::filesystem::exists(a.write)) {
    // An existing file: only its ladder is replaced.
    std::ifstream in(a.write);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) throw std::runtime_error(a.write + ": cannot read");
    // The file's own ladder, where it has one and --replace is not given:
    // the faster of both per rung (a bound must hold for every probe).
    SpeedOfLight sol = lp.sol;
    int kept = 0;
    bool merged = false;
    if (!a.replace) {
      const TargetFile before = parse_target_file(ss.str(), a.write);
      if (before.measured.ladder.present()) {
        sol = faster_of(before.measured.ladder, lp.sol, &kept);
        merged = true;
      }
    }
    atomic_write(a.write, set_ladder(ss.str(), a.write, sol, today, dev.driver));
    if (merged)
      std::printf(
          "measured.ladder of %s: the faster of the file's and this probe's (%d rungs and "
          "entries kept from the file; --replace writes this probe's alone): review the diff "
          "and commit it\n",
          a.write.c_str(), kept);
    else
      std::printf("measured.ladder of %s replaced: review the diff and commit it\n",
                  a.write.c_str());
    return kExitOk;
  }
  // Peaks from the datasheet table where the GPU is in it; the measured
  // figures go to `measured` (the roofline's ceilings), never to `peaks`.
  std::string peaks_message = sheets ? "" : table + ": no datasheet table";
  const Datasheet* sheet = sheets ? find_datasheet(*sheets, dev.name) : nullptr;
  std::string draft_message;
  nlohmann::ordered_json peaks = draft_peaks(sheet, table, dev.name, p.read_gbps, &draft_message);
  if (!draft_message.empty()) peaks_message += (peaks_message.empty() ? "" : "; ") + draft_message;
  nlohmann::ordered_json doc;
  doc["gpu"] = dev.name;
  doc["match"] = {dev.name};
  doc["peaks"] = peaks;
  doc["measured"] = {{"read_gbps", std::round(p.read_gbps)},
                     {"copy_gbps", std::round(std::max(p.copy_gbps, p.memcpy_gbps))},
                     {"launch_us", std::round(p.launch_us * 100) / 100},
                     {"graph_node_us", std::round(p.graph_node_us * 100) / 100},
                     {"mem_latency_us", std::round(p.mem_latency_us * 100) / 100},
                     {"date", utc_timestamp().substr(0, 10)},
                     {"driver", dev.driver}};
  nlohmann::ordered_json targets = nlohmann::ordered_json::array();
  for (const auto& e : Registry::instance().all()) {
    if (e.is_hidden()) continue;
    for (Metric m : e.metric_list()) {
      if (m == Metric::compilation_time) continue;
      std::vector<std::string> dtypes;
      for (const auto& p2 : e.points()) {
        std::string dt = dtype_name(p2.dtype);
        if (std::find(dtypes.begin(), dtypes.end(), dt) == dtypes.end()) dtypes.push_back(dt);
      }
      for (const auto& dt : dtypes) {
        targets.push_back({{"name", e.name()},
                           {"metric", metric_csv_name(m)},
                           {"dtype", dt},
                           {"shape", "*"},
                           {"roofline_fraction", 0.8}});
        if (e.has_seed_mean())
          targets.push_back({{"name", e.name()},
                             {"metric", metric_csv_name(m)},
                             {"dtype", dt},
                             {"shape", "mean"},
                             {"roofline_fraction", 0.8}});
      }
    }
  }
  doc["targets"] = targets;
  const std::string text =
      set_ladder(doc.dump(), a.write.empty() ? "(draft)" : a.write, lp.sol, today, dev.driver);
  if (a.write.empty()) {
    std::printf("%s", text.c_str());
  } else {
    atomic_write(a.write, text);
    std::printf("draft target file written to %s%s\n", a.write.c_str(),
                sheet ? (": peaks from " + table + " (" + sheet->gpu + ")").c_str()
                      : ": fill in the datasheet peaks");
  }
  if (!peaks_message.empty()) std::fprintf(stderr, "kbench: probe: %s\n", peaks_message.c_str());
  return kExitOk;
}

}  // namespace

int kbench_main(int argc, char** argv) {
  // NVLink multicast (NVLS) stays off in every process the suite starts:
  // set here, before any NCCL call, and inherited by every worker. On the
  // shared hosts, a program that uses it can put GPUs out of service.
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  if (argc > 1 && std::string(argv[1]) == "__worker") return worker_main(argc, argv);
  try {
    Args a = parse(argc, argv);
    if (a.command == "help" || a.command == "--help" || a.command == "-h") {
      std::printf("%s", kKbenchHelp);
      return kExitOk;
    }
    if (a.command == "--version" || a.command == "version") {
      std::printf("kbench %s (%s)\n", KBENCH_VERSION, KBENCH_GIT_SHA);
      return kExitOk;
    }
    if (a.command == "list") return cmd_list(a);
    if (a.command == "run") return cmd_run(a);
    if (a.command == "probe") return cmd_probe(a);
    if (a.command == "tune") return cmd_tune(a);
    throw UsageError("unknown command '" + a.command + "'");
  } catch (const UsageError& e) {
    std::string command = argc > 1 ? argv[1] : "";
    std::fprintf(stderr, "kbench: %s\nusage: %s\nRun 'kbench --help' for every option.\n", e.what(),
                 usage_line(command).c_str());
    return kExitUsage;
  } catch (const CudaError& e) {
    // Outside a row's worker: setting up a device, the CUDA runtime itself.
    std::fprintf(stderr, "kbench: CUDA error: %s (the GPU or its driver, not a row)\n", e.what());
    return kExitNoDevice;
  } catch (...) {
    const std::string command = argc > 1 ? argv[1] : "";
    const CommandFailure f = describe_failure(std::current_exception(), command);
    std::fprintf(stderr, "%s\n", f.message.c_str());
    return f.exit_code;
  }
}

}  // namespace kb
