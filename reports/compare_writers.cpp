#include <cmath>
#include <cstdio>

#include "reports/compare_result.h"
#include "reports/console_table.h"
#include "reports/format.h"
#include "reports/gate_result.h"

namespace kb {

const char* compare_verdict_name(CompareVerdict v) {
  static const char* const names[] = {"SAME", "FASTER", "SLOWER", "UNSURE", "-"};
  return names[static_cast<int>(v)];
}

size_t CompareReport::count(CompareVerdict v) const {
  size_t n = 0;
  for (const auto& r : rows) n += r.verdict == v;
  return n;
}

std::string CompareReport::summary() const {
  char buf[160];
  double pct = (geomean - 1) * 100;
  if (compared == 0) return "nothing to compare: no key has a value in both files";
  std::snprintf(buf, sizeof buf, "geomean NEW/BASE %.4f (%.1f%% %s) over %zu keys", geomean,
                std::fabs(pct), pct >= 0 ? "better" : "worse", compared);
  std::string s = buf;
  s += ": " + std::to_string(count(CompareVerdict::faster)) + " FASTER, " +
       std::to_string(count(CompareVerdict::slower)) + " SLOWER, " +
       std::to_string(count(CompareVerdict::same)) + " SAME, " +
       std::to_string(count(CompareVerdict::unsure)) + " UNSURE";
  size_t nc = count(CompareVerdict::not_compared);
  if (nc) s += "; " + std::to_string(nc) + " not compared";
  return s;
}

namespace {

std::string noise_text(double u) { return "±" + percent(u); }

std::string header_lines(const CompareReport& r) {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + (x.empty() ? "(no arch)" : x);
    return s.empty() ? std::string("(no rows)") : s;
  };
  std::string s = "BASE " + r.base_path + ": " + join(r.base_archs) + "\n";
  s += "NEW  " + r.next_path + ": " + join(r.next_archs) + "\n";
  if (r.cross_arch)
    s += "The GPU models differ: comparing roofline_fraction (each value as a fraction of its "
         "GPU's roofline), not raw values.\n";
  return s;
}

}  // namespace

std::string compare_console(const CompareReport& r) {
  const std::vector<std::string> head = {"verdict", "name", "shape",  "dtype", "metric",
                                         "base",    "new",  "change", "noise", "note"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& c : r.rows) {
    std::string metric = r.cross_arch ? "roofline_fraction of " + c.metric : c.metric;
    bool both = c.base && c.next;
    cells.push_back({compare_verdict_name(c.verdict), c.name, c.shape.empty() ? "-" : c.shape,
                     c.dtype, metric, show_value(c.base), show_value(c.next),
                     both ? show_change(c.change) : "-", both ? noise_text(c.noise) : "-", c.note});
  }
  std::string out = header_lines(r) + "\n" + text_table(head, cells, 5, 8);
  return out + "\n" + r.summary() + "\n";
}

std::string compare_markdown(const CompareReport& r) {
  const auto cell = markdown_text;
  std::string out = "## kgate compare: " + cell(r.summary()) + "\n\n";
  std::string head = header_lines(r);
  for (size_t p = 0, q; p < head.size(); p = q + 1) {
    q = head.find('\n', p);
    out += cell(head.substr(p, q - p)) + "  \n";
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.rows) {
    std::string key = c.name + (c.shape.empty() ? "" : " [" + c.shape + "]") + " " + c.dtype + " " +
                      (r.cross_arch ? "roofline_fraction of " : "") + c.metric;
    bool both = c.base && c.next;
    rows.push_back({compare_verdict_name(c.verdict), cell(key), show_value(c.base),
                    show_value(c.next), both ? show_change(c.change) : "-",
                    both ? noise_text(c.noise) : "-", cell(c.note)});
  }
  return out + "\n" +
         markdown_table({"verdict", "key", "base", "new", "change", "noise", "note"}, "llrrrr",
                        rows);
}

}  // namespace kb
