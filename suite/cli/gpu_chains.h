// `kbench run` on several GPUs at once: one chain of worker processes per
// GPU, each in a thread of its own (suite/cli/gpu_chains.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "core/targets.h"
#include "suite/cli/plan.h"
#include "suite/cli/setup.h"
#include "suite/runner.h"

namespace kb::cli {

// Every GPU of `devices` at once measures `steps` (not the multi-device
// ones); the rows in the order of `devices`, a GPU's errors its failed rows.
std::vector<Record> run_gpu_chains(const RunPlan& plan, const WorkerConfig& cfg,
                                   const std::vector<int>& devices, const std::vector<Step>& steps,
                                   const std::vector<TargetFile>& files, const std::string& host);

}  // namespace kb::cli
