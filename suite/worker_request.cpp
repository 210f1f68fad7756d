#include "suite/worker_request.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kb {

// What travels: the rest of EngineOptions is effective_options', the rest of
// RunInfo the worker's build.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EngineOptions, quick, max_noise, max_time_s, seed,
                                   max_buffer_sets, sampled_bytes_goal, check, inject_slowdown,
                                   detail)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunInfo, device_label, run_id, timestamp)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkerRequest, device, targets_dir, engine, info, probe,
                                   experiment, points, measure, devices, probed, out)

std::vector<std::string> worker_argv(const std::string& exe, const WorkerRequest& r) {
  WorkerRequest w = r;
  // Whole MiB, as --buffer-mib gives them: a pass's share of the bytes rounds.
  w.engine.sampled_bytes_goal = w.engine.sampled_bytes_goal >> 20 << 20;
  return {exe, "__worker", nlohmann::json(w).dump()};
}

WorkerRequest parse_worker_request(int argc, char** argv) {
  if (argc != 3) throw std::invalid_argument("a worker takes one request");
  try {
    return nlohmann::json::parse(argv[2]).get<WorkerRequest>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("not a worker request: ") + e.what());
  }
}

}  // namespace kb
