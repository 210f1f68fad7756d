// kgate dashboard: the history of every key as one self-contained HTML page.
#include "tools/kgate/dashboard.h"

#include <cstdio>
#include <filesystem>

#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

namespace {

struct DashboardPlan {
  DashboardOptions opt;
  std::vector<std::string> results;
  std::string out;
};

DashboardPlan parse_dashboard(const Args& args) {
  DashboardPlan p;
  GateOptions& gate = p.opt.gate;
  Options o = gate_options(gate);
  o.insert(o.begin(), {{"--results", files(p.results)},
                       {"--targets", target_files(gate.targets)},
                       {"--out", text(p.out)},
                       {"--title", text(p.opt.title)}});
  parse_options(args, o, "--results");
  if (p.results.empty()) throw UsageError("dashboard needs --results FILE...");
  if (p.out.empty()) throw UsageError("dashboard needs --out DIR (or --out FILE.html)");
  check_gate_options(gate);
  return p;
}

}  // namespace

int cmd_dashboard(const Args& args) {
  DashboardPlan p = parse_dashboard(args);
  const std::string& out = p.out;
  // A folder (made if need be) gets index.html; a name ending in .html is the file.
  const std::string ext = std::filesystem::path(out).extension().string();
  const bool to_folder = ext != ".html" && ext != ".htm";
  const std::string path = to_folder ? (std::filesystem::path(out) / "index.html").string() : out;
  refuse_clashes(inputs_of(p.results, p.opt.gate.targets), {{"--out", path}});

  History h;
  read_history(h, p.results);
  DashboardData d = build_dashboard(h, p.opt);
  print_warnings(d.warnings);

  if (to_folder) make_folder(out);
  std::string html = dashboard_html(d);
  atomic_write(path, html);
  std::printf("kgate dashboard: %s (%zu runs, %zu keys, %zu rows; %.1f MB)\n", path.c_str(),
              d.runs.size(), d.keys.size(), d.rows, static_cast<double>(html.size()) / 1e6);
  for (const auto& n : d.notes) std::printf("  missing: %s\n", n.c_str());
  return 0;
}

}  // namespace kb::kgate_cli
