// The measurement engine: owns every step between an experiment's
// declaration and its rows. Per point: make the Case (timed as setup),
// check it against its reference on fresh random data, warm up, sample
// (L2 flushed before each cold sample, CUDA events around run(), SM clock
// read after each sample, throttled samples flagged), summarize, and turn
// the median into metrics, rooflines, targets and statuses. Errors inside
// one point make its rows `failed` with the reason; the run goes on.
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
  // Selects the device, creates the stream, events and the L2 flush buffer.
  // `targets` may be nullptr (unknown GPU). Throws kb::CudaError.
  Engine(const DeviceInfo& dev, const TargetFile* targets, EngineOptions opts, RunInfo info);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Measures the ceilings now; returns them as rows of the `roofline_probe`
  // experiment. Where the target file has no measured ceilings, these are
  // the ones the rooflines use.
  std::vector<Record> probe(ProbeResult* result = nullptr);
  const Ceilings& ceilings() const { return ceilings_; }
  // One cold sample of `f` timed exactly as experiments' samples are (L2
  // flushed, CUDA events around the work on the engine's stream): what
  // `kbench tune` times candidates with.
  double time_cold(const std::function<void(cudaStream_t)>& f);
  // time_cold followed by what sample() does after each sample (the SM
  // clock read through NVML, a pause of some tens of us with the GPU idle),
  // so that a probe's samples see the GPU as an experiment's do (without
  // it, launch-bound kernels read 2-8% slower than as rows).
  double time_as_sample(const std::function<void(cudaStream_t)>& f);
  void set_ceilings(const Ceilings& c) { ceilings_ = c; }

  // The rows of one point, one per metric; where it was measured and
  // `measured` is given, also what its rows were built from.
  std::vector<Record> run_point(const Experiment& e, const Point& p,
                                MeasuredPoint* measured = nullptr);
  // The measurement behind run_point's rows, taken by the same code (the
  // point's cases built and checked, its buffer sets, warm-up, samples),
  // without rows: the ladder probe times roofline_ideal's chain points with
  // it, so that the further-launch cost is the rows' own time. Throws on a
  // CUDA error or a failed check.
  Measurement measure_point(const Experiment& e, const Point& p);
  // A point's buffer sets as measure_point builds them, unchecked: the
  // first given inputs as the further ones are (Case::prepare, seeds from
  // `seed`). `kbench tune gemv` times its candidates over them.
  std::vector<std::unique_ptr<Case>> build_sets(const Experiment& e, const Point& p, uint64_t seed);
  // All rows of one experiment in this process (points in order, then the
  // seed-mean rows). After a lost context the remaining points fail.
  std::vector<Record> run(const Experiment& e);

  // True once a sticky CUDA error (kernel fault) has poisoned this process's
  // context: nothing more can run in it (CUDA offers no recovery short of
  // a new process), so the runner starts a new worker.
  bool context_lost() const { return context_lost_; }

 private:
  // run_point's measurement: the first case made (timed as setup) and
  // checked, the further buffer sets (kernel protocol), the samples.
  // `detail` gets the case's variant(); a failed check returns nullopt
  // with `chk` saying why.
  std::optional<Measurement> measure(const Experiment& e, const Point& p, const std::string& label,
                                     std::string& detail, Check& chk);
  // Builds the point's further buffer sets into `cases` (its first set
  // built: as many as buffer_sets allows for what that one took of the
  // `free0` bytes free before it).
  void add_buffer_sets(const Experiment& e, const Point& p, size_t free0, uint64_t seed,
                       std::vector<std::unique_ptr<Case>>& cases);
  // Runs round-robin over `cases`, each run waited for, until warmup_done.
  void warm_up(const std::vector<Case*>& cases, bool decode);
  // Samples round-robin over `cases` (the point's buffer sets).
  Measurement sample(const Experiment& e, const std::vector<Case*>& cases);
  // One sample: L2 flushed first (cold), events around run().
  double time_once(Case& c, bool flush);
  // The timed window every sample uses: the L2 flushed first when `flush`,
  // CUDA events around f's work on the engine's stream; seconds.
  double time_window(bool flush, const std::function<void(cudaStream_t)>& f);
  void flush_l2();
  void after_error(const std::string& what);
  void create_resources();
  void destroy_resources();

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

// The note a row gets when its buffer sets' medians spread (1.4826 MAD /
// median) by more than 1.5% ("" otherwise); with `detail` (kbench run
// --detail) every row's, listing each set's median.
std::string set_spread_note(const std::vector<std::vector<double>>& per_set_seconds,
                            bool detail = false);

// The ceilings the rooflines use: the target file's measured values where it
// has them (stable from night to night), else the ones probed in this run;
// flop peaks from the file (measured, else datasheet).
Ceilings merge_ceilings(const TargetFile* targets, const ProbeResult& probed);

// Now as ISO-8601 UTC, "YYYY-MM-DDThh:mm:ssZ".
std::string utc_timestamp();
// A fresh id for one invocation: "20261122T134501Z-3fa9c1".
std::string new_run_id();

}  // namespace kb
