// kgate compare: two runs side by side, each key's change against its noise.
#include "tools/kgate/compare.h"

#include <cstdio>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

int cmd_compare(const Args& args) {
  CompareOptions opt;
  std::vector<std::string> files;
  std::string markdown;
  parse_options(args,
                {{"--min-change", number(opt.min_change, 0, 1, true)},
                 {"--noise", number(opt.default_noise, 0, 1, true)},
                 {"--markdown", text(markdown)},
                 {"", [&](const Args& a, size_t& i) { files.push_back(a[i]); }}},
                nullptr);
  if (files.size() != 2)
    throw UsageError("compare needs two files, BASE.csv and NEW.csv (got " +
                     std::to_string(files.size()) + ")");
  refuse_clashes({{"BASE", files[0]}, {"NEW", files[1]}}, {{"--markdown", markdown}});
  History base, next;
  read_history(base, {files[0]});
  read_history(next, {files[1]});
  CompareReport rep = compare_runs(base, next, opt);
  print_warnings(rep.warnings);
  std::fputs(compare_console(rep).c_str(), stdout);
  std::fflush(stdout);
  if (!markdown.empty()) atomic_write(markdown, compare_markdown(rep));
  return 0;
}

}  // namespace kb::kgate_cli
