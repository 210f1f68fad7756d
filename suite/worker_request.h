// What a worker process is asked to do, as its command line and back, in
// one place so that the two cannot drift. No CUDA here.
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
  // One of: the probe; an experiment's `points`; the times of the points
  // `measure` names; a multi-device experiment.
  bool probe = false;
  std::string experiment;
  std::vector<size_t> points;
  std::string measure;
  std::vector<int> devices;
  std::string probed;  // the ceilings the rows use (runner's probed_arg)
  std::string out;     // the file the worker appends its JSON lines to
};

// `exe __worker REQUEST`, the request as one JSON argument.
std::vector<std::string> worker_argv(const std::string& exe, const WorkerRequest& r);
// argv as worker_argv wrote it; std::invalid_argument otherwise (a bug).
WorkerRequest parse_worker_request(int argc, char** argv);

}  // namespace kb
