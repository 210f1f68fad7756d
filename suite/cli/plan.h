// What a run measures: the experiments a --filter selects and, with
// --shard, this shard's share of their points.
#pragma once

#include <string>
#include <vector>

#include "suite/experiment.h"
#include "suite/shard.h"

namespace kb::cli {

// The experiments of this build, one per line (for messages).
std::string experiment_names();

// The experiments --filter selects; UsageError when it selects nothing.
std::vector<const Experiment*> select(const std::string& filter);

// What one run measures: each experiment with its points (or this shard's
// share), then each multi-device experiment (one unit of the shards).
struct Step {
  const Experiment* e = nullptr;
  std::vector<size_t> indices;  // e's points in this run, ascending
};

std::vector<Step> plan_steps(const std::vector<const Experiment*>& experiments,
                             const ShardSpec& shard);

}  // namespace kb::cli
