// kgate siblings: the sibling check of the newest run (bring-up of a host
// with several GPUs): each GPU against the median of its siblings. Exit 1
// when a GPU is named, so that a bring-up script can stop on it.
#include "tools/kgate/siblings.h"

#include <cstdio>
#include <string>
#include <vector>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

int cmd_siblings(const Args& args) {
  const Args a = expand_equals(args, {}, kSiblingsUsage);
  std::vector<std::string> results;
  std::string markdown;
  SiblingOptions opt;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--results") {
      take_files(a, i, results, kSiblingsUsage);
    } else if (f == "--threshold") {
      opt.threshold = parse_double(f, value_of(a, i), 0.001, 0.9);
    } else if (f == "--min-points" || f == "--min-rows") {  // --min-rows: its first name
      opt.min_points = static_cast<size_t>(parse_int(f, value_of(a, i), 1, 100000));
    } else if (f == "--markdown") {
      markdown = value_of(a, i);
    } else {
      unexpected("siblings", f, kSiblingsUsage, "--results");
    }
  }
  if (results.empty()) throw UsageError("siblings needs --results FILE...", kSiblingsUsage);
  refuse_clashes(inputs_of(results, {}), {{"--markdown", markdown}});
  History h;
  read_history(h, results);
  print_history_warnings(h);
  const auto reps = sibling_check(h, opt);
  std::fputs(sibling_text(reps, false).c_str(), stdout);
  std::fflush(stdout);
  if (!markdown.empty()) atomic_write(markdown, sibling_text(reps, true));
  for (const auto& r : reps)
    for (const auto& g : r.gpus)
      if (g.named) return 1;
  return 0;
}

}  // namespace kb::kgate_cli
