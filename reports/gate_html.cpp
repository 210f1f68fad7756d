#include <algorithm>
#include <cmath>
#include <cstdio>

#include "reports/format.h"
#include "reports/gate_result.h"

namespace kb {

namespace {

std::string esc(const std::string& s) { return escape_markup(s, Markup::html); }

std::string num(double v) { return format_double("%.1f", v); }

const char* css_class(GateStatus s) {
  static const char* const names[] = {"fail", "inc", "pass", "skip"};
  return names[static_cast<int>(s)];
}

// The key's history as an inline SVG: earlier runs as a line of points
// (hover for run and value), the baseline dashed, the target dotted, the
// newest run as a dot in the colour of its verdict.
std::string sparkline(const GateKeyResult& k) {
  const double W = 260, H = 46, pad = 4;
  std::vector<double> v = k.history;
  if (k.value) v.push_back(*k.value);
  if (v.empty()) return "";
  double lo = *std::min_element(v.begin(), v.end());
  double hi = *std::max_element(v.begin(), v.end());
  for (const auto& extra : {k.baseline, k.target})
    if (extra && *extra > 0 && *extra<2 * hi&& * extra> lo / 2) {
      lo = std::min(lo, *extra);
      hi = std::max(hi, *extra);
    }
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) {
    lo -= 1;
    hi += 1;
  }
  const size_t n = v.size();
  auto x = [&](size_t i) { return n == 1 ? W / 2 : pad + (W - 2 * pad) * i / (n - 1); };
  auto y = [&](double val) { return H - pad - (H - 2 * pad) * (val - lo) / (hi - lo); };
  std::string s = "<svg class=\"spark\" width=\"" + num(W) + "\" height=\"" + num(H) +
                  "\" viewBox=\"0 0 " + num(W) + " " + num(H) + "\" role=\"img\">";
  if (k.target && *k.target >= lo && *k.target <= hi)
    s += "<line class=\"tgt\" x1=\"0\" x2=\"" + num(W) + "\" y1=\"" + num(y(*k.target)) +
         "\" y2=\"" + num(y(*k.target)) + "\"><title>target " + show_value(*k.target) +
         "</title></line>";
  if (k.baseline)
    s += "<line class=\"base\" x1=\"0\" x2=\"" + num(W) + "\" y1=\"" + num(y(*k.baseline)) +
         "\" y2=\"" + num(y(*k.baseline)) + "\"><title>baseline (median of " +
         std::to_string(k.history_runs) + " runs) " + show_value(*k.baseline) + "</title></line>";
  if (n > 1) {
    s += "<polyline class=\"hist\" points=\"";
    for (size_t i = 0; i < n; ++i) s += num(x(i)) + "," + num(y(v[i])) + " ";
    s += "\"/>";
  }
  for (size_t i = 0; i + (k.value ? 1 : 0) < n; ++i) {
    std::string run = i < k.history_runs_labels.size() ? k.history_runs_labels[i] : "";
    s += "<circle class=\"pt\" cx=\"" + num(x(i)) + "\" cy=\"" + num(y(v[i])) +
         "\" r=\"1.6\"><title>" + esc(run) + ": " + show_value(v[i]) + "</title></circle>";
  }
  if (k.value)
    s += "<circle class=\"now " + std::string(css_class(k.status)) + "\" cx=\"" + num(x(n - 1)) +
         "\" cy=\"" + num(y(v[n - 1])) + "\" r=\"3.5\"><title>" + esc(k.run) +
         " (newest): " + show_value(*k.value) + "</title></circle>";
  return s + "</svg>";
}

const char* kStyle = R"CSS(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
h1.fail { color: #b3261e; } h1.pass { color: #1b7f3b; }
p.meta { color: #555; margin: .2em 0; }
table { border-collapse: collapse; margin-top: 1em; }
th, td { padding: 4px 8px; border-bottom: 1px solid #e3e3e3; vertical-align: middle; text-align: left; }
th { background: #f6f6f6; position: sticky; top: 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.why { max-width: 40em; font-size: .92em; }
.st { font-weight: 600; white-space: nowrap; }
tr.fail .st { color: #b3261e; } tr.inc .st { color: #a15c00; }
tr.pass .st { color: #1b7f3b; } tr.skip .st { color: #777; }
svg.spark polyline.hist { fill: none; stroke: #8a8a8a; stroke-width: 1; }
svg.spark circle.pt { fill: #8a8a8a; }
svg.spark line.base { stroke: #3b6fd4; stroke-dasharray: 4 3; stroke-width: 1; }
svg.spark line.tgt { stroke: #1b7f3b; stroke-dasharray: 1 2; stroke-width: 1; }
svg.spark circle.now.fail { fill: #b3261e; } svg.spark circle.now.inc { fill: #e08a00; }
svg.spark circle.now.pass { fill: #1b7f3b; } svg.spark circle.now.skip { fill: #999; }
ul.findings { font-weight: 600; }
body.only tr.pass, body.only tr.skip { display: none; }
)CSS";

}  // namespace

std::string gate_html(const GateReport& r) {
  bool failed = r.exit_code() != 0;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kgate: " +
      esc(r.summary()) + "</title>\n<style>" + kStyle + "</style></head>\n<body>\n";
  out += "<h1 class=\"" + std::string(failed ? "fail" : "pass") + "\">kgate: " + esc(r.summary()) +
         "</h1>\n";
  out += "<p class=\"meta\">History window " + std::to_string(r.window) + " runs, min gap " +
         percent(r.min_gap) + (r.strict ? ", strict" : "") + "; " + std::to_string(r.rows) +
         " rows from " + std::to_string(r.inputs.size()) + " file(s):";
  for (const auto& f : r.inputs) out += " <code>" + esc(f) + "</code>";
  out += "</p>\n";
  for (const auto& g : r.gated_runs)
    out += "<p class=\"meta\">Gated " + esc(g.describe()) + "</p>\n";
  if (!r.provenance().empty()) out += "<p class=\"meta\">" + esc(r.provenance()) + "</p>\n";
  if (!findings(r).empty()) out += "<ul class=\"findings\">";
  for (const auto& f : findings(r)) out += "<li>" + esc(f) + "</li>";
  if (!findings(r).empty()) out += "</ul>\n";
  if (!r.history_note().empty()) out += "<p class=\"meta\">" + esc(r.history_note()) + "</p>\n";
  if (!r.input_failures.empty()) {
    out +=
        "<p class=\"fail\">Input that fails the night (tonight's rows kgate cannot "
        "trust):</p><ul>\n";
    for (const auto& f : r.input_failures)
      out += "<li><b>" + esc(f.rule) + "</b> <code>" + esc(f.text()) + "</code></li>\n";
    out += "</ul>\n";
  }
  out +=
      "<p><label><input type=\"checkbox\" id=\"only\"> only failures and inconclusive</label>"
      " &middot; line: earlier runs; dashed: baseline; dotted: target; dot: newest run</p>\n";
  out +=
      "<table>\n<thead><tr><th>status</th><th>key</th><th>history</th><th>value</th>"
      "<th>baseline</th><th>change</th><th>target</th><th>why</th></tr></thead>\n<tbody>\n";
  for (const auto& k : r.keys) {
    std::string why = k.why, link = chart_link(r, k), label = esc(key_label(k));
    if (!failing_since(k).empty()) why += "; " + failing_since(k);
    if (k.last_good) why += "; " + last_good_text(k);
    if (!link.empty()) label = "<a href=\"" + esc(link) + "\">" + label + "</a>";
    if (k.throttled && k.status == GateStatus::pass)
      why = "the run was throttled (SM clock low): the value may be low";
    out += "<tr class=\"" + std::string(css_class(k.status)) + "\"><td class=\"st\">" +
           esc(shown_status(r, k)) + "</td><td>" + label + "</td><td>" + sparkline(k) +
           "</td><td class=\"n\">" + show_value(k.value) + "</td><td class=\"n\">" +
           show_value(k.baseline) + "</td><td class=\"n\">" + show_change(k.change) +
           "</td><td class=\"n\">" + show_value(k.target) + "</td><td class=\"why\">" + esc(why) +
           (k.note.empty() ? std::string() : (why.empty() ? "" : "<br>") + esc("note: " + k.note)) +
           "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (!r.warnings.empty()) {
    out += "<details><summary>" + std::to_string(r.warnings.size()) +
           " input warning(s)</summary><ul>\n";
    for (const auto& w : r.warnings) out += "<li><code>" + esc(w) + "</code></li>\n";
    out += "</ul></details>\n";
  }
  out +=
      "<script>\ndocument.getElementById('only').addEventListener('change', function (e) {\n"
      "  document.body.classList.toggle('only', e.target.checked);\n});\n</script>\n";
  return out + "</body></html>\n";
}

}  // namespace kb
