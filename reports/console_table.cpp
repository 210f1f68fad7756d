#include "reports/console_table.h"

#include <algorithm>
#include <cstdio>

namespace kb {

namespace {
std::string fixed(const std::optional<double>& v, int digits) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, *v);
  return buf;
}
// Fewer decimals for large values, more for fractions.
std::string value(const std::optional<double>& v) {
  if (!v) return "-";
  double a = *v < 0 ? -*v : *v;
  return fixed(v, a >= 100 ? 1 : a >= 1 ? 2 : 4);
}
}  // namespace

std::string console_table(const std::vector<Record>& rows) {
  const std::vector<std::string> head = {"name",   "shape",  "dtype",    "metric",
                                         "actual", "target", "roofline", "status"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows)
    cells.push_back({r.name, r.shape, r.dtype, r.metric, value(r.actual), value(r.target),
                     fixed(r.roofline_fraction, 3), r.status});
  return text_table(head, cells, 4, 6);
}

std::string text_table(const std::vector<std::string>& head,
                       const std::vector<std::vector<std::string>>& cells, size_t first_right,
                       size_t last_right) {
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      const bool right = i >= first_right && i <= last_right;
      // "±" is two bytes but one column wide.
      const size_t width = c[i].size() - (c[i].find("±") != std::string::npos ? 1 : 0);
      const std::string pad(w[i] > width ? w[i] - width : 0, ' ');
      s += right ? pad + c[i] : c[i] + pad;
      if (i + 1 < c.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(head);
  std::vector<std::string> rule;
  for (size_t x : w) rule.push_back(std::string(x, '-'));
  out += line(rule);
  for (const auto& c : cells) out += line(c);
  return out;
}

}  // namespace kb
