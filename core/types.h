// Plain types shared by experiments, the engine and the host-side math
// (roofline, targets, metrics). No CUDA here: the CPU tests use it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kb {

enum class DType { bf16, f16, f32, i8, fp8_e4m3 };
// The CSV spelling: "bfloat16", "float16", "float32", "int8", "fp8_e4m3".
const char* dtype_name(DType d);
int dtype_size(DType d);

// The named integer axes of one point, in order, then its labels: text of
// the point's identity that is no axis (Experiment::variant_in_shape).
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::pair<std::string, int64_t>> kv) : kv_(kv) {}
  void set(const std::string& key, int64_t value);
  bool has(const std::string& key) const;  // an axis (labels are none)
  // The value of `key`; throws std::out_of_range naming the key when absent.
  int64_t operator[](const std::string& key) const;
  void set_label(const std::string& key, std::string value);
  // "bytes=65536;kernel=read_sweep" (the CSV `shape`): the axes, the labels.
  std::string str() const;
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

// What one timed call of Case::run must do, at the least: the roofline's
// inputs (core/roofline.h), and the counts an experiment's own metrics read.
struct Work {
  double bytes = 0;                // bytes that must move (inputs read once, outputs written once)
  double write_bytes = -1;         // of `bytes`, those written; < 0: from `bound` (copy: half)
  double flops = 0;                // floating-point (or integer) operations
  DType flop_dtype = DType::bf16;  // which tensor-core peak bounds the flops
  Bound bound = Bound::read;
  double launches = 1;  // kernel launches (or graph nodes) in one run()
  bool graph = false;   // run() replays a CUDA graph
  // Named counts of one run() that only the experiment's own metrics read
  // (decode: "tokens", "kv_bytes").
  std::map<std::string, double> counts;
};

}  // namespace kb
