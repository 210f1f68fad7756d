// Building rows from an experiment's points, with no CUDA call: the base
// record of a point, targets and statuses, failure rows, and the seed's
// `shape=mean` rows. Shared by the engine (in the worker process that
// measures) and the runner (in the parent process that fills in rows for a
// worker that died).
#pragma once

#include <string>
#include <vector>

#include "reports/record.h"
#include "suite/device.h"
#include "suite/experiment.h"
#include "suite/targets.h"

namespace kb {

// Identity of one invocation, copied into every row.
struct RunInfo {
  std::string run_id, timestamp, suite_version, git_sha;
  std::string device_label = "cuda";  // "cuda", or "cuda:N" when several GPUs run
};

// Fallback when no target file matches the GPU: every rate row's target is
// this fraction of its roofline.
inline constexpr double kFallbackRooflineFraction = 0.7;

Record make_record(const Experiment& e, const Point& p, Metric m, const RunInfo& info,
                   const DeviceInfo& dev);

// Sets the row's target (from the file, or the roofline fallback when
// `targets` is null) and turns an `ok` row that misses it into `below_target`.
void apply_target(Record& r, Metric m, const TargetFile* targets);

// One row per metric of the point, all with `status` and `message`.
std::vector<Record> status_rows(const Experiment& e, const Point& p, const std::string& status,
                                const std::string& message, const RunInfo& info,
                                const DeviceInfo& dev, const TargetFile* targets);

// The seed's `shape=mean` rows: per (dtype, variant, metric), the arithmetic
// mean of the seed points' values (as gpt_fast averages), with the mean of
// their rooflines. `rows[i]` are the rows of `points[i]`, one per metric.
std::vector<Record> seed_mean_rows(const Experiment& e, const std::vector<Point>& points,
                                   const std::vector<std::vector<Record>>& rows,
                                   const TargetFile* targets);

}  // namespace kb
