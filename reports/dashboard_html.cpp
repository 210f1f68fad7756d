// The dashboard page: a static header (readable without script: the gate's
// summary, the gated runs, what is missing), the data as JSON in a
// <script type="application/json"> element, and the page's own CSS and
// script (reports/dashboard/, compiled in), which draw the views.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "dashboard_assets.h"
#include "reports/dashboard_data.h"
#include "reports/format.h"
#include "reports/gate_result.h"

namespace kb {

namespace {

std::string esc(const std::string& s) { return escape_markup(s, Markup::html); }

using Json = nlohmann::ordered_json;

// JSON text that is inert inside an HTML <script>: <, > and & (found only
// in strings) as \u escapes; invalid UTF-8 as U+FFFD.
std::string inert(const Json& j) {
  const std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

// A number with `digits` significant digits (the page needs no more), or null.
Json num(double v, int digits = 6) {
  if (!std::isfinite(v)) return nullptr;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  const double r = std::strtod(buf, nullptr);
  if (r == std::trunc(r) && std::fabs(r) < 1e15) return static_cast<int64_t>(r);
  return r;
}

char verdict_letter(GateStatus s) { return "FIPS"[static_cast<int>(s)]; }

// get(point) for every point.
template <class Get>
Json per_point(const std::vector<DashboardPoint>& pts, Get get) {
  Json out = Json::array();
  for (const auto& p : pts) out.push_back(get(p));
  return out;
}

// A value that rarely changes along a series (roofline, target) as the
// points where it changes: [[index, value], ...].
template <class Get>
Json steps(const std::vector<DashboardPoint>& pts, Get get) {
  Json out = Json::array();
  for (size_t i = 0; i < pts.size(); ++i) {
    const double v = get(pts[i]), prev = i ? get(pts[i - 1]) : 0;
    if (!i || (v == v) != (prev == prev) || (v == v && v != prev)) out.push_back({i, num(v)});
  }
  return out;
}

template <class Has>
bool any(const std::vector<DashboardPoint>& pts, Has has) {
  return std::any_of(pts.begin(), pts.end(), has);
}

Json key_json(const DashboardKey& k) {
  const auto& pts = k.points;
  Json j = {{"n", k.name},
            {"m", k.metric},
            {"d", k.dtype},
            {"s", k.shape},
            {"var", k.variant},
            {"g", k.gpu},
            {"lo", k.lower_is_better ? 1 : 0}};
  j["vd"] = k.has_verdict ? std::string(1, verdict_letter(k.verdict)) : "";
  j["rule"] = k.rule;
  j["why"] = k.why;
  // Runs as steps from the previous point's run (mostly 1: short).
  uint32_t prev = 0;
  j["r"] =
      per_point(pts, [&](const DashboardPoint& p) { return p.run - std::exchange(prev, p.run); });
  j["v"] = per_point(pts, [](const DashboardPoint& p) { return num(p.value); });
  std::string st, ve;
  for (const auto& p : pts) {
    st += p.status;
    ve += verdict_letter(p.verdict);
  }
  j["st"] = st;
  j["ve"] = ve;
  j["b"] = per_point(pts, [](const DashboardPoint& p) { return num(p.baseline, 5); });
  j["e"] = per_point(pts, [](const DashboardPoint& p) { return num(p.band, 3); });
  j["rf"] = steps(pts, [](const DashboardPoint& p) { return p.roofline; });
  j["tg"] = steps(pts, [](const DashboardPoint& p) { return p.target; });
  // Boards as steps, only for a key whose rows name one (schema v2).
  if (any(pts, [](const DashboardPoint& p) { return p.board >= 0; }))
    j["bd"] = steps(pts, [](const DashboardPoint& p) {
      return p.board >= 0 ? static_cast<double>(p.board) : DashboardPoint::kNone;
    });
  // Each run's noise_rel (in %) and its samples, for error bars and compare.
  if (any(pts, [](const DashboardPoint& p) { return p.noise == p.noise; })) {
    j["nr"] = per_point(pts, [](const DashboardPoint& p) { return num(p.noise * 100, 2); });
    j["sa"] = steps(pts, [](const DashboardPoint& p) { return double(p.samples); });
  }
  // Each run's error bar: its rows' min-max, in % of the value below and above it.
  if (any(pts, [](const DashboardPoint& p) { return p.lo == p.lo; })) {
    j["mn"] =
        per_point(pts, [](const DashboardPoint& p) { return num((1 - p.lo / p.value) * 100, 2); });
    j["mx"] =
        per_point(pts, [](const DashboardPoint& p) { return num((p.hi / p.value - 1) * 100, 2); });
  }
  j["at"] = Json::array();
  for (const auto& a : k.attempts) {
    Json at = {a.point, a.attempt, num(a.value), std::string(1, a.status)};
    if (a.board >= 0) at.push_back(a.board);
    j["at"].push_back(at);
  }
  return j;
}

Json data_json(const DashboardData& d) {
  bool time_axis = !d.runs.empty();
  for (const auto& r : d.runs) time_axis = time_axis && r.has_time;
  Json j = {{"v", 1},
            {"title", d.title},
            {"generated", d.generated},
            {"inputs", d.inputs},
            {"rows", d.rows},
            {"window", d.window},
            {"minGap", num(d.min_gap)},
            {"strict", d.strict},
            {"timeAxis", time_axis},
            {"summary", d.gate_summary}};
  j["gpus"] = Json::array();
  for (const auto& g : d.gpus) j["gpus"].push_back({g.arch, g.device});
  j["boards"] = Json::array();
  for (const auto& b : d.boards) j["boards"].push_back({b.uuid, b.device, b.host});
  j["runs"] = Json::array();
  for (const auto& r : d.runs)
    j["runs"].push_back({r.label, r.has_time ? Json(r.time) : Json(), r.timestamp, r.git_sha,
                         r.driver, r.cuda, r.gpus, r.rows, r.verdicts, r.gated ? 1 : 0, r.boards});
  j["keys"] = Json::array();
  for (const auto& k : d.keys) j["keys"].push_back(key_json(k));
  j["warnings"] = d.warnings;
  j["notes"] = d.notes;
  return j;
}

}  // namespace

std::string json_string(const std::string& s) { return inert(Json(s)); }

std::string dashboard_html(const DashboardData& d) {
  bool failed = d.gate_summary.rfind("FAIL", 0) == 0;
  bool synthetic = false;
  for (const auto& r : d.runs) synthetic = synthetic || r.label.rfind("synthetic-", 0) == 0;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      esc(d.title) + ": " + esc(d.gate_summary) + "</title>\n<style>\n" + kDashboardCss +
      "</style></head>\n<body>\n<header>\n";
  out += "<h1>" + esc(d.title) + ": <span class=\"verdict " + (failed ? "fail" : "pass") + "\">" +
         esc(d.gate_summary) + "</span></h1>\n";
  if (synthetic)
    out +=
        "<div class=\"synthetic\">Synthetic history: runs labelled synthetic-* were made by "
        "the test generator <code>gen_history</code> (tests/support), not measured.</div>\n";
  out += "<p class=\"meta\">" + std::to_string(d.rows) + " rows, " + std::to_string(d.runs.size()) +
         " runs, " + std::to_string(d.keys.size()) + " keys from " +
         std::to_string(d.inputs.size()) + " file(s); window " + std::to_string(d.window) +
         " runs, min gap " + percent(d.min_gap) + (d.strict ? ", strict" : "") + "; generated " +
         esc(d.generated) + "</p>\n";
  if (!d.gated_runs.empty()) {
    out += "<ul class=\"gated\">";
    for (const auto& g : d.gated_runs) out += "<li>Gated " + esc(g) + "</li>";
    out += "</ul>\n";
  }
  if (!d.notes.empty()) {
    out += "<div class=\"notes\" id=\"missing\"><b>Missing from the input</b><ul>";
    for (const auto& n : d.notes) out += "<li>" + esc(n) + "</li>";
    out += "</ul></div>\n";
  }
  out +=
      "</header>\n<nav><a href=\"#overview\">Overview</a><a href=\"#charts\">Charts</a>"
      "<a href=\"#runs\">Runs</a><a href=\"#input\">Input</a></nav>\n"
      "<div id=\"controls\"><input id=\"filter\" type=\"search\" placeholder=\"filter: "
      "gemv bf16 h100 cuda:1\" aria-label=\"filter\" autocomplete=\"off\">"
      "<select id=\"gpu\" aria-label=\"GPU\"></select><select id=\"dtype\" "
      "aria-label=\"dtype\"></select><select id=\"exp\" aria-label=\"experiment\"></select>"
      "<label><input type=\"checkbox\" id=\"problems\"> only FAIL and inconclusive</label>"
      "<label>y axis <select id=\"ymode\"><option value=\"value\">metric</option>"
      "<option value=\"fraction\">roofline fraction</option></select></label>"
      "<label>range <select id=\"range\"><option value=\"0\">all</option>"
      "<option value=\"365\">last 365 days</option><option value=\"90\">last 90 days</option>"
      "<option value=\"30\">last 30 days</option></select></label></div>\n"
      "<main id=\"view\"><noscript>The charts need JavaScript; the gate's summary is "
      "above.</noscript></main>\n<div id=\"tip\" hidden></div>\n"
      "<output id=\"kb-status\" data-state=\"loading\"></output>\n"
      "<script type=\"application/json\" id=\"kb-data\">";
  out += inert(data_json(d));
  out += "</script>\n<script>\n";
  out += kDashboardJs;
  out += "</script>\n</body></html>\n";
  return out;
}

}  // namespace kb
