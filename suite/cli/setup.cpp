#include "suite/cli/setup.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/csv_writer.h"
#include "core/tuning.h"
#include "git_sha.h"
#include "reports/console_table.h"
#include "reports/json_writer.h"
#include "suite/cli.h"
#include "suite/engine.h"

namespace kb::cli {

namespace {

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's path (/proc/self/exe)");
  return p.string();
}

}  // namespace

TargetsDir targets_dir(const std::string& option) {
  if (!option.empty()) return {option, true};
  std::error_code ec;
  std::string src = std::string(KBENCH_SOURCE_DIR) + "/targets";
  if (std::filesystem::is_directory(src, ec)) return {src, false};
  return {"targets", false};
}

std::vector<TargetFile> load_targets(const TargetsDir& targets) {
  const std::string& dir = targets.path;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    if (targets.given) throw TargetError(dir + ": not a directory of target files");
    std::fprintf(stderr, "kbench: warning: no targets/ folder found; every GPU is unknown\n");
    return {};
  }
  return load_target_dir(dir);
}

std::vector<int> devices_for(const std::string& spec) {
  std::string why;
  const int count = cuda_device_count(&why);
  if (count == 0) {
    // CUDA says cudaErrorInsufficientDriver for both: name which, and the fix.
    std::string driver = driver_problem();
    if (!driver.empty()) why = driver + " (" + why + ")";
    std::fprintf(stderr, "kbench: no CUDA device found: %s; nothing was measured\n", why.c_str());
    return {};
  }
  std::vector<int> asked = parse_device_spec(spec);
  if (asked.empty()) {
    for (int i = 0; i < count; ++i) asked.push_back(i);
    return asked;
  }
  for (int n : asked)
    if (n >= count)
      throw UsageError("--device " + spec + " is out of range: this machine has " +
                       std::to_string(count) + " CUDA device(s) (0.." + std::to_string(count - 1) +
                       ")");
  return asked;
}

const TargetFile* target_for(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                             const std::string& dir) {
  const TargetFile* tf = match_gpu(files, dev.name);
  if (!tf) {
    std::fprintf(stderr,
                 "kbench: warning: no target file in %s matches GPU '%s'; using targets of %.0f%% "
                 "of the roofline measured now. To add one: kbench probe --device %d --write "
                 "%s/%s.json, then fill in the datasheet peaks and targets\n",
                 dir.c_str(), dev.name.c_str(), kFallbackRooflineFraction * 100, dev.index,
                 dir.c_str(), gpu_slug(dev.name).c_str());
  }
  return tf;
}

// A bad input is the run's error (exit 2), not a GPU chain the run outlives.
void check_gpu_inputs(const std::vector<TargetFile>& files, const DeviceInfo& dev,
                      const WorkerConfig& cfg) {
  const TargetFile* tf = match_gpu(files, dev.name);
  if (cfg.targets_dir.empty()) return;
  const std::string tpath = tuning_path(cfg.targets_dir, tf, dev.name);
  load_pins(tpath, dev.name, nullptr);
  load_gemv_table(tpath, dev.name, nullptr);
}

RunPlan run_plan(const Args& a) {
  RunPlan p;
  p.targets = targets_dir(a.targets);
  p.engine = a.engine;
  p.timeout_s = a.timeout_s;
  p.processes = a.processes;
  p.short_processes = a.short_processes;
  p.quick = a.quick;
  p.run_id = a.run_id;
  if (!a.inject.empty()) p.inject = parse_injection(a.inject);
  p.write_csv = !a.no_csv;
  p.csv = a.csv;
  p.json = a.json;
  return p;
}

WorkerConfig worker_config(const RunPlan& plan, int gpus) {
  WorkerConfig cfg;
  cfg.exe = self_exe();
  const std::string& tdir = plan.targets.path;
  std::error_code ec;
  if (std::filesystem::is_directory(tdir, ec)) cfg.targets_dir = tdir;
  cfg.engine = plan.engine;
  if (cfg.engine.seed == 0)  // one fresh seed per run, shared by its workers
    cfg.engine.seed = static_cast<uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count() & 0x7fffffffffffull);
  cfg.timeout_s = plan.timeout_s;
  const ProcessCounts pc = worker_processes(plan.processes, plan.short_processes, plan.quick, gpus);
  cfg.processes = pc.processes;
  cfg.short_processes = pc.short_processes;
  cfg.info.run_id = plan.run_id.empty() ? new_run_id() : plan.run_id;
  cfg.info.timestamp = utc_now();
  cfg.info.suite_version = KBENCH_VERSION;
  cfg.info.git_sha = KBENCH_GIT_SHA;
  return cfg;
}

double injection_for(const Injection& inj, const std::string& experiment) {
  return inj.fraction > 0 && std::regex_search(experiment, inj.re) ? inj.fraction : 0;
}

void stamp_gpu(std::vector<Record>& rows, const DeviceInfo& dev, const std::string& host) {
  for (auto& r : rows) {
    if (r.gpu_index.empty()) r.gpu_index = std::to_string(dev.index);
    if (r.gpu_uuid.empty()) r.gpu_uuid = dev.uuid;
    if (r.gpu_bus_id.empty()) r.gpu_bus_id = dev.pci_bus_id;
    if (r.host.empty()) r.host = host;
  }
}

std::string step_text(const std::vector<Record>& er, double seconds) {
  size_t bad = 0;
  for (const auto& r : er)
    if (r.status == status::failed || r.status == status::incorrect) ++bad;
  char head[96];
  std::snprintf(head, sizeof head, "%zu rows, %.1f s", er.size(), seconds);
  std::string s = head;
  if (bad) s += ", " + std::to_string(bad) + " failed/incorrect";
  for (const auto& r : er)
    if (r.status == status::failed || r.status == status::incorrect)
      s += "\n    " + r.shape + " " + r.dtype + " " + r.metric + ": " + r.status + ": " + r.message;
  return s;
}

int finish_run(const RunPlan& plan, const std::vector<Record>& rows) {
  std::printf("\n%s", console_table(rows).c_str());
  if (plan.write_csv) {
    const size_t columns = append_csv(plan.csv, rows);
    std::printf("%zu rows appended to %s\n", rows.size(), plan.csv.c_str());
    if (columns == csv_columns_v1())
      std::printf(
          "note: %s has CSV schema v1: its rows were written in v1, without the GPU identity "
          "columns (gpu_index, gpu_uuid, gpu_bus_id, host; docs/csv-schema.md, schema v2)\n",
          plan.csv.c_str());
  }
  if (!plan.json.empty()) write_json(plan.json, rows);
  for (const auto& r : rows)
    if (r.status == status::failed || r.status == status::incorrect) return kExitRowsFailed;
  return kExitOk;
}

}  // namespace kb::cli
