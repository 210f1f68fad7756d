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
  const char* usage;
};
constexpr Command kCommands[] = {
    {"check", cmd_check,
     "kgate check --results FILE... [--targets DIR] [--markdown FILE] [--junit FILE] "
     "[--html FILE] [--suspects FILE] [--all] [options]"},
    {"compare", cmd_compare,
     "kgate compare BASE.csv NEW.csv [--min-change REL] [--noise REL] [--markdown FILE]"},
    {"dashboard", cmd_dashboard,
     "kgate dashboard --results FILE... --out DIR|FILE.html [--targets DIR] [--title TEXT] "
     "[options]"},
    {"noise", cmd_noise, "kgate noise --results FILE... [--markdown FILE] [--csv FILE]"},
    {"siblings", cmd_siblings,
     "kgate siblings --results FILE... [--threshold REL] [--min-points N] [--markdown FILE]"},
    {"gpt-fast", cmd_gpt_fast,
     "kgate gpt-fast --results FILE... --csv FILE [--json FILE] [--targets DIR]"},
    {"bringup", cmd_bringup,
     "kgate bringup --results FILE... --out DIR [--reference GPU|FILE.csv] [--reference-gpu "
     "NAME] [--gpu NAME] [--targets DIR] [--datasheets FILE] [--probe FILE] [--threshold REL]"},
    {"selftest-table", cmd_selftest_table,
     "kgate selftest-table --aa FILE [--drop PCT FILE]... [--targets DIR] [--markdown FILE]"},
};

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
        std::printf("usage: %s\n(kgate --help describes every option)\n", c.usage);
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

const char* usage_for(const Args& a) {
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
                 e.what(), usage_for(a));
  } catch (const BringupError& e) {
    std::fprintf(stderr, "kgate: bringup: %s; nothing was written\n", e.what());
  } catch (const std::exception& e) {  // unreadable input, bad target file, failed output
    std::fprintf(stderr, "kgate: error: %s\n", e.what());
  }
  return 2;
}

}  // namespace kb
