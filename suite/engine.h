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

#include "reports/record.h"
#include "suite/device.h"
#include "suite/experiment.h"
#include "suite/probe.h"
#include "suite/targets.h"

namespace kb {

struct EngineOptions {
  bool quick = false;           // smoke run: fewer samples, shorter budget
  double max_noise = 0.005;     // stop when the median's relative std. error is under this
  double max_time_s = 1.0;      // sampling budget per point (wall clock)
  int min_samples = 20;
  int max_samples = 5000;
  uint64_t seed = 0;            // 0 = derive from the clock (fresh data every run)
};

// Identity of one invocation, copied into every row.
struct RunInfo {
  std::string run_id, timestamp, suite_version, git_sha;
  std::string device_label = "cuda";  // "cuda", or "cuda:N" when several GPUs run
};

// Fallback when no target file matches the GPU: every rate row's target is
// this fraction of its roofline.
inline constexpr double kFallbackRooflineFraction = 0.7;

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
  std::vector<Record> probe();
  const Ceilings& ceilings() const { return ceilings_; }

  // All rows of one experiment (points in order, then the seed-mean rows).
  std::vector<Record> run(const Experiment& e);

 private:
  struct Timing;
  std::vector<Record> run_point(const Experiment& e, const Point& p, std::vector<double>* roofs);
  Timing sample(const Experiment& e, Case& c);
  void flush_l2();
  void recover_after_error();
  void create_resources();
  void destroy_resources();
  Record base_record(const Experiment& e, const Point& p, Metric m) const;
  void apply_target(Record& r, Metric m) const;

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
};

// "2026-11-22T13:45:01Z"
std::string utc_timestamp();
// A fresh id for one invocation: "20261122T134501Z-3fa9c1".
std::string new_run_id();

}  // namespace kb
