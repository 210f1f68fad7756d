// kgate noise: run-to-run noise per key over several runs (tools/noise-report.sh).
#include "tools/kgate/noise.h"

#include <cstdio>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

int cmd_noise(const Args& args) {
  std::vector<std::string> results;
  std::string markdown, csv_out;
  parse_options(
      args,
      {{"--results", files(results)}, {"--markdown", text(markdown)}, {"--csv", text(csv_out)}},
      "--results");
  if (results.empty()) throw UsageError("noise needs --results FILE...");
  refuse_clashes(inputs_of(results, {}), {{"--markdown", markdown}, {"--csv", csv_out}});
  History h;
  read_history(h, results, true);
  NoiseReport rep = noise_report(h);
  std::fputs(noise_console(rep).c_str(), stdout);
  std::fflush(stdout);
  if (!markdown.empty()) atomic_write(markdown, noise_markdown(rep));
  if (!csv_out.empty()) atomic_write(csv_out, noise_csv(rep));
  return 0;
}

}  // namespace kb::kgate_cli
