// Plain types shared by experiments, the engine and the host-side math
// (roofline, targets, metrics). No CUDA here: the CPU tests use it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kb {

enum class DType { bf16, f16, f32, i8, fp8_e4m3 };
// The CSV spelling: "bfloat16", "float16", "float32", "int8", "fp8_e4m3".
const char* dtype_name(DType d);
int dtype_size(DType d);

// The named integer axes of one point, in declaration order, and after
// them any named labels: text that is part of the point's identity but not
// an axis (roofline_ideal's ideal kernel, `kernel=read_sweep`: an
// experiment's variant written into its points' shapes,
// Experiment::variant_in_shape).
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::pair<std::string, int64_t>> kv) : kv_(kv) {}
  void set(const std::string& key, int64_t value);
  // An integer axis `key` (labels are not axes).
  bool has(const std::string& key) const;
  // The value of `key`; throws std::out_of_range naming the key when absent.
  int64_t operator[](const std::string& key) const;
  // Sets (or replaces) the label `key`.
  void set_label(const std::string& key, std::string value);
  // "BS=4096;D=1024", "bytes=65536;kernel=read_sweep" (the CSV `shape`
  // column): the axes, then the labels.
  std::string str() const;
  // The integer axes only.
  const std::vector<std::pair<std::string, int64_t>>& items() const { return kv_; }
  const std::vector<std::pair<std::string, std::string>>& labels() const { return labels_; }

 private:
  std::vector<std::pair<std::string, int64_t>> kv_;
  std::vector<std::pair<std::string, std::string>> labels_;
};

// One row's coordinates: shape, dtype and variant.
struct Point {
  Shape shape;
  DType dtype = DType::bf16;
  std::string variant;        // free text for the CSV `variant` column ("" = default)
  bool in_seed_mean = false;  // counts in the seed's `shape=mean` row
  int64_t operator[](const std::string& key) const { return shape[key]; }
};

// Which measured bandwidth ceiling bounds the bytes.
enum class Bound {
  read,  // mostly reads (GEMV, decode): the read-only kernel's bandwidth
  copy,  // reads and writes alike (elementwise, norms): the copy bandwidth
};

// What one timed call of Case::run must do, at the least. The engine turns
// this into metrics and the roofline:
// (suite/roofline.h: from the target file's speed-of-light ladder for the
// reads and writes, else from the bandwidth of `bound`).
struct Work {
  double bytes = 0;                // bytes that must move (inputs read once, outputs written once)
  double write_bytes = -1;         // of `bytes`, those written; < 0: from `bound` (copy: half)
  double flops = 0;                // floating-point (or integer) operations
  DType flop_dtype = DType::bf16;  // which tensor-core peak bounds the flops
  Bound bound = Bound::read;
  double launches = 1;  // kernel launches (or graph nodes) in one run()
  bool graph = false;   // run() replays a CUDA graph
  double steps = 1;     // decode steps (tokens) in one run(): token_per_sec, latency(us)
  double kv_bytes = 0;  // KV-cache bytes read in one run() (memory_bandwidth_kv)
};

// The metrics a point's rows report, one row each.
enum class Metric {
  memory_bandwidth,     // bytes / t                      "memory_bandwidth(GB/s)"
  memory_bandwidth_kv,  // (bytes + kv_bytes) / t         "memory_bandwidth_kv(GB/s)"
  flops_utilization,    // flops / t / peak(flop_dtype)   "flops_utilization"
  tflops,               // flops / t / 1e12               "tflops"
  token_per_sec,        // steps / t                      "token_per_sec"
  latency_us,           // t / steps, in µs               "latency(us)"
  compilation_time,     // setup (Case constructor) in s  "compilation_time(s)"
  gemm_share,           // companion time / case time     "gemm_share" (Case::companion)
};
// Every Metric, for tests that walk them all.
inline constexpr Metric kAllMetrics[] = {Metric::memory_bandwidth,  Metric::memory_bandwidth_kv,
                                         Metric::flops_utilization, Metric::tflops,
                                         Metric::token_per_sec,     Metric::latency_us,
                                         Metric::compilation_time,  Metric::gemm_share};
// The CSV name (reports/metrics.h's metric_name, which also gives its direction).
const char* metric_csv_name(Metric m);

}  // namespace kb
