// What the commands that measure share: the target files, the GPUs asked
// for, the worker processes' configuration, and the rows' way out.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "core/targets.h"
#include "suite/cli/args.h"
#include "suite/device.h"
#include "suite/runner.h"

namespace kb::cli {

// --targets, else the source tree's targets/, else ./targets.
struct TargetsDir {
  std::string path;
  bool given = false;  // --targets: a folder that is not there is an error
};
TargetsDir targets_dir(const std::string& option);
std::vector<TargetFile> load_targets(const TargetsDir& dir);

// What a measuring command's options come to: nothing below sees Args.
struct RunPlan {
  TargetsDir targets;
  EngineOptions engine;  // --quick, --seed, --max-noise, --max-time, buffer sets
  double timeout_s = 0;
  int processes = 0;        // worker processes per kernel point (0: the default)
  int short_processes = 0;  // ... per point under kShortPointUs (0: the default)
  bool quick = false;
  std::string run_id;     // empty: a new one
  Injection inject;       // --inject-slowdown (fraction 0: none)
  bool write_csv = true;  // false: --no-csv
  std::string csv;
  std::string json;  // empty: no JSON
};
RunPlan run_plan(const Args& a);

// The GPUs of --device, checked against this machine's; none after
// saying why it has no CUDA device.
std::vector<int> devices_for(const std::string& spec);

// The GPU's target file, or null after a warning (the roofline fallback).
const TargetFile* target_for(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                             const std::string& dir);
// The inputs a GPU's chain reads, checked before anything is measured.
void check_gpu_inputs(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                      const WorkerConfig& cfg);

// `gpus`: how many GPUs the run measures at once (worker_processes).
WorkerConfig worker_config(const RunPlan& plan, int gpus = 1);
double injection_for(const Injection& inj, const std::string& experiment);

// Every row names the GPU and host that measured it (schema v2).
void stamp_gpu(std::vector<Record>& rows, const DeviceInfo& dev, const std::string& host);
// The step's line ("12 rows, 3.4 s, 1 failed/incorrect") and its failed rows.
std::string step_text(const std::vector<Record>& er, double seconds);
// The console table, the CSV and JSON files; the exit code of the rows.
int finish_run(const RunPlan& plan, const std::vector<Record>& rows);

}  // namespace kb::cli
