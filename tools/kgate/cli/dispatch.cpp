// kgate_main: picks the command, and turns every error into its message and
// exit code 2 (a regression's exit 1 is the command's own).
#include <cstdio>
#include <filesystem>
#include <string>

#include "kgate_help_text.h"
#include "tools/kgate/bringup.h"
#include "tools/kgate/cli/commands.h"

namespace kb {

namespace {

using namespace kgate_cli;

struct Command {
  const char* name;
  int (*run)(const Args&);
  const char* usage;
};
constexpr Command kCommands[] = {
    {"check", cmd_check, kCheckUsage},
    {"compare", cmd_compare, kCompareUsage},
    {"dashboard", cmd_dashboard, kDashboardUsage},
    {"noise", cmd_noise, kNoiseUsage},
    {"siblings", cmd_siblings, kSiblingsUsage},
    {"gpt-fast", cmd_gpt_fast, kGptFastUsage},
    {"bringup", cmd_bringup, kBringupUsage},
    {"selftest-table", cmd_selftest_table, kSelftestUsage},
};

int dispatch(const Args& a) {
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
  for (const Command& c : kCommands) {
    if (cmd != c.name) continue;
    for (const std::string& arg : a)
      if (arg == "--help" || arg == "-h") {
        std::printf("usage: %s\n(kgate --help describes every option)\n", c.usage);
        return 0;
      }
    return c.run(a);
  }
  std::error_code ec;
  if (std::filesystem::exists(cmd, ec) || cmd.find(".csv") != std::string::npos)
    throw UsageError(
        "'" + cmd + "' is not a command; to gate a results file: kgate check --results " + cmd,
        kTopUsage);
  throw UsageError("unknown command '" + cmd + "'", kTopUsage);
}

// The usage line of the command named first (an error thrown without one,
// such as a flag's missing value, still shows it).
std::string usage_for(const UsageError& e, const Args& a) {
  if (!e.usage.empty()) return e.usage;
  for (const Command& c : kCommands)
    if (!a.empty() && a[0] == c.name) return c.usage;
  return kTopUsage;
}

}  // namespace

int kgate_main(int argc, char** argv) {
  Args a(argv + 1, argv + argc);
  try {
    return dispatch(a);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kgate: %s\nusage: %s\n(kgate --help lists the commands and options)\n",
                 e.what(), usage_for(e, a).c_str());
  } catch (const BringupError& e) {
    std::fprintf(stderr, "kgate: bringup: %s; nothing was written\n", e.what());
  } catch (const std::exception& e) {  // unreadable input, bad target file, failed output
    std::fprintf(stderr, "kgate: error: %s\n", e.what());
  }
  return 2;
}

}  // namespace kb
