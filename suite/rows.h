// Building rows from plain data, with no CUDA (the CPU tests check every status).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics.h"  // kRooflineModelNote
#include "core/record.h"
#include "core/roofline.h"
#include "core/targets.h"
#include "core/types.h"
#include "suite/stats.h"

namespace kb {

// Identity of one invocation, copied into every row.
struct RunInfo {
  std::string run_id, timestamp, suite_version, git_sha;
  std::string device_label = "cuda";  // "cuda", or "cuda:N" when several GPUs run
};

// The GPU as rows name it.
struct GpuIdentity {
  std::string name, driver, cuda;
};

// What row building needs of an experiment (kb::Experiment::source()).
struct RowSource {
  std::string name;
  bool is_model = false;
  bool seed_mean = false;
  std::vector<Metric> metrics;
};

// One point's timing, as the engine measured it.
struct Measurement {
  Summary summary;     // over the samples used (samples_to_use)
  double value_s = 0;  // the statistic the metrics use: median (kernel) or mean (decode)
  size_t throttled = 0, total = 0;
  std::optional<double> sm_clock_mhz, mem_clock_mhz;
  double setup_s = 0;  // the Case's construction (compilation_time)
  std::string inject;  // "inject=5%": the variant field of an injected slowdown ("" = none)
  std::string note;    // for the rows' message (how it ran, e.g. the buffer sets' spread)
  std::optional<double> companion_ratio;  // MetricInput::companion_ratio
  size_t buffer_sets = 1;
};

// A measured point: the case's own variant text and its Measurement.
struct MeasuredPoint {
  std::string detail;
  Measurement m;
};

// Without a target file, a row's target is this fraction of its roofline.
inline constexpr double kFallbackRooflineFraction = 0.7;

// "a;b", or the one that is not empty.
std::string join_variant(const std::string& a, const std::string& b);

// The columns every row of one run shares (GPU, versions, run id, time).
void stamp_run(Record& r, const RunInfo& info, const GpuIdentity& gpu);

// A row of the point and metric; `detail` (the case's variant text) joins the point's variant.
Record make_record(const RowSource& e, const Point& p, const Metric& m, const RunInfo& info,
                   const GpuIdentity& gpu, const std::string& detail = "");

// The row's target (the file's, or the roofline fallback without one); an
// `ok` row that misses it becomes `below_target`, unless this run's probe
// launched slower than the file's host by enough to explain the miss
// (decisions/0055, as kgate judges it): then it stays `ok`, with a note.
void apply_target(Record& r, const TargetFile* targets, double probe_launch_us = 0);

// One row per metric, all with `status` and `message`.
std::vector<Record> status_rows(const RowSource& e, const Point& p, const std::string& status,
                                const std::string& message, const std::string& detail,
                                const RunInfo& info, const GpuIdentity& gpu,
                                const TargetFile* targets);

// The rows of a measured point, one per metric (the limiter in the variant).
std::vector<Record> measured_rows(const RowSource& e, const Point& p, const std::string& detail,
                                  const Work& w, const Measurement& t, const Ceilings& ceilings,
                                  const RunInfo& info, const GpuIdentity& gpu,
                                  const TargetFile* targets);

// The seed's `shape=mean` rows: per (dtype, variant, metric) the mean of the
// seed points' values and rooflines (`rows[i]` are `points[i]`'s).
std::vector<Record> seed_mean_rows(const RowSource& e, const std::vector<Point>& points,
                                   const std::vector<std::vector<Record>>& rows,
                                   const TargetFile* targets);

// Every row carries a time (measured_rows' do, status_rows' do not).
bool point_measured(const std::vector<Record>& rows);

// One point's worker processes as one Measurement: the mean of their medians
// (docs/decisions/0005), a mostly throttled process left out where another
// was not; the note lists the medians where they spread by more than 1%
// (always with `list_always`). Throws std::invalid_argument for none.
Measurement combine_process_measurements(const std::vector<Measurement>& each,
                                         bool list_always = false);

// (max - min) / mean; 0 for fewer than two or a mean not > 0.
double relative_spread(const std::vector<double>& times_s);

// A point is short under this (kgate's noise bar boundary, kBarBoundaryUs).
inline constexpr double kShortPointUs = 20;

// Worker processes per kernel point on one GPU, the most --processes takes,
// and the count for short points (their process states are far apart:
// docs/decisions/0006-nine-processes-for-short-points.md).
inline constexpr int kDefaultProcesses = 3;
inline constexpr int kMaxProcesses = 9;
inline constexpr int kDefaultShortProcesses = 9;

// The worker processes from --processes and --short-processes (0: not
// given), --quick and the GPUs measured at once (docs/decisions/0007).
struct ProcessCounts {
  int processes = 1, short_processes = 1;
};
inline ProcessCounts worker_processes(int given, int given_short, bool quick, int gpus) {
  const int share = given > 0 || gpus < 1 ? 1 : gpus;
  auto shared = [&](int n) { return std::min(n, (2 * n + share - 1) / share); };
  ProcessCounts c;
  c.processes = given > 0 ? given : quick ? 1 : shared(kDefaultProcesses);
  const int short_default = given_short > 0       ? given_short
                            : quick || given == 1 ? 1
                            : given > 1           ? kDefaultShortProcesses
                                                  : std::max(2, shared(kDefaultShortProcesses));
  c.short_processes = std::max(c.processes, short_default);
  return c;
}

// `short_processes` for a first median under kShortPointUs, else `processes`.
int processes_for(double first_median_s, int processes, int short_processes);

// A further worker process's rows of a point, and what they were built from.
struct ProcessResult {
  std::vector<Record> rows;
  std::optional<MeasuredPoint> measured;
};

// The point's rows from its processes (`rows_of` their combination); a
// further process that did not measure it, or ran another kernel, fails it.
std::vector<Record> point_rows_of_processes(
    const MeasuredPoint& first, const std::vector<ProcessResult>& further,
    const std::function<std::vector<Record>(const Measurement&)>& rows_of,
    const std::function<std::vector<Record>(const std::string& why)>& failed_rows,
    bool list_always = false);

}  // namespace kb
