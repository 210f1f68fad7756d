// kgate_main: picks the command, and turns every error into its message and
// exit code 2 (a regression's exit 1 is the command's own).
#include <cstdio>
#include <filesystem>

#include "kgate_help_text.h"
#include "tools/kgate/bringup.h"
#include "tools/kgate/cli/commands.h"

namespace kb {

namespace {

using namespace kgate_cli;

constexpr const char* kTopUsage =
    "kgate check|compare|dashboard|noise|siblings|gpt-fast|bringup|selftest-table [options]   "
    "(kgate --help)";

struct Command {
  const char* name;
  int (*run)(const Args&);
};
constexpr Command kCommands[] = {
    {"check", cmd_check},         {"compare", cmd_compare},
    {"dashboard", cmd_dashboard}, {"noise", cmd_noise},
    {"siblings", cmd_siblings},   {"gpt-fast", cmd_gpt_fast},
    {"bringup", cmd_bringup},     {"selftest-table", cmd_selftest_table},
};

// A command's usage line: its line of the help text (docs/kgate-help.txt).
std::string usage_for(const Args& a) {
  const std::string help = kKgateHelp;
  for (const Command& c : kCommands) {
    const size_t at = help.find(std::string("\n  kgate ") + c.name + " ");
    if (!a.empty() && a[0] == c.name && at != std::string::npos)
      return help.substr(at + 3, help.find('\n', at + 1) - at - 3);
  }
  return kTopUsage;
}

int dispatch(const Args& a) {
  if (a.empty()) throw UsageError("no command given");
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
        std::printf("usage: %s\n(kgate --help describes every option)\n", usage_for(a).c_str());
        return 0;
      }
    return c.run(a);
  }
  std::error_code ec;
  if (std::filesystem::exists(cmd, ec) || cmd.find(".csv") != std::string::npos)
    throw UsageError("'" + cmd +
                     "' is not a command; to gate a results file: kgate check --results " + cmd);
  throw UsageError("unknown command '" + cmd + "'");
}

}  // namespace

int kgate_main(int argc, char** argv) {
  Args a(argv + 1, argv + argc);
  try {
    return dispatch(a);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kgate: %s\nusage: %s\n(kgate --help lists the commands and options)\n",
                 e.what(), usage_for(a).c_str());
  } catch (const BringupError& e) {
    std::fprintf(stderr, "kgate: bringup: %s; nothing was written\n", e.what());
  } catch (const std::exception& e) {  // unreadable input, bad target file, failed output
    std::fprintf(stderr, "kgate: error: %s\n", e.what());
  }
  return 2;
}

}  // namespace kb
