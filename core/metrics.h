// The metric names rows carry (unit in the name, as PyTorch gpt_fast writes
// them) and which way is better. Shared by the runner and the gate.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kb {

enum class Direction { higher_is_better, lower_is_better };

// The names generic code writes or reads; an experiment's own are in its file.
namespace metric_name {
inline constexpr const char* memory_bandwidth = "memory_bandwidth(GB/s)";
inline constexpr const char* flops_utilization = "flops_utilization";
inline constexpr const char* tflops = "tflops";
inline constexpr const char* compilation_time = "compilation_time(s)";
inline constexpr const char* latency_us = "latency(us)";
inline constexpr const char* read_bandwidth = "read_bandwidth(GB/s)";
inline constexpr const char* copy_bandwidth = "copy_bandwidth(GB/s)";
inline constexpr const char* launch_us = "launch(us)";
inline constexpr const char* graph_node_us = "graph_node(us)";
inline constexpr const char* mem_latency_us = "mem_latency(us)";
}  // namespace metric_name

// The message token of rows whose roofline is version 1 although the suite
// is newer (their target file has no speed-of-light ladder).
inline constexpr const char* kRooflineModelNote = "roofline=model";

// Which roofline a row's `roofline` and `roofline_fraction` come from
// (docs/metrics.md): 1 (bandwidth, peak and launch floor) for suites before
// 0.2.0, rows without a readable suite version and rows whose message holds
// kRooflineModelNote; 2 (the speed-of-light ladder) otherwise. Fractions of
// two versions are not comparable (docs/gate.md).
int roofline_version(std::string_view suite_version, std::string_view message);

// Direction of a metric, from its name alone (so that a new experiment's
// metric needs no edit here): a time unit, "(s)", "(ms)", "(us)" or "(ns)",
// is lower-is-better, any other unit in parentheses ("(GB/s)") higher; of
// the names without a unit, those rows already carry (the seed's and
// earlier ones) are rates or ratios, higher-is-better. nullopt for any
// other name: kgate refuses a row it cannot judge.
std::optional<Direction> metric_direction(const std::string& metric);
bool lower_is_better(const std::string& metric);

}  // namespace kb
