// kgate compare: two runs side by side, each key's change against its noise.
#include "tools/kgate/compare.h"

#include <cstdio>
#include <string>
#include <vector>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

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
  if (!markdown.empty()) atomic_write(markdown, compare_markdown(rep));
  return 0;
}

}  // namespace kb::kgate_cli
