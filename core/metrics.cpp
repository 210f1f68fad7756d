#include "core/metrics.h"

namespace kb {

std::optional<Direction> metric_direction(const std::string& m) {
  for (const char* name : {"flops_utilization", "tflops", "tops", "token_per_sec", "gemm_share"})
    if (m == name) return Direction::higher_is_better;
  const size_t open = m.rfind('(');
  if (open == std::string::npos || open == 0 || m.size() < open + 3 || m.back() != ')')
    return std::nullopt;
  const std::string unit = m.substr(open + 1, m.size() - open - 2);
  for (const char* time : {"s", "ms", "us", "ns"})
    if (unit == time) return Direction::lower_is_better;
  return Direction::higher_is_better;
}

bool lower_is_better(const std::string& metric) {
  return metric_direction(metric) == Direction::lower_is_better;
}

int roofline_version(std::string_view v, std::string_view message) {
  if (message.find(kRooflineModelNote) != std::string_view::npos) return 1;
  // "major.minor[.patch...]"
  int part[2] = {0, 0};
  size_t i = 0;
  for (int k = 0; k < 2; ++k) {
    const size_t start = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && i - start < 6)
      part[k] = part[k] * 10 + (v[i++] - '0');
    if (i == start) return 1;  // not a version: an old or foreign row
    if (k == 0 && (i >= v.size() || v[i++] != '.')) return 1;
  }
  return part[0] > 0 || part[1] >= 2 ? 2 : 1;
}

}  // namespace kb
