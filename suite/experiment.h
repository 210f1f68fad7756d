// The experiment API: an experiment file declares its axes, Work, metrics
// and a Case (one point's buffers, kernel and check against a CPU reference),
// registered with KB_EXPERIMENT; docs/adding-an-experiment.md walks through one.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/types.h"
#include "suite/rows.h"

namespace kb {

// The result of a correctness check.
struct Check {
  bool ok = false;
  std::string detail;  // what was compared, the error found ("max rel err 3.1e-3 at [12,7]")
  static Check pass(std::string d) { return {true, std::move(d)}; }
  static Check fail(std::string d) { return {false, std::move(d)}; }
};

// One experiment at one point: owns its device buffers. Throw for errors:
// the engine makes the rows `failed` with the message and goes on.
class Case {
 public:
  virtual ~Case() = default;
  // The timed work: enqueue on `stream` only (no sync, allocation or copy).
  virtual void run(cudaStream_t stream) = 0;
  // Fresh random inputs from `seed`, run, compare with the CPU reference.
  virtual Check check(cudaStream_t stream, uint64_t seed) = 0;
  // The inputs as check() makes them, without the reference (the further
  // buffer sets). Default: check() (correct, only slower).
  virtual void prepare(cudaStream_t stream, uint64_t seed) { check(stream, seed); }
  // What only the built case knows (the cuBLASLt algorithm it chose),
  // `key=value;...`, added to the rows' variant; read after check().
  virtual std::string variant() const { return {}; }
  // Optional second work, timed right after each sample (the same power
  // state): the median of its time / run()'s is MetricInput::companion_ratio.
  virtual bool has_companion() const { return false; }
  virtual void companion(cudaStream_t /*stream*/) {}
  // A sentence for the rows' message about how it ran; read after check().
  virtual std::string note() const { return {}; }
};

// How the engine samples.
enum class Protocol {
  kernel,  // cold L2 before each sample, sample until the noise bound or budget; median
  decode,  // no flush (the working set is far beyond L2), `decode_runs` samples; mean (as the seed)
};

// A multi-device experiment (the NCCL collectives), measured across every
// GPU of a run by a protocol of its own (docs/decisions/0024).
struct AcrossDevices {
  // Why it cannot run across `ranks` GPUs in this build ("" = it can).
  std::function<std::string(int ranks)> unavailable;
  // Its rows, all with `status` and `message` (skipped, or the worker died).
  std::function<std::vector<Record>(int ranks, const std::string& status,
                                    const std::string& message, const RunInfo&, const GpuIdentity&)>
      status_rows;
  // Measures every point across `devices` (and probe rows); throws for none.
  std::function<std::vector<Record>(const std::vector<int>& devices, const RunInfo&, bool quick)>
      measure;
};

class Experiment {
 public:
  using WorkFn = std::function<Work(const Point&)>;
  using MakeFn = std::function<std::unique_ptr<Case>(const Point&)>;
  // Why a point cannot run here (""= it can): e.g. an FP8 variant on a GPU without FP8.
  using SupportFn = std::function<std::string(const Point&, const cudaDeviceProp&)>;
  // Whether a (shape, dtype, variant) combination exists at all.
  using AppliesFn = std::function<bool(const Point&)>;

  explicit Experiment(std::string name) : name_(std::move(name)) {}

  Experiment& doc(std::string text) { return set(doc_, std::move(text)); }
  // A seed axis: the product of axes x dtypes x variants gives the points
  // of the seed's `shape=mean` row.
  Experiment& axis(const std::string& key, std::vector<int64_t> values);
  // An extra point beyond the product, for every dtype and variant, not in
  // the seed mean.
  Experiment& point(Shape shape);
  Experiment& dtypes(std::vector<DType> d) { return set(dtypes_, std::move(d)); }
  Experiment& variants(std::vector<std::string> v) { return set(variants_, std::move(v)); }
  Experiment& metrics(std::vector<Metric> m) { return set(metrics_, std::move(m)); }
  // Adds the seed's `shape=mean` row per (dtype, variant, metric).
  Experiment& seed_mean(bool on = true) { return set(seed_mean_, on); }
  Experiment& model(bool on = true) { return set(model_, on); }  // is_model=True rows
  Experiment& protocol(Protocol p, int decode_runs = 5);
  Experiment& work(WorkFn f) { return set(work_, std::move(f)); }
  Experiment& make(MakeFn f) { return set(make_, std::move(f)); }
  Experiment& supported(SupportFn f) { return set(supported_, std::move(f)); }
  // Drops the points for which `f` is false (no rows, unlike supported()'s
  // `skipped` ones): a variant that exists at some shapes only.
  Experiment& applies(AppliesFn f) { return set(applies_, std::move(f)); }
  // Makes it a multi-device experiment (no work() or make()).
  Experiment& across_devices(AcrossDevices a) { return set(across_, std::move(a)); }
  // The shape carries the variant as the label `key` (`...;kernel=read_sweep`):
  // the gate keys rows without their variant. Not with seed_mean().
  Experiment& variant_in_shape(std::string key) { return set(variant_key_, std::move(key)); }

  // The axis product, then the extra points, without those applies() drops.
  std::vector<Point> points() const;
  std::string axes_text() const;  // for `kbench list`

  const std::string& name() const { return name_; }
  // What row building needs of it (suite/rows.h).
  RowSource source() const { return {name_, model_, seed_mean_, metrics_}; }
  const std::string& description() const { return doc_; }
  const std::vector<Metric>& metric_list() const { return metrics_; }
  bool has_seed_mean() const { return seed_mean_; }
  bool is_model() const { return model_; }
  bool is_across_devices() const { return static_cast<bool>(across_.measure); }
  const AcrossDevices& across() const { return across_; }
  // The label variant_in_shape() names ("" = none).
  const std::string& variant_shape_key() const { return variant_key_; }
  Protocol sampling() const { return protocol_; }
  int decode_runs() const { return decode_runs_; }
  bool work_for_defined() const { return static_cast<bool>(work_); }
  bool make_defined() const { return static_cast<bool>(make_); }
  Work work_for(const Point& p) const { return work_(p); }
  std::unique_ptr<Case> make_case(const Point& p) const { return make_(p); }
  std::string unsupported_reason(const Point& p, const cudaDeviceProp& prop) const {
    return supported_ ? supported_(p, prop) : std::string();
  }

 private:
  template <typename T>
  Experiment& set(T& field, T value) {
    field = std::move(value);
    return *this;
  }

  std::string name_, doc_, variant_key_;
  std::vector<std::pair<std::string, std::vector<int64_t>>> axes_;
  std::vector<Shape> extra_;
  std::vector<DType> dtypes_{DType::bf16};
  std::vector<std::string> variants_{""};
  std::vector<Metric> metrics_{Metric::memory_bandwidth};
  bool seed_mean_ = false, model_ = false;
  Protocol protocol_ = Protocol::kernel;
  int decode_runs_ = 5;
  WorkFn work_;
  MakeFn make_;
  SupportFn supported_;
  AppliesFn applies_;
  AcrossDevices across_;
};

// The experiments linked into this binary, sorted by name.
class Registry {
 public:
  static Registry& instance();
  void add(Experiment e);
  const std::vector<Experiment>& all() const { return experiments_; }
  // The experiment of that name, nullptr if none.
  const Experiment* find(const std::string& name) const;

 private:
  std::vector<Experiment> experiments_;
};

struct Registrar {
  explicit Registrar(Experiment (*define)()) { Registry::instance().add(define()); }
};

}  // namespace kb

// Defines and registers an experiment; the body returns the kb::Experiment.
#define KB_EXPERIMENT(id)                                          \
  static ::kb::Experiment kb_define_##id();                        \
  static const ::kb::Registrar kb_registrar_##id{&kb_define_##id}; \
  static ::kb::Experiment kb_define_##id()
