#include "suite/cli/args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "core/atomic_write.h"
#include "core/attempts.h"
#include "suite/rows.h"

namespace kb::cli {

std::string usage_line(const std::string& command) {
  if (command == "run")
    return "kbench run [--filter REGEX] [--device N|N,M|all] [--shard I/N] [--csv FILE] "
           "[options]\n"
           "       kbench run --rerun SUSPECTS.csv [--repeat N] [--filter REGEX] [--device N] "
           "[--csv FILE] [options]";
  if (command == "probe")
    return "kbench probe [--device N] [--write FILE] [--targets DIR] [--quick] [--replace]";
  if (command == "tune")
    return "kbench tune [--filter REGEX] [--device N] [--targets DIR] [--write FILE] [--reps N] "
           "[--candidates N]\n"
           "       kbench tune gemv [--device N] [--targets DIR] [--write FILE] [--reps N]";
  if (command == "list") return "kbench list [--points [--filter REGEX] [--shard I/N]]";
  return "kbench list | run [options] | probe [options] | tune [options] | --help";
}

namespace {

// --run-id: what a scheduler gives every task of one job (Slurm's array job
// id, a Kubernetes Job's name), so that the shards' rows are one run. No
// '/': that would read as an attempt (<run>/<N>, docs/csv-schema.md).
std::string check_run_id(const std::string& id) {
  if (id.find('/') != std::string::npos || !well_formed_run_id(id))
    throw UsageError("--run-id needs 1 to 128 characters of A-Z a-z 0-9 - _ . : + (no '/'), got '" +
                     id + "'");
  return id;
}

ShardSpec shard_of(const std::string& v) {
  try {
    return parse_shard(v);
  } catch (const ShardError& e) {
    throw UsageError(e.what());
  }
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
    // inf would travel to the workers as JSON null: every row failed.
    if (used != v.size() || !(d > 0) || !std::isfinite(d)) throw std::invalid_argument(v);
    return d;
  } catch (const std::exception&) {
    throw UsageError(flag + " needs a finite number > 0, got '" + v + "'");
  }
}

// --seed: the whole number given, not a double's rounding of it (1.5, 1e30
// and 2^53 + 1 would seed another run than the one asked for).
uint64_t parse_seed(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || *end != '\0' ||
      errno == ERANGE || n == 0)
    throw UsageError(flag + " needs a whole number from 1 to 18446744073709551615, got '" + v +
                     "'");
  return n;
}

using Text = const std::string&;

// What an option's setter is given: the command line so far, the flag as
// written and its value.
struct Given {
  Args& a;
  Text flag, value;
  double number() const { return parse_double(flag, value); }
  int count(long max = 1000) const { return parse_count(flag, value, max); }
  // A file or folder: `--rerun "$EMPTY"` would measure the whole suite as a
  // new run, `--json=` write nothing.
  Text path() const {
    if (value.empty()) throw UsageError(flag + " needs a file or folder name, got ''");
    return value;
  }
};

// Every option: the commands that take it, whether a value follows, and
// what it sets.
struct Option {
  const char* name;
  std::vector<std::string> commands;
  bool takes_value;
  void (*set)(Given g);
};
const Option kOptions[] = {
    {"--filter", {"run", "list", "tune"}, true, [](Given g) { g.a.filter = g.value; }},
    {"--device", {"run", "probe", "tune"}, true, [](Given g) { g.a.device = g.value; }},
    {"--quick", {"run", "probe"}, false, [](Given g) { g.a.quick = true; }},
    {"--csv",
     {"run"},
     true,
     [](Given g) {
       g.a.csv = g.path();
       g.a.csv_given = true;
     }},
    {"--no-csv", {"run"}, false, [](Given g) { g.a.no_csv = true; }},
    {"--json", {"run"}, true, [](Given g) { g.a.json = g.path(); }},
    {"--targets", {"run", "probe", "tune"}, true, [](Given g) { g.a.targets = g.path(); }},
    {"--write", {"probe", "tune"}, true, [](Given g) { g.a.write = g.path(); }},
    {"--max-noise", {"run"}, true, [](Given g) { g.a.engine.max_noise = g.number(); }},
    {"--max-time", {"run"}, true, [](Given g) { g.a.engine.max_time_s = g.number(); }},
    {"--seed", {"run"}, true, [](Given g) { g.a.engine.seed = parse_seed(g.flag, g.value); }},
    {"--timeout", {"run"}, true, [](Given g) { g.a.timeout_s = g.number(); }},
    {"--rerun", {"run"}, true, [](Given g) { g.a.rerun = g.path(); }},
    {"--repeat", {"run"}, true, [](Given g) { g.a.repeat = g.count(); }},
    {"--inject-slowdown", {"run"}, true, [](Given g) { g.a.inject = g.value; }},
    {"--allow-injected-slowdown", {"run"}, false, [](Given g) { g.a.allow_inject = true; }},
    {"--buffer-sets", {"run"}, true, [](Given g) { g.a.engine.max_buffer_sets = g.count(); }},
    {"--buffer-mib",
     {"run"},
     true,
     [](Given g) { g.a.engine.sampled_bytes_goal = size_t(g.count(1 << 20)) << 20; }},
    {"--shard", {"run", "list"}, true, [](Given g) { g.a.shard = shard_of(g.value); }},
    {"--run-id", {"run"}, true, [](Given g) { g.a.run_id = check_run_id(g.value); }},
    {"--processes", {"run"}, true, [](Given g) { g.a.processes = g.count(kMaxProcesses); }},
    {"--short-processes",
     {"run"},
     true,
     [](Given g) { g.a.short_processes = g.count(kMaxProcesses); }},
    {"--detail", {"run"}, false, [](Given g) { g.a.engine.detail = true; }},
    {"--points", {"list"}, false, [](Given g) { g.a.points = true; }},
    {"--replace", {"probe"}, false, [](Given g) { g.a.replace = true; }},
    {"--reps", {"tune"}, true, [](Given g) { g.a.reps = g.count(); }},
    {"--candidates", {"tune"}, true, [](Given g) { g.a.candidates = g.count(); }},
};

const Option* find_option(const std::string& name) {
  for (const Option& o : kOptions)
    if (name == o.name) return &o;
  return nullptr;
}

// The options checked against the command (`--opt=value` is `--opt value`);
// a file given without its flag gets a hint.
void set_options(Args& a, const std::vector<std::string>& in) {
  const std::string command = a.command;  // --help changes a.command
  const bool judged = command == "run" || command == "probe" || command == "tune" ||
                      command == "list";  // help, version, unknown: judged later
  for (size_t i = 0; i < in.size(); ++i) {
    std::string f = in[i];
    if (f == "--help" || f == "-h") {
      a.command = "help";
      continue;
    }
    std::optional<std::string> inline_value;
    if (size_t eq = f.find('='); f.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = f.substr(eq + 1);
      f = f.substr(0, eq);
    }
    if (f == "-d") f = "--device";  // nvbench's short form
    const Option* o = find_option(f);
    if (judged && f.rfind("-", 0) != 0) {
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
    if (!o) throw UsageError("unknown option '" + f + "'");
    if (judged && std::find(o->commands.begin(), o->commands.end(), command) == o->commands.end())
      throw UsageError(command + " does not take " + f);
    if (judged && !o->takes_value && inline_value)
      throw UsageError(f + " takes no value (got '" + in[i] + "')");
    if (o->takes_value && !inline_value && i + 1 >= in.size())
      throw UsageError(f + " needs a value");
    o->set({a, f, inline_value ? *inline_value : o->takes_value ? in[++i] : ""});
  }
}

// The combinations refused before anything runs.
void check_combinations(const Args& a) {
  if (!a.inject.empty() && !a.allow_inject)
    throw UsageError(
        "--inject-slowdown makes measured work slower on purpose, to validate the "
        "gate; it needs --allow-injected-slowdown as well (never in a nightly)");
  if (!a.inject.empty()) parse_injection(a.inject);  // refuse a bad spec before anything runs
  if (a.allow_inject && a.inject.empty())
    throw UsageError("--allow-injected-slowdown without --inject-slowdown REGEX=PCT");
  if (a.no_csv && a.csv_given)
    throw UsageError("--no-csv and --csv " + a.csv +
                     " contradict each other: give --csv FILE to append rows, or --no-csv");
  if (a.repeat > 0 && a.rerun.empty())
    throw UsageError("--repeat N needs --rerun FILE (the suspects to measure N times)");
  if (!a.rerun.empty() && !a.shard.whole())
    throw UsageError("--rerun measures the suspects it is given: it takes no --shard");
  if (!a.rerun.empty() && !a.run_id.empty())
    throw UsageError("--rerun appends attempts of the suspects' own run: it takes no --run-id");
  // An output that is an input or another output would destroy it.
  std::vector<NamedPath> outputs = {{"--json", a.json}};
  if (a.command == "run" && !a.no_csv) outputs.insert(outputs.begin(), {"--csv", a.csv});
  if (a.command == "tune") outputs.push_back({"--write", a.write});
  const std::string clash = output_clash({{"--rerun", a.rerun}}, outputs);
  if (!clash.empty()) throw UsageError(clash);
}

}  // namespace

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

Args parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> raw(argv + 1, argv + argc);
  if (raw.empty()) throw UsageError("no command given");
  a.command = raw[0];
  size_t first = 1;
  if (a.command == "tune" && raw.size() > 1 && raw[1] == "gemv") {  // kbench tune gemv
    a.tune_gemv = true;
    first = 2;
  }
  set_options(a, std::vector<std::string>(raw.begin() + first, raw.end()));
  a.engine.quick = a.quick;
  check_combinations(a);
  return a;
}

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

}  // namespace kb::cli
