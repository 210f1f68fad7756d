// kgate siblings: the sibling check of the newest run; exit 1 when a GPU
// is named, so that a bring-up script can stop on it.
#include "tools/kgate/siblings.h"

#include <cstdio>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

int cmd_siblings(const Args& args) {
  std::vector<std::string> results;
  std::string markdown;
  SiblingOptions opt;
  parse_options(args,
                {{"--results", files(results)},
                 {"--threshold", number(opt.threshold, 0.001, 0.9)},
                 {"--min-points", whole(opt.min_points, 1, 100000)},
                 {"--markdown", text(markdown)}},
                "--results");
  if (results.empty()) throw UsageError("siblings needs --results FILE...");
  refuse_clashes(inputs_of(results, {}), {{"--markdown", markdown}});
  History h;
  read_history(h, results, true);
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
