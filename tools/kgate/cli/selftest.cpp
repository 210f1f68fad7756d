// kgate selftest-table: the gate's self-test on a GPU as a table
// (tools/gate-selftest.sh; docs/gate.md "The self-test on a GPU").
#include "tools/kgate/selftest.h"

#include <cstdio>
#include <string>
#include <vector>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

int cmd_selftest_table(const Args& args) {
  SelftestInput in;
  GateOptions opt;
  std::string targets_dir, markdown;
  const Reader drop = [&](const Args& a, size_t& i) {
    const std::string& f = a[i];
    const double pct = parse_double(f, value_of(a, i), 0, 100);
    in.drops.emplace_back(pct, value_of(a, i));
  };
  parse_options(args,
                {{"--aa", text(in.aa)},
                 {"--drop", drop},
                 {"--targets", text(targets_dir)},
                 {"--markdown", text(markdown)}},
                "selftest-table", kSelftestUsage, "--aa");
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
