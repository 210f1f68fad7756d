#include "core/metrics.h"

#include <array>

namespace kb {

std::optional<Direction> metric_direction(const std::string& m) {
  static const std::array<const char*, 12> higher = {
      metric_name::memory_bandwidth,  metric_name::memory_bandwidth_kv,
      metric_name::flops_utilization, metric_name::tflops,
      metric_name::token_per_sec,     metric_name::bus_bandwidth,
      metric_name::read_bandwidth,    metric_name::copy_bandwidth,
      metric_name::gemm_share,        metric_name::algorithm_bandwidth,
      metric_name::link_bandwidth,    "tops"};
  static const std::array<const char*, 5> lower = {
      metric_name::compilation_time, metric_name::latency_us, metric_name::launch_us,
      metric_name::graph_node_us, metric_name::mem_latency_us};
  for (const char* h : higher)
    if (m == h) return Direction::higher_is_better;
  for (const char* l : lower)
    if (m == l) return Direction::lower_is_better;
  return std::nullopt;
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
