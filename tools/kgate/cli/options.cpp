#include "tools/kgate/cli/options.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/result_reader.h"

namespace kb::kgate_cli {

Args expand_equals(const Args& in, const std::vector<const char*>& no_value) {
  Args out;
  for (const auto& a : in) {
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      out.push_back(a);
      continue;
    }
    std::string flag = a.substr(0, eq);
    for (const char* f : no_value)
      if (flag == f) throw UsageError(flag + " takes no value (got '" + a + "')");
    out.push_back(flag);
    out.push_back(a.substr(eq + 1));
  }
  return out;
}

const std::string& value_of(const Args& a, size_t& i) {
  if (i + 1 >= a.size()) throw UsageError(a[i] + " needs a value");
  return a[++i];
}

double parse_double(const std::string& flag, const std::string& v, double lo, double hi,
                    bool hi_open) {
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

void refuse_clashes(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  const std::string clash = output_clash(inputs, outputs);
  if (!clash.empty()) throw OutputError(clash);
}

std::vector<NamedPath> inputs_of(const std::vector<std::string>& results,
                                 const std::vector<TargetFile>& targets) {
  std::vector<NamedPath> in;
  for (const auto& r : results) in.push_back({"--results", r});
  for (const auto& t : targets) in.push_back({"--targets", t.path});
  return in;
}

void make_folder(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw OutputError("cannot make the folder " + path + ": " + ec.message());
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "kgate: warning: %s\n", w.c_str());
}

void print_history_warnings(const History& h) {
  for (const auto& w : h.warnings()) std::fprintf(stderr, "kgate: warning: %s\n", w.text().c_str());
  for (const auto& w : h.untrusted())
    std::fprintf(stderr, "kgate: warning: %s; row skipped\n", w.text().c_str());
}

void read_history(History& h, const std::vector<std::string>& files, bool warn) {
  try {
    for (const auto& p : files) h.add_file(p);
  } catch (const ResultFileError&) {
    print_history_warnings(h);
    throw;
  }
  h.finish();
  if (warn) print_history_warnings(h);
}

namespace {

// An argument where an option was expected: a file given without its flag
// gets a hint.
[[noreturn]] void unexpected(const std::string& cmd, const std::string& arg,
                             const char* file_flag) {
  if (arg.rfind("-", 0) == 0) throw UsageError(cmd + ": unknown option '" + arg + "'");
  std::error_code ec;
  bool looks_like_file = arg.find('.') != std::string::npos || arg.find('/') != std::string::npos ||
                         std::filesystem::exists(arg, ec);
  if (looks_like_file && file_flag)
    throw UsageError(cmd + ": unexpected argument '" + arg + "': files follow " + file_flag +
                     " (kgate " + cmd + " " + file_flag + " " + arg + " ...)");
  throw UsageError(cmd + ": unexpected argument '" + arg + "'");
}

}  // namespace

void parse_options(const Args& args, const Options& options, const char* file_flag) {
  std::vector<const char*> flags;
  for (const Option& o : options)
    if (!o.takes_value) flags.push_back(o.flag);
  const Args a = expand_equals(args, flags);
  for (size_t i = 1; i < a.size(); ++i) {
    const Option* o = nullptr;
    for (const Option& c : options)  // flag "": the arguments that are not options
      if (a[i] == c.flag || (!*c.flag && (a[i].rfind("-", 0) != 0 || a[i] == "-"))) o = &c;
    if (!o) unexpected(a[0], a[i], file_flag);
    o->read(a, i);
  }
}

Reader text(std::string& s) {
  return [&s](const Args& a, size_t& i) { s = value_of(a, i); };
}

Reader files(std::vector<std::string>& v) {
  return [&v](const Args& a, size_t& i) {
    const size_t before = v.size();
    while (i + 1 < a.size() && a[i + 1].rfind("--", 0) != 0) v.push_back(a[++i]);
    if (v.size() == before) throw UsageError("--results needs at least one file");
  };
}

Reader target_files(std::vector<TargetFile>& v) {
  return [&v](const Args& a, size_t& i) { v = load_target_dir(value_of(a, i)); };
}

Reader number(double& x, double lo, double hi, bool hi_open) {
  return [&x, lo, hi, hi_open](const Args& a, size_t& i) {
    const std::string& f = a[i];
    x = parse_double(f, value_of(a, i), lo, hi, hi_open);
  };
}

Option flag(const char* name, bool& b) {
  return {name, [&b](const Args&, size_t&) { b = true; }, false};
}

Options gate_options(GateOptions& opt) {
  return {{"--window", whole(opt.rule.window, 3, 500)},
          {"--min-gap", number(opt.rule.min_gap, 0, 1, true)},
          {"--confirmed-gap", number(opt.rule.confirmed_gap, 0, 1, true)},
          {"--min-history", whole(opt.rule.min_history, 3, 500)},
          {"--max-noise", number(opt.rule.max_noise, 0, 1, true)},
          {"--board-gap", number(opt.board.board_gap, 0, 1, true)},
          flag("--strict", opt.strict)};
}

void check_gate_options(const GateOptions& opt) {
  if (opt.rule.min_history > opt.rule.window)
    throw UsageError("--min-history " + std::to_string(opt.rule.min_history) +
                     " is larger than --window " + std::to_string(opt.rule.window));
}

}  // namespace kb::kgate_cli
