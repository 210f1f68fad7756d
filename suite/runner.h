// Process isolation for `kbench run`, the parent's side. The parent never
// creates a CUDA context; it starts one worker process per experiment
// (`kbench __worker ...`, same binary: suite/worker.h) that measures the
// points and streams its rows back as JSON lines, one point at a time. A
// kernel fault poisons a CUDA context for good (CUDA has no recovery short
// of a new process), a hang never returns, a crash takes the process down:
// in each case the parent makes that point's rows `failed` with the reason
// and starts a new worker at the next point, so the run goes on. The same
// worker measures given points without rows for the ladder probe
// (measure_points_isolated), so that its chains are timed in a process
// like a row's.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "core/targets.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "suite/experiment.h"
#include "suite/point_wire.h"
#include "suite/probe.h"
#include "suite/rows.h"
#include "suite/worker_request.h"

namespace kb {

struct WorkerConfig {
  std::string exe;          // this binary (/proc/self/exe)
  std::string targets_dir;  // "" = none
  EngineOptions engine;
  RunInfo info;
  double timeout_s = 1800;  // per worker process
  // Worker processes that measure each kernel-protocol point, one pass
  // after another; the rows are built from their measurements together
  // (point_rows_of_processes, docs/decisions/0005-mean-of-three-worker-processes.md). Decode
  // points: always 1.
  int processes = 1;
  // Processes for a point whose timed call took under kShortPointUs in the
  // first pass (processes_for, suite/rows.h); at least `processes`.
  int short_processes = 1;
  // > 0: a point whose first `processes` medians spread by more than this
  // (a fraction) gets short_processes too (processes_after, suite/rows.h;
  // --extend-spread PCT; 0 = off).
  double spread_extend = 0;
};

// Runs the ceiling probe in a worker; fills `probed` and returns its rows.
// Throws std::runtime_error when the worker fails.
std::vector<Record> run_probe_worker(const WorkerConfig& cfg, const DeviceInfo& dev,
                                     ProbeResult* probed);

// Every row of `e` on `dev` (points in order, then the seed-mean rows),
// each kernel-protocol point measured in cfg.processes workers (a short
// one in cfg.short_processes), pass after
// pass (the points the first pass measured), its time the mean of theirs;
// with `indices` (ascending), only those points, and the seed-mean rows of
// the seed points among them (--shard keeps a seed-mean group whole).
std::vector<Record> run_experiment_isolated(const WorkerConfig& cfg, const Experiment& e,
                                            const DeviceInfo& dev, const TargetFile* targets,
                                            const ProbeResult& probed,
                                            const std::vector<size_t>& indices = {});

// The rows of the given points of `e`, in that order, measured as
// run_experiment_isolated measures them, in worker processes of their own
// (fresh allocations: a re-measure leaves whatever state the first run was
// in); a point a worker died in gets `failed` rows with the reason, and a new
// worker goes on at the next.
std::vector<std::vector<Record>> run_points_isolated(const WorkerConfig& cfg, const Experiment& e,
                                                     const std::vector<size_t>& indices,
                                                     const DeviceInfo& dev,
                                                     const TargetFile* targets,
                                                     const ProbeResult& probed);

// The times of the given points of `e` (any points of its axes: they need
// not be among e.points()), without rows, measured in one worker process of
// their own, in that order, as a row's worker measures a point
// (Engine::measure_point: the cases built and checked, the buffer sets, the
// warm-up and the sampling of run_point; `kbench __worker --measure`). The
// ladder probe times roofline_ideal's chains so (suite/chain_probe.h).
// Throws std::runtime_error naming the first point without a time and why
// (its error, or how the worker ended).
std::vector<PointTime> measure_points_isolated(const WorkerConfig& cfg, const Experiment& e,
                                               const std::vector<Point>& points,
                                               const DeviceInfo& dev);

// The rows of a multi-device experiment (Experiment::across_devices) across
// `devices`, measured in one worker process driving them all: `skipped`
// where it cannot run (one GPU, no NCCL in this build), `failed` for the
// points the worker did not finish (it died, or a wait timed out).
std::vector<Record> run_across_devices_isolated(const WorkerConfig& cfg, const Experiment& e,
                                                const std::vector<int>& devices,
                                                const std::string& host);

}  // namespace kb
