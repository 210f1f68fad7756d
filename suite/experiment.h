// The experiment API: what one experiment file declares.
//
// An experiment is one small .cu file under suite/experiments/ that declares
// its axes, the bytes and flops each axis point must move/do, a Case that
// owns the device buffers of one point (its kernel call and its check against
// a CPU reference), and registers itself with KB_EXPERIMENT. Registering
// makes no CUDA call. The engine (suite/engine.h) does everything else:
// checking, warm-up, L2 flush, timing, statistics, roofline, rows.
//
//   KB_EXPERIMENT(layer_norm) {
//     return kb::Experiment("layer_norm")
//         .doc("LayerNorm over the last dim, bf16 in/out, fp32 statistics")
//         .axis("BS", {4096})
//         .axis("D", {1024, 4096, 8192, 16384})
//         .dtypes({kb::DType::bf16})
//         .metrics({kb::Metric::memory_bandwidth})
//         .seed_mean()
//         .work([](const kb::Point& p) {
//           kb::Work w;
//           w.bytes = 2.0 * p["BS"] * p["D"] * kb::dtype_size(p.dtype);
//           w.bound = kb::Bound::copy;
//           return w;
//         })
//         .make([](const kb::Point& p) { return std::make_unique<LayerNormCase>(p); });
//   }
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

// One experiment at one point: owns its device buffers (allocated in the
// constructor, freed in the destructor). Throw (kb::CudaError, or any
// std::exception) for errors: the engine makes the row `failed` with the
// message and goes on.
class Case {
 public:
  virtual ~Case() = default;
  // The timed work. Enqueue on `stream` only: no sync, no allocation, no
  // host<->device copies. The engine times it with CUDA events.
  virtual void run(cudaStream_t stream) = 0;
  // Fill the inputs with fresh random data from `seed`, run, copy the output
  // back and compare it with the CPU reference. Called before any timing.
  virtual Check check(cudaStream_t stream, uint64_t seed) = 0;
  // Fill the inputs with fresh random data from `seed`, as check() does,
  // without the reference: the engine's further buffer sets (timed like the
  // first, which was checked) need valid inputs, not another CPU reference.
  // Default: check() (correct, only slower).
  virtual void prepare(cudaStream_t stream, uint64_t seed) { check(stream, seed); }
  // What only the built case knows about how it runs (e.g. the algorithm
  // cuBLASLt chose: "algo66_tile24_..."), `key=value` pairs joined by ';'.
  // The engine adds it to the rows' variant after the point's own variant
  // and before `bound=`; read after check(), which may settle it. Default: nothing.
  virtual std::string variant() const { return {}; }
  // An optional second piece of work, timed by the engine right after each
  // sample with the same protocol (L2 flushed, events around it): one
  // sample of each, alternating, so that the GPU's power state cannot favour
  // either. The median over the pairs of companion time / run() time is
  // MetricInput::companion_ratio (the MLP's gemm_share: its two GEMMs alone
  // against the whole MLP). Same rules as run(). Default: none.
  virtual bool has_companion() const { return false; }
  virtual void companion(cudaStream_t /*stream*/) {}
  // Something the row's message must say about how it ran (e.g. "the pinned
  // cuBLASLt algorithm was refused: ..., the heuristic's first ran"). Read
  // after check(). Default: nothing.
  virtual std::string note() const { return {}; }
};

// How the engine samples.
enum class Protocol {
  kernel,  // cold L2 before each sample, sample until the noise bound or budget; median
  decode,  // no flush (the working set is far beyond L2), `decode_runs` samples; mean (as the seed)
};

// A multi-device experiment (the NCCL collectives): all its points measured
// together across every GPU of a run at once, in one worker process after
// the per-GPU chains, by a protocol of its own
// (docs/decisions/0024-nccl-collectives-as-graphs.md), which builds its rows.
struct AcrossDevices {
  // Why it cannot run across `ranks` GPUs in this build ("" = it can).
  std::function<std::string(int ranks)> unavailable;
  // Its rows, every one with `status` and `message` (skipped; failed: the
  // worker died).
  std::function<std::vector<Record>(int ranks, const std::string& status,
                                    const std::string& message, const RunInfo&, const GpuIdentity&)>
      status_rows;
  // Measures every point across `devices`: its rows, and probe rows of
  // other names. Throws where it leaves no row.
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

  Experiment& doc(std::string text);
  // A seed axis: the cartesian product of all axes x dtypes x variants gives
  // the points that count in the seed's `shape=mean` row.
  Experiment& axis(const std::string& key, std::vector<int64_t> values);
  // An extra point beyond the product (e.g. a model's decode shapes); it is
  // run for every dtype and variant but is not in the seed mean.
  Experiment& point(Shape shape);
  Experiment& dtypes(std::vector<DType> d);
  Experiment& variants(std::vector<std::string> v);
  Experiment& metrics(std::vector<Metric> m);
  // Adds the seed's `shape=mean` row per (dtype, variant, metric): the
  // arithmetic mean of the seed points' values, as gpt_fast averages.
  Experiment& seed_mean(bool on = true);
  Experiment& model(bool on = true);  // is_model=True rows
  Experiment& protocol(Protocol p, int decode_runs = 5);
  Experiment& work(WorkFn f);
  Experiment& make(MakeFn f);
  Experiment& supported(SupportFn f);
  // Drops the points for which `f` is false: no rows at all, unlike
  // supported(), whose refusals are `skipped` rows. For a variant that
  // exists only at some shapes (a path that serves one token only), so that
  // each (shape, dtype) has one row per metric and the seed mean of a
  // variant covers the seed points it applies to.
  Experiment& applies(AppliesFn f);
  // Makes it a multi-device experiment (no work() or make()).
  Experiment& across_devices(AcrossDevices a);
  // The variant is part of the point's identity, not only the name of the
  // kernel that ran: each point's shape carries it as the label `key`
  // after the axes (`bytes=65536;kernel=read_sweep`), and so do its rows'
  // `shape`, `kbench list --points` and suspects files. For variants that
  // are measured side by side at the same shapes (roofline_ideal's ideal
  // kernels): the gate keys a row without its variant (docs/gate.md "Like
  // with like"), so without it their rows would be one key. Not with
  // seed_mean() (whose rows are `shape=mean`): Registry::add refuses both.
  Experiment& variant_in_shape(std::string key);

  // Every point in order: the axis product first, then the extra points,
  // without those applies() drops.
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
