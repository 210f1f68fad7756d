// `kgate bringup`: the bring-up report of a new GPU (docs/bringup.md), its
// sections (bringup.cpp, bringup_a100.cpp) and drafted target file
// (bringup_draft.cpp) all read from one run: RunView.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/datasheets.h"
#include "core/targets.h"
#include "reports/bringup_report.h"
#include "tools/kgate/history.h"

namespace kb {

// Nothing to report on: the results hold no run of the GPU asked for.
struct BringupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BringupInputs {
  std::string gpu;            // the GPU brought up: "" = the GPU of the newest run
  std::string reference;      // a GPU name searched in the results, or the reference file's path
  std::string reference_gpu;  // with a reference file: which of its GPUs ("": the other)
  std::string results_names;  // the results files, for messages
  std::string reference_problem;  // the reference file could not be read (why)
  std::string targets_dir;        // "" = no target files
  std::vector<TargetFile> targets;
  std::optional<DatasheetTable> datasheets;
  std::string datasheets_path, datasheets_problem;  // why there is no table
  std::string tuning_dir;                           // targets_dir + "/tuning"
  // --probe FILE (the probe's draft, whose `measured` the drafted file
  // takes whole): its text, or why it could not be read.
  std::string probe_path, probe_text, probe_problem;
  double threshold = 0.10;
  // --all-runs: each drafted target from the slowest of the GPU's runs in
  // the results (every board), with the boards' spread; else the newest run.
  bool all_runs = false;
};

// `reference_file`: the history of --reference FILE (nullptr for a name).
// Throws BringupError when `results` has no run of the GPU; any other
// problem is a line of BringupReport::problems.
BringupReport build_bringup(const History& results, const History* reference_file,
                            const BringupInputs& in);

// Where a row's kernel choices are tuned per GPU ("" for none); the MLP's
// one-token rows (their variant says so) run the GEMV kernel.
std::string tuning_pointer(const std::string& experiment);
std::string tuning_pointer(const std::string& experiment, const std::string& variant);

// The run reported on: one run of one GPU, its own measurement (attempt 1).
struct RunView {
  const History* h = nullptr;
  uint32_t run = 0;
  std::string arch;
  std::vector<const Observation*> obs;
  const Key& key(const Observation* o) const { return h->keys()[o->key]; }
  const Observation* find(const std::string& name, const std::string& metric,
                          const std::string& dtype, const std::string& shape) const {
    for (const auto* o : obs) {
      const Key& k = key(o);
      if (k.name == name && k.metric == metric && k.dtype == dtype && k.shape == shape) return o;
    }
    return nullptr;
  }
  // The largest measured value of a metric, of one dtype where `dtype` is given.
  std::optional<double> best(const std::string& name, const std::string& metric,
                             const char* dtype = nullptr) const {
    std::optional<double> b;
    for (const auto* o : obs)
      if (key(o).name == name && key(o).metric == metric && (!dtype || key(o).dtype == dtype) &&
          o->measured())
        b = std::max(b.value_or(0), o->actual);
    return b;
  }
  std::optional<double> probe(const std::string& metric) const {
    return best("roofline_probe", metric);
  }
};

// The ceilings a run measures, in the report's order: the probe's rows, and
// the fastest of the suite's cuBLASLt GEMMs of a dtype (TFLOP/s). The
// drafted target file's `measured` takes them too.
struct CeilingSpec {
  const char* name;    // in the report
  const char* metric;  // the probe row's metric, or (gemm) the GEMM's dtype
  bool gemm;
  const char* measured;  // the target file's `measured` field, rounded to `step`
  double step;
  DatasheetFigure Datasheet::*figure;  // nullptr: no datasheet figure
  const char* note;
  std::optional<double> of(const RunView& v) const {
    return gemm ? v.best("gemm", "tflops", metric) : v.probe(metric);
  }
};
inline const CeilingSpec kCeilings[] = {
    {"read bandwidth (GB/s)", "read_bandwidth(GB/s)", false, "read_gbps", 1, &Datasheet::hbm_gbps,
     "probe: the faster of two streaming read kernels, 2 GiB"},
    {"copy bandwidth (GB/s)", "copy_bandwidth(GB/s)", false, "copy_gbps", 1, &Datasheet::hbm_gbps,
     "bytes read + written: the faster of the copy kernel and cudaMemcpy"},
    {"launch (us)", "launch(us)", false, "launch_us", 0.01, nullptr,
     "empty kernel, 4 blocks of 128 threads per SM, event-timed behind a busy GPU; no "
     "datasheet figure"},
    {"graph node (us)", "graph_node(us)", false, "graph_node_us", 0.01, nullptr,
     "per node of a captured graph of 100 empty kernels; no datasheet figure"},
    {"HBM round trip (us)", "mem_latency(us)", false, "mem_latency_us", 0.01, nullptr,
     "one 16-byte read on a cold L2 minus an empty kernel; no datasheet figure"},
    {"bf16 GEMM (TFLOP/s)", "bfloat16", true, "bf16_tflops", 1, &Datasheet::bf16_tflops,
     "the fastest of the run's cuBLASLt GEMMs (gemm); datasheet: dense"},
    {"fp8 GEMM (TFLOP/s)", "fp8_e4m3", true, "fp8_tflops", 1, &Datasheet::fp8_tflops,
     "the fastest of the run's cuBLASLt GEMMs (gemm, e4m3); datasheet: dense"},
};

// The limiter a row's variant names ("memory", "compute", "launch"; "" = none).
inline std::string bound_of(const std::string& variant) {
  const auto p = variant.find("bound=");
  if (p == std::string::npos) return "";
  auto e = variant.find(';', p);
  return variant.substr(p + 6, e == std::string::npos ? std::string::npos : e - p - 6);
}

// The peak of a row's dtype in a datasheet entry.
inline std::optional<double> dtype_peak(const Datasheet* d, const std::string& dtype) {
  if (!d) return std::nullopt;
  if (dtype == "bfloat16") return d->bf16_tflops.value;
  if (dtype == "float16") return d->f16_tflops.value;
  if (dtype == "int8") return d->int8_tops.value;
  if (dtype == "fp8_e4m3") return d->fp8_tflops.value;
  if (dtype == "float32") return d->tf32_tflops.value;
  return std::nullopt;
}

std::string targets_dir_name(const BringupInputs& in);

// The seed's rows against the seed's A100 targets (bringup_a100.cpp).
void add_a100(BringupReport& r, const BringupInputs& in, const RunView& here, const Datasheet* ds);

// The target file drafted from the run (docs/bringup.md "The drafted target
// file"); none, with a problem, where it would have no HBM bandwidth or
// would not read back as a target file.
struct DraftInputs {
  const RunView& run;             // the run brought up
  const BringupReport& report;    // its GPU, run id, commit, driver and time
  const BringupInputs& in;        // --probe and the datasheet table's path
  const Datasheet* datasheet;     // the GPU's entry (nullptr: not in the table)
  const TargetFile* run_targets;  // where the run's rooflines came from (nullptr: none)
};

struct DraftedTargetFile {
  std::string json;                   // the file's text; "" = none (problems say why)
  std::vector<std::string> notes;     // for the report
  std::vector<std::string> problems;  // input problems: kgate exits 2
};

DraftedTargetFile draft_target_file(const DraftInputs& in);

// The fraction rounded down to 0.01, within [0.01, 1] (0 would never fail).
double drafted_fraction(double fraction);

}  // namespace kb
