// Building rows, with no CUDA: the base record of a point, variant strings,
// targets and statuses, the rows of a measured point, failure rows, and the
// seed's `shape=mean` rows. Pure functions of plain data, so the CPU tests
// check every status a row can get; the engine (in the worker process that
// measures) and the runner (in the parent, for a worker that died) only call
// them.
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
  // Case::companion timed right after each sample: the median over the
  // sample pairs of companion time / case time (MetricInput::companion_ratio).
  std::optional<double> companion_ratio;
  size_t buffer_sets = 1;
};

// A measured point as a row's worker measured it: the case's own variant
// text and the Measurement. The parent of several worker processes builds
// the point's rows from theirs (kbench run --processes;
// combine_process_measurements).
struct MeasuredPoint {
  std::string detail;
  Measurement m;
};

// Fallback when no target file matches the GPU: every rate row's target is
// this fraction of its roofline.
inline constexpr double kFallbackRooflineFraction = 0.7;

// "a;b", or the one that is not empty.
std::string join_variant(const std::string& a, const std::string& b);

// The columns every row of one run shares: the GPU's name, driver and CUDA,
// the suite's version and commit, the run id and its timestamp.
void stamp_run(Record& r, const RunInfo& info, const GpuIdentity& gpu);

Record make_record(const RowSource& e, const Point& p, const Metric& m, const RunInfo& info,
                   const GpuIdentity& gpu);

// Sets the row's target (from the file, or the roofline fallback when
// `targets` is null) and turns an `ok` row that misses it into `below_target`.
void apply_target(Record& r, const TargetFile* targets);

// One row per metric of the point, all with `status` and `message`; the
// case's own variant text `detail` (the algorithm that ran, if known) follows
// the point's variant.
std::vector<Record> status_rows(const RowSource& e, const Point& p, const std::string& status,
                                const std::string& message, const std::string& detail,
                                const RunInfo& info, const GpuIdentity& gpu,
                                const TargetFile* targets);

// The rows of a measured point, one per metric: values, roofline and its
// limiter (`bound=` in the variant), statuses (ok, throttled when more than
// half of the samples were, failed when a metric is undefined here,
// below_target) and targets.
std::vector<Record> measured_rows(const RowSource& e, const Point& p, const std::string& detail,
                                  const Work& w, const Measurement& t, const Ceilings& ceilings,
                                  const RunInfo& info, const GpuIdentity& gpu,
                                  const TargetFile* targets);

// The seed's `shape=mean` rows: per (dtype, variant, metric), the arithmetic
// mean of the seed points' values (as gpt_fast averages), with the mean of
// their rooflines. `rows[i]` are the rows of `points[i]`, one per metric. A
// seed point without a value makes the mean `failed`; a throttled one makes
// it `throttled` (so that the gate keeps it out of baselines).
std::vector<Record> seed_mean_rows(const RowSource& e, const std::vector<Point>& points,
                                   const std::vector<std::vector<Record>>& rows,
                                   const TargetFile* targets);

// A point was measured: every row carries its time (measured_rows' rows do,
// a metric undefined on this GPU too; status_rows' failed, incorrect and
// skipped rows do not).
bool point_measured(const std::vector<Record>& rows);

// One point measured in several worker processes (`kbench run --processes
// N`, docs/decisions/0005-mean-of-three-worker-processes.md), as one Measurement whose rows
// measured_rows builds: its time (value_s, and the median column) the mean
// of the processes' (each its samples' median), min and max over all their
// samples, the samples, throttled samples and buffer sets summed, noise_rel
// the mean of theirs (the sample noise within a process), the SM clock and
// the companion ratio their means, the setup time and note the
// first's. Why the mean: where a process lands in a slow state (about half
// of them for some keys on some boards, docs/measuring.md), the mean of N
// moves by the share of slow ones, the median by the whole gap. Where the
// processes' times spread by more than 1% ((max - min) / mean) the note
// says so with each. A process most of whose samples were throttled
// (point_throttled) is left out where another was not, and the note says
// so; where all were, all count, and the rows are `throttled`. With
// `list_always` (kbench run --detail) the note lists the processes' medians
// whatever their spread. Throws std::invalid_argument for no measurements.
Measurement combine_process_measurements(const std::vector<Measurement>& each,
                                         bool list_always = false);

// The processes' times' spread: (max - min) / mean (0 for fewer than two
// or a mean not > 0). The note of combine_process_measurements and the
// rule of processes_after read the same figure.
double relative_spread(const std::vector<double>& times_s);

// A point is short where its timed call is under this (the gate's noise
// bar moves from 0.5% to 1.5% there: kgate's kBarBoundaryUs).
inline constexpr double kShortPointUs = 20;

// `kbench run`'s worker processes per kernel point on one GPU (--quick: 1;
// WorkerConfig::processes, suite/runner.h), and the most --processes takes.
inline constexpr int kDefaultProcesses = 3;
inline constexpr int kMaxProcesses = 9;
// `kbench run`'s default for WorkerConfig::short_processes where
// --processes is above 1 (--short-processes). A launch-bound point of a few
// us has process states far apart (H100: `gather_gemv D=1024
// bfloat16`'s process medians 5.50-5.70 us or 5.95-6.08 us, a third to a
// half of the processes slow), which the mean of 3 leaves at 2-2.6%
// run-to-run against the 1.5% bar; the mean of 9 about 1.0% (resampled;
// docs/decisions/0006-nine-processes-for-short-points.md).
inline constexpr int kDefaultShortProcesses = 9;

// The worker processes of `kbench run` (WorkerConfig::processes and
// short_processes) from --processes and --short-processes (0 where not
// given), --quick, and the number of GPUs measured at once. One GPU:
// kDefaultProcesses and kDefaultShortProcesses (--processes 1 or --quick:
// one for every point). On `gpus` > 1 GPUs the gate judges a night by the
// median of its GPUs, as attempts of one key (docs/gate.md), while every
// process's CUDA context and allocations queue in the host's one driver;
// so each GPU measures twice the one-GPU count shared out over the GPUs,
// ceil(2 n / gpus), never more than n (2 GPUs: 3 and 9; 4 GPUs: 2 and 5;
// 8 GPUs: 1 and 3), at least 2 under 20 us. Twice, because a median of
// rows keeps less of them than a mean: resampled, that median holds every
// key about as still as one GPU's 3 or 9
// (docs/decisions/0007-processes-shared-over-gpus.md); a single process a GPU did not (a
// launch-bound key with two states 7% apart read 3.9-4.1% against its 1.5%
// bar). A count given on the command line is each GPU's. Short never fewer
// than processes.
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

// How many worker processes measure a point whose first process's median
// timed call took `first_median_s`: `short_processes` (never fewer than
// `processes`) where that is under kShortPointUs, else `processes`. A
// point near the boundary may get either from run to run (the same
// statistic, with less or more noise).
int processes_for(double first_median_s, int processes, int short_processes);

// With `spread_extend` > 0 (a fraction; kbench run --extend-spread, off by
// default): how many processes a point gets once its first `processes`
// gave `medians_s` (those that measured it): `short_processes` (never
// fewer than `processes`) where they spread, (max - min) / mean, by more
// than `spread_extend`, else `processes`. Resampled on two H100 histories
// (docs/decisions/0006-nine-processes-for-short-points.md), 1% took the keys of
// 20 us or more whose p90 noise was over 0.5% from 6 of 62 to 0, at 3.6
// processes a point; not yet run as a nightly on a GPU.
int processes_after(const std::vector<double>& medians_s, int processes, int short_processes,
                    double spread_extend);

// What a further worker process gave for a point: its rows, and what they
// were built from (none where it did not measure it).
struct ProcessResult {
  std::vector<Record> rows;
  std::optional<MeasuredPoint> measured;
};

// The rows of a point the first worker process measured (`first`) and the
// further processes measured again: `rows_of` of their measurements
// together (combine_process_measurements). A further process that did not
// measure it makes it fail: its own failed rows (a crash, a CUDA error),
// their message saying which process, or `failed_rows(why)` where it gave
// none or its rows came without a measurement; as does a process that ran
// another kernel (`detail`) than the first. `list_always`: as
// combine_process_measurements'.
std::vector<Record> point_rows_of_processes(
    const MeasuredPoint& first, const std::vector<ProcessResult>& further,
    const std::function<std::vector<Record>(const Measurement&)>& rows_of,
    const std::function<std::vector<Record>(const std::string& why)>& failed_rows,
    bool list_always = false);

}  // namespace kb
