// kgate selftest-table: the tables of tools/gate-selftest.sh (docs/gate.md
// "The self-test on a GPU").
#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "core/csv_reader.h"
#include "reports/format.h"
#include "tools/kgate/cli/commands.h"
#include "tools/kgate/noise.h"

namespace kb::kgate_cli {

namespace {

// Where each record of the text begins, by the line History gives its row:
// the CSV reader's line, which LF, CRLF or a lone CR ends.
std::map<size_t, size_t> record_starts(const std::string& text) {
  std::map<size_t, size_t> at;
  CsvReader reader(text);
  std::vector<std::string_view> fields;
  while (reader.next(fields)) at[reader.line()] = reader.offset();
  return at;
}

std::string selftest_markdown(const std::string& aa_file,
                              const std::vector<std::pair<double, std::string>>& drops,
                              const GateOptions& opt) {
  const std::string text = read_file_text(aa_file);
  History aa;
  aa.add_text(text, aa_file);
  aa.finish();
  // Where each run's rows begin in the file: the history of night k is
  // everything before night k+1 (its re-measurements included).
  const std::map<size_t, size_t> starts = record_starts(text);
  std::vector<size_t> first_line(aa.runs().size(), SIZE_MAX);
  std::vector<size_t> remeasured(aa.runs().size(), 0);
  for (const auto& o : aa.observations()) {
    first_line[o.run] = std::min<size_t>(first_line[o.run], o.line);
    remeasured[o.run] += o.attempt == 2;
  }
  std::vector<std::vector<std::string>> nights;
  int gated = 0, failing = 0;
  size_t keys = 0;
  for (size_t k = 0; k < aa.runs().size(); ++k) {
    const auto next = k + 1 < aa.runs().size() ? starts.find(first_line[k + 1]) : starts.end();
    const size_t end = next != starts.end() ? next->second : text.size();
    History h;
    h.add_text(text.substr(0, end), aa_file);
    h.finish();
    GateReport r = run_gate(h, opt);
    keys = std::max(keys, r.keys.size());
    std::string fails;
    for (const auto& g : r.keys)
      if (g.status == GateStatus::fail) fails += (fails.empty() ? "" : "; ") + key_label(g);
    bool history_gated = static_cast<int>(k) >= opt.rule.min_history;
    gated += history_gated;
    failing += r.exit_code() != 0 && history_gated;
    nights.push_back({std::to_string(k + 1), aa.runs()[k].label,
                      std::string(r.exit_code() ? "FAIL" : "pass") +
                          (history_gated ? "" : " (too little history)"),
                      std::to_string(remeasured[k]), fails.empty() ? "-" : fails});
  }
  std::string out =
      "### A/A: " + std::to_string(aa.runs().size()) + " nightly runs\n\n" +
      markdown_table({"night", "run", "verdict", "keys re-measured", "failing keys"}, "", nights);
  out += "\nA/A false failures: **" + std::to_string(failing) + " of " + std::to_string(gated) +
         "** nights gated on history (nights with at least " +
         std::to_string(opt.rule.min_history) + " earlier runs); " + std::to_string(keys) +
         " keys.\n\n";

  // Noise classes from the A/A history.
  NoiseReport noise = noise_report(aa);
  std::map<std::string, std::string> cls;
  for (const auto& n : noise.keys) cls[key_id(n, n.device)] = noise_class(n.noise);
  const std::vector<std::string> classes = {"<=0.5%", "<=1%", "<=3%", ">3%", "all"};
  std::map<std::string, int> in_class;
  for (const auto& [k, c] : cls) ++in_class[c];

  out +=
      "### Injected slowdowns: keys failed on the first night, by A/A noise\n\n"
      "(keys whose rows carry `inject=` and that the history rule judged; the class sizes count "
      "every key of the A/A history)\n\n";
  std::vector<std::string> head = {"drop"};
  for (const auto& c : classes)
    head.push_back(c == "all" ? c : "noise " + c + " (" + std::to_string(in_class[c]) + " keys)");
  std::vector<std::vector<std::string>> rows;
  std::string young_note;  // the drops' keys the history rule could not judge yet
  for (const auto& [pct, file] : drops) {
    History h;
    h.add_file(file);
    h.finish();
    GateReport r = run_gate(h, opt);
    std::map<std::string, int> judged, caught;
    int young = 0;
    for (const auto& g : r.keys) {
      if (g.status == GateStatus::skipped || g.rule == "missing") continue;
      // Only the keys the injection slowed (their rows say inject=).
      if (g.variant.find("inject=") == std::string::npos) continue;
      auto it = cls.find(key_id(g, g.device));
      if (it == cls.end()) continue;
      // A key of fewer runs than the history rule needs is no miss of the
      // rule's, nor a catch (its target may fail it): it is counted apart.
      if (g.young) {
        ++young;
        continue;
      }
      for (const std::string& c : {it->second, std::string("all")}) {
        ++judged[c];
        caught[c] += g.status == GateStatus::fail;
      }
    }
    std::vector<std::string>& row = rows.emplace_back(1, format_double("%g%%", pct));
    for (const auto& c : classes)
      row.push_back(judged[c]
                        ? format_double("%.0f%%", 100.0 * caught[c] / judged[c]) + " (" +
                              std::to_string(caught[c]) + "/" + std::to_string(judged[c]) + ")"
                        : "-");
    if (young)
      young_note += (young_note.empty() ? "" : ", ") + format_double("%g%%", pct) + " " +
                    std::to_string(young);
  }
  out += markdown_table(head, "", rows);
  if (!young_note.empty())
    out += "\nNot counted, too little history for the history rule (fewer than " +
           std::to_string(opt.rule.min_history) + " earlier runs): " + young_note + " keys.\n";
  return out;
}

}  // namespace

int cmd_selftest_table(const Args& args) {
  std::string aa, markdown;
  std::vector<std::pair<double, std::string>> drops;
  GateOptions opt;
  const Reader drop = [&](const Args& a, size_t& i) {
    const std::string& f = a[i];
    const double pct = parse_double(f, value_of(a, i), 0, 100);
    drops.emplace_back(pct, value_of(a, i));
  };
  parse_options(args,
                {{"--aa", text(aa)},
                 {"--drop", drop},
                 {"--targets", target_files(opt.targets)},
                 {"--markdown", text(markdown)}},
                "--aa");
  if (aa.empty()) throw UsageError("selftest-table needs --aa FILE");
  std::vector<NamedPath> inputs = {{"--aa", aa}};
  for (const auto& d : drops) inputs.push_back({"--drop", d.second});
  refuse_clashes(inputs, {{"--markdown", markdown}});
  const std::string md = selftest_markdown(aa, drops, opt);
  std::fputs(md.c_str(), stdout);
  if (!markdown.empty()) atomic_write(markdown, md);
  return 0;
}

}  // namespace kb::kgate_cli
