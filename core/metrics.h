// The metric names rows carry (unit in the name, as PyTorch gpt_fast writes
// them) and which way is better. Shared by the runner and the gate.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kb {

enum class Direction { higher_is_better, lower_is_better };

namespace metric_name {
inline constexpr const char* memory_bandwidth = "memory_bandwidth(GB/s)";
inline constexpr const char* memory_bandwidth_kv = "memory_bandwidth_kv(GB/s)";
inline constexpr const char* flops_utilization = "flops_utilization";
inline constexpr const char* tflops = "tflops";
inline constexpr const char* token_per_sec = "token_per_sec";
inline constexpr const char* compilation_time = "compilation_time(s)";
inline constexpr const char* latency_us = "latency(us)";
// The bare GEMMs' time over the MLP's, sampled interleaved (a ratio: higher is better).
inline constexpr const char* gemm_share = "gemm_share";
inline constexpr const char* bus_bandwidth = "bus_bandwidth(GB/s)";
// A collective's bytes / time, as nccl-tests' algbw (bus_bandwidth is its busbw).
inline constexpr const char* algorithm_bandwidth = "algorithm_bandwidth(GB/s)";
// The GPU-to-GPU ring's bandwidth per GPU (roofline_probe): a collective's busbw ceiling.
inline constexpr const char* link_bandwidth = "link_bandwidth(GB/s)";
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

// Direction of a known metric; nullopt for a name this build does not know.
// Rule: rates are higher-is-better; times ("(s)", "(us)", "(ms)") lower.
std::optional<Direction> metric_direction(const std::string& metric);

}  // namespace kb
