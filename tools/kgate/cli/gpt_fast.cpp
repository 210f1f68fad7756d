// kgate gpt-fast: the newest run as gpt_fast's CSV and JSON
// (tools/kgate/gpt_fast_export.h).
#include <cstdio>
#include <string>
#include <vector>

#include "core/result_reader.h"
#include "tools/kgate/cli/commands.h"
#include "tools/kgate/gpt_fast_export.h"

namespace kb::kgate_cli {

int cmd_gpt_fast(const Args& args) {
  std::vector<std::string> results;
  std::string targets_dir, csv_out, json_out;
  parse_options(args,
                {{"--results", files(results, kGptFastUsage)},
                 {"--targets", text(targets_dir)},
                 {"--csv", text(csv_out)},
                 {"--json", text(json_out)}},
                "gpt-fast", kGptFastUsage, "--results");
  if (results.empty()) throw UsageError("gpt-fast needs --results FILE...", kGptFastUsage);
  if (csv_out.empty() && json_out.empty())
    throw UsageError("gpt-fast needs --csv FILE and/or --json FILE", kGptFastUsage);
  std::vector<TargetFile> targets;
  if (!targets_dir.empty()) targets = load_target_dir(targets_dir);
  refuse_clashes(inputs_of(results, targets), {{"--csv", csv_out}, {"--json", json_out}});
  History h;
  read_history(h, results);
  print_history_warnings(h);
  GptFastExport ex = gpt_fast_rows(h, targets);
  for (const auto& n : ex.notes) std::fprintf(stderr, "kgate: gpt-fast: %s\n", n.c_str());
  if (ex.rows.empty())
    throw ResultFileError("no row of gpt_fast's (its seed-mean and model rows) in the newest run");
  if (!csv_out.empty()) atomic_write(csv_out, gpt_fast_csv(ex.rows));
  if (!json_out.empty()) atomic_write(json_out, gpt_fast_json(ex.rows));
  std::printf("kgate gpt-fast: %zu row(s) written%s%s%s%s\n", ex.rows.size(),
              csv_out.empty() ? "" : " to ", csv_out.c_str(),
              json_out.empty() ? "" : (csv_out.empty() ? " to " : " and "), json_out.c_str());
  return 0;
}

}  // namespace kb::kgate_cli
