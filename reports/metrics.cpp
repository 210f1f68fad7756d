#include "reports/metrics.h"

#include <array>

namespace kb {

std::optional<Direction> metric_direction(const std::string& m) {
  static const std::array<const char*, 11> higher = {metric_name::memory_bandwidth,
                                                     metric_name::memory_bandwidth_kv,
                                                     metric_name::flops_utilization,
                                                     metric_name::tflops,
                                                     metric_name::token_per_sec,
                                                     metric_name::bus_bandwidth,
                                                     metric_name::read_bandwidth,
                                                     metric_name::copy_bandwidth,
                                                     metric_name::algorithm_bandwidth,
                                                     metric_name::link_bandwidth,
                                                     "tops"};
  static const std::array<const char*, 5> lower = {
      metric_name::compilation_time, metric_name::latency_us, metric_name::launch_us,
      metric_name::graph_node_us, metric_name::mem_latency_us};
  for (const char* h : higher)
    if (m == h) return Direction::higher_is_better;
  for (const char* l : lower)
    if (m == l) return Direction::lower_is_better;
  return std::nullopt;
}

}  // namespace kb
