// The dashboard page: a static header (readable without script: the gate's
// summary, the gated runs, what is missing), the data as JSON in a
// <script type="application/json"> element, and the page's own CSS and
// script (reports/dashboard/, compiled in), which draw the views.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "dashboard_assets.h"
#include "reports/dashboard_data.h"
#include "reports/format.h"
#include "reports/gate_result.h"

namespace kb {

namespace {

std::string esc(const std::string& s) { return escape_markup(s, Markup::html); }

// A number with `digits` significant digits, or null.
void put_num(std::string& out, double v, int digits = 6) {
  if (!(v == v) || std::isinf(v)) {
    out += "null";
    return;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  out += buf;
}

void put_str(std::string& out, const std::string& s) { out += json_string(s); }

// `v` as a JSON list, each item written by put(out, item).
template <class V, class Put>
void put_list(std::string& out, const V& v, Put put, const char* sep = ",") {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    put(out, v[i]);
  }
  out += ']';
}

void put_u32(std::string& out, uint32_t n) { out += std::to_string(n); }

char verdict_letter(GateStatus s) { return "FIPS"[static_cast<int>(s)]; }

// A value that rarely changes along a series (roofline, target) as the
// points where it changes: [[index, value], ...].
template <class Get>
void put_steps(std::string& out, const std::vector<DashboardPoint>& pts, Get get) {
  out += '[';
  bool first = true;
  double prev = 0;
  bool prev_none = false;
  for (size_t i = 0; i < pts.size(); ++i) {
    double v = get(pts[i]);
    bool none = !(v == v);
    if (!first && none == prev_none && (none || v == prev)) continue;
    if (!first) out += ',';
    out += '[' + std::to_string(i) + ',';
    put_num(out, v);
    out += ']';
    first = false;
    prev = v;
    prev_none = none;
  }
  out += ']';
}

void put_key(std::string& out, const DashboardKey& k) {
  out += "{\"n\":" + json_string(k.name);
  out += ",\"m\":" + json_string(k.metric);
  out += ",\"d\":" + json_string(k.dtype);
  out += ",\"s\":" + json_string(k.shape);
  out += ",\"var\":" + json_string(k.variant);
  out += ",\"g\":" + std::to_string(k.gpu) + ",\"lo\":" + (k.lower_is_better ? "1" : "0");
  out += ",\"vd\":\"";
  if (k.has_verdict) out += verdict_letter(k.verdict);
  out += "\",\"rule\":" + json_string(k.rule);
  out += ",\"why\":" + json_string(k.why);
  // Runs as steps from the previous point's run (mostly 1: short).
  out += ",\"r\":[";
  uint32_t prev = 0;
  for (size_t i = 0; i < k.points.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(k.points[i].run - prev);
    prev = k.points[i].run;
  }
  out += "],\"v\":";
  put_list(out, k.points, [](std::string& o, const DashboardPoint& p) { put_num(o, p.value); });
  out += ",\"st\":\"";
  for (const auto& p : k.points) out += p.status;
  out += "\",\"ve\":\"";
  for (const auto& p : k.points) out += verdict_letter(p.verdict);
  out += "\",\"b\":";
  put_list(out, k.points,
           [](std::string& o, const DashboardPoint& p) { put_num(o, p.baseline, 5); });
  out += ",\"e\":";
  put_list(out, k.points, [](std::string& o, const DashboardPoint& p) { put_num(o, p.band, 3); });
  out += ",\"rf\":";
  put_steps(out, k.points, [](const DashboardPoint& p) { return p.roofline; });
  out += ",\"tg\":";
  put_steps(out, k.points, [](const DashboardPoint& p) { return p.target; });
  // Boards as steps, only for a key whose rows name one (schema v2).
  if (std::any_of(k.points.begin(), k.points.end(),
                  [](const DashboardPoint& p) { return p.board >= 0; })) {
    out += ",\"bd\":";
    put_steps(out, k.points, [](const DashboardPoint& p) {
      return p.board >= 0 ? static_cast<double>(p.board) : DashboardPoint::kNone;
    });
  }
  // Each run's noise_rel (in %) and its samples, for error bars and compare.
  if (std::any_of(k.points.begin(), k.points.end(),
                  [](const DashboardPoint& p) { return p.noise == p.noise; })) {
    out += ",\"nr\":";
    put_list(out, k.points,
             [](std::string& o, const DashboardPoint& p) { put_num(o, p.noise * 100, 2); });
    out += ",\"sa\":";
    put_steps(out, k.points, [](const DashboardPoint& p) { return double(p.samples); });
  }
  // Each run's error bar: its rows' min-max, in % of the value below and above it.
  if (std::any_of(k.points.begin(), k.points.end(),
                  [](const DashboardPoint& p) { return p.lo == p.lo; })) {
    out += ",\"mn\":";
    put_list(out, k.points, [](std::string& o, const DashboardPoint& p) {
      put_num(o, (1 - p.lo / p.value) * 100, 2);
    });
    out += ",\"mx\":";
    put_list(out, k.points, [](std::string& o, const DashboardPoint& p) {
      put_num(o, (p.hi / p.value - 1) * 100, 2);
    });
  }
  out += ",\"at\":";
  put_list(out, k.attempts, [](std::string& o, const DashboardAttempt& a) {
    o += '[' + std::to_string(a.point) + ',' + std::to_string(a.attempt) + ',';
    put_num(o, a.value);
    o += std::string(",\"") + a.status + "\"";
    if (a.board >= 0) o += ',' + std::to_string(a.board);
    o += ']';
  });
  out += "}";
}

std::string data_json(const DashboardData& d) {
  std::string out;
  size_t points = 0;
  for (const auto& k : d.keys) points += k.points.size();
  out.reserve(4096 + points * 32);
  bool time_axis = !d.runs.empty();
  for (const auto& r : d.runs) time_axis = time_axis && r.has_time;
  out += "{\"v\":1,\"title\":" + json_string(d.title);
  out += ",\"generated\":" + json_string(d.generated);
  out += ",\"inputs\":";
  put_list(out, d.inputs, put_str);
  out += ",\"rows\":" + std::to_string(d.rows) + ",\"window\":" + std::to_string(d.window) +
         ",\"minGap\":";
  put_num(out, d.min_gap);
  out += std::string(",\"strict\":") + (d.strict ? "true" : "false");
  out += std::string(",\"timeAxis\":") + (time_axis ? "true" : "false");
  out += ",\"summary\":" + json_string(d.gate_summary);
  out += ",\"gpus\":";
  put_list(out, d.gpus, [](std::string& o, const DashboardGpu& g) {
    o += '[' + json_string(g.arch) + ',' + json_string(g.device) + ']';
  });
  out += ",\"boards\":";
  put_list(out, d.boards, [](std::string& o, const DashboardBoard& b) {
    o += '[' + json_string(b.uuid) + ',' + json_string(b.device) + ',' + json_string(b.host) + ']';
  });
  out += ",\"runs\":";
  put_list(
      out, d.runs,
      [](std::string& o, const DashboardRun& r) {
        o += '[' + json_string(r.label) + ',' +
             (r.has_time ? std::to_string(r.time) : std::string("null")) + ',' +
             json_string(r.timestamp) + ',' + json_string(r.git_sha) + ',' + json_string(r.driver) +
             ',' + json_string(r.cuda) + ',';
        put_list(o, r.gpus, put_u32);
        o += ',';
        put_list(o, r.rows, put_u32);
        o += ',';
        put_list(o, r.verdicts, put_u32);
        o += std::string(",") + (r.gated ? "1" : "0") + ',';
        put_list(o, r.boards, put_u32);
        o += ']';
      },
      ",\n");
  out += ",\n\"keys\":";
  put_list(out, d.keys, put_key, ",\n");
  out += ",\n\"warnings\":";
  put_list(out, d.warnings, put_str);
  out += ",\"notes\":";
  put_list(out, d.notes, put_str);
  out += "}";
  return out;
}

}  // namespace

std::string json_string(const std::string& s) {
  const std::string j =
      nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  for (char c : j)
    out += c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : c == '&' ? "\\u0026" : std::string(1, c);
  return out;
}

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
  out += data_json(d);
  out += "</script>\n<script>\n";
  out += kDashboardJs;
  out += "</script>\n</body></html>\n";
  return out;
}

}  // namespace kb
