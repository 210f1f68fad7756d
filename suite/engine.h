// The measurement engine, the one protocol (docs/measuring.md): per point,
// make the Case, check it, build its buffer sets, warm up, sample, and build
// the rows. An error inside a point fails its rows; the run goes on.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/record.h"
#include "core/targets.h"
#include "suite/device.h"
#include "suite/experiment.h"
#include "suite/probe.h"
#include "suite/rows.h"
#include "suite/sampling.h"

namespace kb {

class Engine {
 public:
  // `targets` may be nullptr (unknown GPU). Throws kb::CudaError.
  Engine(const DeviceInfo& dev, const TargetFile* targets, EngineOptions opts, RunInfo info);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Measures the ceilings (the rooflines' where the target file has none);
  // returns them as `roofline_probe` rows.
  std::vector<Record> probe(ProbeResult* result = nullptr);
  const Ceilings& ceilings() const { return ceilings_; }
  // One cold sample of `f`, timed as experiments' samples are.
  double time_cold(const std::function<void(cudaStream_t)>& f);
  // time_cold and a sample's SM clock read (without that gap launch-bound
  // kernels read 2-8% slower).
  double time_as_sample(const std::function<void(cudaStream_t)>& f);
  void set_ceilings(const Ceilings& c) { ceilings_ = c; }

  // The rows of one point; `measured` (optional) gets what they came from.
  std::vector<Record> run_point(const Experiment& e, const Point& p,
                                MeasuredPoint* measured = nullptr);
  // run_point's measurement without rows (the ladder probe's chains).
  // Throws on a CUDA error or a failed check.
  Measurement measure_point(const Experiment& e, const Point& p);
  // A point's buffer sets, prepared, none checked (`kbench tune gemv`).
  std::vector<std::unique_ptr<Case>> build_sets(const Experiment& e, const Point& p, uint64_t seed);
  // All rows of one experiment: its points', then the seed-mean rows.
  std::vector<Record> run(const Experiment& e);

  // A sticky CUDA error poisoned the context: only a new process can go on.
  bool context_lost() const { return context_lost_; }

 private:
  // run_point's measurement; nullopt for a failed check (`chk` says why).
  std::optional<Measurement> measure(const Experiment& e, const Point& p, const std::string& label,
                                     std::string& detail, Check& chk);
  // The further buffer sets, as many as buffer_sets() allows.
  void add_buffer_sets(const Experiment& e, const Point& p, size_t free0, uint64_t seed,
                       std::vector<std::unique_ptr<Case>>& cases);
  // Runs round-robin over `cases`, each run waited for, until warmup_done.
  void warm_up(const std::vector<Case*>& cases, bool decode);
  // Samples round-robin over `cases` (the point's buffer sets).
  Measurement sample(const Experiment& e, const std::vector<Case*>& cases);
  // The timed window of every sample, in seconds: L2 flushed first (cold).
  double time_window(bool flush, const std::function<void(cudaStream_t)>& f);
  void after_error(const std::string& what);

  DeviceInfo dev_;
  const TargetFile* targets_;
  EngineOptions opts_;
  RunInfo info_;
  Ceilings ceilings_;
  std::unique_ptr<ClockMonitor> clocks_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_buf_ = nullptr;
  size_t flush_bytes_ = 0;
  uint64_t seed_ = 0;
  bool context_lost_ = false;
};

// The target file's measured ceilings where it has them, else the probe's.
Ceilings merge_ceilings(const TargetFile* targets, const ProbeResult& probed);

// A fresh id for one invocation: "20261122T134501Z-3fa9c1".
std::string new_run_id();

}  // namespace kb
