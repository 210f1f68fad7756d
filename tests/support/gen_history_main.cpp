// A synthetic history of nightly runs for the tests (tests/support/gen_history.h):
// the dashboard's browser test, and the timing of docs/gate.md.
//
//   gen_history --out FILE|- [--runs N] [--keys N] [--seed N] [--noise REL]
//               [--drop REL --dropped-keys N] [--arch NAME] [--format kbench|gpt_fast]
//   gen_history --from FILE... --out FILE|- [--runs N] [--attempts]
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/gen_history.h"
#include "tools/kgate/cli/options.h"

namespace kb::kgate_cli {
namespace {

GenOptions parse_gen_history(const Args& args, std::string& out) {
  const Args a = expand_equals(args, {});
  GenOptions opt;
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
  return opt;
}

int gen_history(const Args& args) {
  std::string out;
  const GenOptions opt = parse_gen_history(args, out);
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
}  // namespace kb::kgate_cli

int main(int argc, char** argv) {
  const kb::kgate_cli::Args a(argv, argv + argc);
  try {
    return kb::kgate_cli::gen_history(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gen_history: %s\n", e.what());
    return 2;
  }
}
