#include "suite/cli/args.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "core/atomic_write.h"
#include "suite/rows.h"

namespace kb::cli {

// Each command's usage line, printed under a usage error.
std::string usage_line(const std::string& command) {
  if (command == "run")
    return "kbench run [--filter REGEX] [--device N|N,M|all] [--shard I/N] [--csv FILE] "
           "[options]\n"
           "       kbench run --rerun SUSPECTS.csv [--repeat N] [--device N] [--csv FILE] "
           "[options]";
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

// The options each command takes (with `true`: followed by a value).
struct OptionSpec {
  const char* name;
  bool takes_value;
};
const std::vector<OptionSpec> kRunOptions = {
    {"--filter", true},      {"--device", true},          {"--quick", false},
    {"--csv", true},         {"--no-csv", false},         {"--json", true},
    {"--targets", true},     {"--max-noise", true},       {"--max-time", true},
    {"--seed", true},        {"--timeout", true},         {"--rerun", true},
    {"--repeat", true},      {"--inject-slowdown", true}, {"--allow-injected-slowdown", false},
    {"--buffer-sets", true}, {"--buffer-mib", true},      {"--shard", true},
    {"--run-id", true},      {"--processes", true},       {"--short-processes", true},
    {"--detail", false}};
const std::vector<OptionSpec> kListOptions = {
    {"--points", false}, {"--filter", true}, {"--shard", true}};
const std::vector<OptionSpec> kProbeOptions = {{"--device", true},
                                               {"--write", true},
                                               {"--targets", true},
                                               {"--quick", false},
                                               {"--replace", false}};
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

namespace {

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

// One option (v[*i]) into `a`; an option with a value takes the next
// word (advancing *i).
void set_option(Args& a, const std::vector<std::string>& v, size_t* i) {
  const std::string& f = v[*i];
  auto value = [&]() -> std::string {
    if (*i + 1 >= v.size()) throw UsageError(f + " needs a value");
    return v[++*i];
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
  else if (f == "--detail")
    a.engine.detail = true;
  else if (f == "--replace")
    a.replace = true;
  else if (f == "--help" || f == "-h")
    a.command = "help";
  else
    throw UsageError("unknown option '" + f + "'");
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
}

}  // namespace

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
  for (size_t i = 1; i < v.size(); ++i) set_option(a, v, &i);
  a.engine.quick = a.quick;
  check_combinations(a);
  return a;
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

}  // namespace kb::cli
