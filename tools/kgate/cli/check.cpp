// kgate check: the nightly gate (DESIGN.md "The gate's rules").
#include <algorithm>
#include <cstdio>

#include "core/record.h"
#include "reports/gate_result.h"
#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

namespace {

struct CheckPlan {
  GateOptions gate;
  std::vector<std::string> results;
  std::string markdown, junit, html, suspects, dashboard;
  double max_suspects = kMaxSuspectShare;
  bool all = false;
};

CheckPlan parse_check(const Args& args) {
  CheckPlan p;
  GateOptions& opt = p.gate;
  Options o = gate_options(opt);
  o.insert(o.begin(), {{"--results", files(p.results)},
                       flag("--all", p.all),
                       {"--targets", target_files(opt.targets)},
                       {"--suspects", text(p.suspects)},
                       {"--max-suspects", number(p.max_suspects, 0.01, 1)},
                       {"--shared-noise", number(opt.rule.shared_noise, 0, 1)},
                       {"--markdown", text(p.markdown)},
                       {"--junit", text(p.junit)},
                       {"--html", text(p.html)},
                       {"--dashboard", text(p.dashboard)}});
  parse_options(args, o, "--results");
  if (p.results.empty()) throw UsageError("check needs --results FILE...");
  check_gate_options(opt);
  return p;
}

// The keys to re-measure (rule 4), with how many the cap left out.
void write_suspects(const GateReport& rep, const std::string& path, double max_suspects) {
  size_t capped = 0;
  std::string text = suspects_csv(rep, &capped, max_suspects);
  atomic_write(path, text);
  size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) - 1;
  std::printf("suspects: %zu key(s) to re-measure written to %s", n, path.c_str());
  if (capped)
    std::printf(" (%zu more left out: at most %.0f%% of the keys, --max-suspects)", capped,
                max_suspects * 100);
  std::printf("\n");
}

}  // namespace

int cmd_check(const Args& args) {
  CheckPlan p = parse_check(args);
  refuse_clashes(inputs_of(p.results, p.gate.targets), {{"--markdown", p.markdown},
                                                        {"--junit", p.junit},
                                                        {"--html", p.html},
                                                        {"--suspects", p.suspects}});

  History h;
  read_history(h, p.results);
  GateReport rep = run_gate(h, p.gate);
  rep.host = host_name();
  rep.generated_at = utc_now();
  rep.dashboard = p.dashboard;
  order_worst_first(rep);
  print_warnings(rep.warnings);
  std::fputs(gate_console(rep, p.all).c_str(), stdout);
  std::fflush(stdout);
  if (!p.markdown.empty()) atomic_write(p.markdown, gate_markdown(rep));
  if (!p.junit.empty()) atomic_write(p.junit, gate_junit(rep));
  if (!p.html.empty()) atomic_write(p.html, gate_html(rep));
  if (!p.suspects.empty()) write_suspects(rep, p.suspects, p.max_suspects);
  return rep.exit_code();
}

}  // namespace kb::kgate_cli
