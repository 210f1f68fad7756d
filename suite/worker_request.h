// What one worker process (`kbench __worker`, suite/runner.h) is asked to
// do: written by the parent as the worker's command line (worker_argv) and
// read back by the worker (parse_worker_request), in one place so that the
// two cannot drift. No CUDA here: the CPU tests use it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "suite/rows.h"
#include "suite/sampling.h"

namespace kb {

struct WorkerRequest {
  int device = 0;
  std::string targets_dir;  // "" = none
  EngineOptions engine;
  RunInfo info;  // device_label, run_id and timestamp travel; the rest is the build's
  // One of: the ceiling probe; an experiment's points from `from` to the
  // end, or exactly `points` (in that order); the times of the points
  // `measure` names (point_wire's points_arg), without rows; a multi-device
  // experiment across `devices`.
  bool probe = false;
  std::string experiment;
  size_t from = 0;
  std::vector<size_t> points;
  std::string measure;
  std::vector<int> devices;
  std::string probed;  // the ceilings the rows use (runner's probed_arg)
  std::string out;     // the file the worker appends its JSON lines to
};

// `exe __worker` and the options that say `r`.
std::vector<std::string> worker_argv(const std::string& exe, const WorkerRequest& r);
// argv as worker_argv wrote it (argv[1] is "__worker"). Throws
// std::invalid_argument on an option it does not know: the parent wrote
// it, so that is a bug.
WorkerRequest parse_worker_request(int argc, char** argv);

}  // namespace kb
