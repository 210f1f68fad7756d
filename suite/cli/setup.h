// What the commands that measure share: the target files, the GPUs asked
// for, the worker processes' configuration, and the rows' way out.
#pragma once

#include <string>
#include <vector>

#include "reports/record.h"
#include "suite/cli/args.h"
#include "suite/device.h"
#include "suite/runner.h"
#include "suite/targets.h"

namespace kb::cli {

// Default targets/: the source tree's, else ./targets.
std::string targets_dir(const Args& a, bool* explicit_dir);
std::vector<TargetFile> load_targets(const Args& a);

// Refuse before measuring, not after: a results file with another header.
void precheck_csv(const std::string& path);

// The GPUs of --device, checked against the `count` this machine has.
std::vector<int> devices_for(const std::string& spec, int count);
// How many CUDA devices there are; 0 after saying why there are none.
int require_devices();

// The GPU's target file, or null after a warning (roofline fallback).
const TargetFile* target_for(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                             const Args& a);
// The inputs a GPU's chain reads, checked before anything is measured.
void check_gpu_inputs(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                      const WorkerConfig& cfg);

// `gpus`: how many GPUs the run measures at once (worker_processes).
WorkerConfig worker_config(const Args& a, int gpus = 1);
double injection_for(const Injection& inj, const std::string& experiment);

// Every row names the GPU and host that measured it (schema v2).
void stamp_gpu(std::vector<Record>& rows, const DeviceInfo& dev, const std::string& host);
// The step's line ("12 rows, 3.4 s, 1 failed/incorrect") and its failed rows.
std::string step_text(const std::vector<Record>& er, double seconds);
// The console table, the CSV and JSON files; the exit code of the rows.
int finish_run(const Args& a, const std::vector<Record>& rows);

}  // namespace kb::cli
