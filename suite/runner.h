// Process isolation, the parent's side (it never creates a CUDA context):
// workers (suite/worker.h) stream rows back a point at a time; a fault, hang
// or crash fails that point's rows and a new worker goes on at the next.
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
  // Worker processes per kernel point (decode: 1), and per short point.
  int processes = 1;
  int short_processes = 1;
};

// The ceiling probe in a worker: its rows; throws std::runtime_error.
std::vector<Record> run_probe_worker(const WorkerConfig& cfg, const DeviceInfo& dev,
                                     ProbeResult* probed);

// Every row of `e` on `dev`, each point in its worker processes; with
// `indices` (ascending), only those points and their seed-mean rows.
std::vector<Record> run_experiment_isolated(const WorkerConfig& cfg, const Experiment& e,
                                            const DeviceInfo& dev, const TargetFile* targets,
                                            const ProbeResult& probed,
                                            const std::vector<size_t>& indices = {});

// The rows of the given points, measured as above (`kbench run --rerun`).
std::vector<std::vector<Record>> run_points_isolated(const WorkerConfig& cfg, const Experiment& e,
                                                     const std::vector<size_t>& indices,
                                                     const DeviceInfo& dev,
                                                     const TargetFile* targets,
                                                     const ProbeResult& probed);

// The times of any points of `e`'s axes, without rows, in one worker
// process. Throws std::runtime_error naming the first point without one.
std::vector<PointTime> measure_points_isolated(const WorkerConfig& cfg, const Experiment& e,
                                               const std::vector<Point>& points,
                                               const DeviceInfo& dev);

// A multi-device experiment's rows, in one worker driving all `devices`.
std::vector<Record> run_across_devices_isolated(const WorkerConfig& cfg, const Experiment& e,
                                                const std::vector<int>& devices,
                                                const std::string& host);

}  // namespace kb
