// kgate selftest-table: the gate's self-test on a GPU as a table
// (tools/gate-selftest.sh; docs/gate.md "The self-test on a GPU").
#include "tools/kgate/selftest.h"

#include <cstdio>
#include <string>
#include <vector>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

int cmd_selftest_table(const Args& args) {
  const Args a = expand_equals(args, {}, kSelftestUsage);
  SelftestInput in;
  GateOptions opt;
  std::string targets_dir, markdown;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--aa") {
      in.aa = value_of(a, i);
    } else if (f == "--drop") {
      double pct = parse_double(f, value_of(a, i), 0, 100);
      in.drops.emplace_back(pct, value_of(a, i));
    } else if (f == "--targets") {
      targets_dir = value_of(a, i);
    } else if (f == "--markdown") {
      markdown = value_of(a, i);
    } else {
      unexpected("selftest-table", f, kSelftestUsage, "--aa");
    }
  }
  if (in.aa.empty()) throw UsageError("selftest-table needs --aa FILE", kSelftestUsage);
  std::vector<NamedPath> inputs = {{"--aa", in.aa}};
  for (const auto& d : in.drops) inputs.push_back({"--drop", d.second});
  refuse_clashes(inputs, {{"--markdown", markdown}});
  if (!targets_dir.empty()) opt.targets = load_target_dir(targets_dir);
  std::string md = selftest_markdown(in, opt);
  std::fputs(md.c_str(), stdout);
  if (!markdown.empty()) atomic_write(markdown, md);
  return 0;
}

}  // namespace kb::kgate_cli
