#include <chrono>
#include <cstdio>
#include <exception>

#include "core/csv_writer.h"
#include "suite/cli.h"
#include "suite/cli/commands.h"
#include "suite/cli/gpu_chains.h"
#include "suite/cli/plan.h"
#include "suite/cli/setup.h"
#include "suite/device.h"

namespace kb::cli {

namespace {

// What the run is about to do, where it is not the plain one-GPU run.
void print_run_outline(const ShardSpec& shard, const std::vector<Step>& steps,
                       const WorkerConfig& cfg, size_t gpus) {
  if (!shard.whole()) {
    size_t points = 0;
    for (const Step& st : steps) points += st.indices.size();
    std::printf("kbench: shard %d/%d: %zu step(s), %zu point(s) of the suite\n", shard.index,
                shard.count, steps.size(), points);
  }
  if (gpus > 1)
    std::printf(
        "kbench: %zu GPUs at once, one chain of worker processes each; a kernel point in %d "
        "worker process(es) on each GPU, %d under %g us (docs/measuring.md)\n",
        gpus, cfg.processes, cfg.short_processes, kShortPointUs);
}

// Multi-device experiments last, with every GPU of the run idle: one worker
// across them.
std::vector<Record> run_across_devices(const WorkerConfig& cfg, const std::vector<Step>& steps,
                                       const std::vector<int>& devices, const std::string& host) {
  std::vector<Record> rows;
  for (const Step& st : steps) {
    if (!st.e->is_across_devices()) continue;
    std::printf("%s across %zu GPU(s) ...", st.e->name().c_str(), devices.size());
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    auto cr = run_across_devices_isolated(cfg, *st.e, devices, host);
    std::printf(" %s\n", step_text(cr, seconds_since(t0)).c_str());
    rows.insert(rows.end(), cr.begin(), cr.end());
  }
  return rows;
}

}  // namespace

int cmd_run(const Args& a) {
  parse_device_spec(a.device);  // a malformed --device is a usage error on any machine
  if (!a.rerun.empty()) return cmd_rerun(a);
  const std::vector<Step> steps = plan_steps(select(a.filter), a.shard);
  const RunPlan plan = run_plan(a);
  auto files = load_targets(plan.targets);
  if (plan.write_csv) check_csv_appendable(plan.csv);  // refused before measuring, not after
  const std::vector<int> devices = devices_for(a.device);
  if (devices.empty()) return kExitNoDevice;

  WorkerConfig cfg = worker_config(plan, static_cast<int>(devices.size()));
  cfg.info.device_label = "cuda";  // cuda:N where the run has several GPUs
  const std::string host = host_name();
  print_run_outline(a.shard, steps, cfg, devices.size());

  for (int d : devices) {
    DeviceInfo dev;
    try {
      dev = query_device(d);
    } catch (const std::exception&) {
      continue;  // its chain makes its rows failed, saying why
    }
    check_gpu_inputs(files, dev, cfg);
  }

  std::vector<Record> rows = run_gpu_chains(plan, cfg, devices, steps, files, host);
  const auto across = run_across_devices(cfg, steps, devices, host);
  rows.insert(rows.end(), across.begin(), across.end());
  return finish_run(plan, rows);
}

}  // namespace kb::cli
