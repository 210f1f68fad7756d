#include "suite/cli/gpu_chains.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "core/tuning.h"
#include "suite/cli/setup.h"
#include "suite/device.h"
#include "suite/engine.h"

namespace kb::cli {

namespace {

// Console lines of several GPUs' chains at once: each line written whole,
// prefixed with its GPU when there are several.
class Console {
 public:
  explicit Console(bool prefixed) : prefixed_(prefixed) {}
  void line(int device, const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (prefixed_)
      std::printf("[gpu %d] %s\n", device, text.c_str());
    else
      std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }

 private:
  bool prefixed_;
  std::mutex mu_;
};

// The rows of steps that could not run on a GPU, `failed` with the reason.
std::vector<Record> failed_steps(const std::vector<Step>& steps, const std::string& why,
                                 const WorkerConfig& cfg, const GpuIdentity& gpu,
                                 const TargetFile* tf) {
  std::vector<Record> rows;
  for (const Step& st : steps) {
    if (st.e->is_across_devices()) continue;
    const auto points = st.e->points();
    std::vector<Point> ps;
    std::vector<std::vector<Record>> per;
    for (size_t i : st.indices) {
      ps.push_back(points[i]);
      per.push_back(
          status_rows(st.e->source(), points[i], status::failed, why, "", cfg.info, gpu, tf));
      rows.insert(rows.end(), per.back().begin(), per.back().end());
    }
    auto means = seed_mean_rows(st.e->source(), ps, per, tf);
    rows.insert(rows.end(), means.begin(), means.end());
  }
  return rows;
}

// The chain's first lines: the GPU, its target file, and the cuBLASLt and
// GEMV choices its tuning table pins.
void print_gpu_head(Console& con, int d, const WorkerConfig& cfg, const DeviceInfo& dev,
                    const TargetFile* tf) {
  char head[512];
  std::snprintf(head, sizeof head,
                "kbench %s: %s (device %d, %s, %s, %d SMs, %zu MB L2, driver %s, CUDA %s), "
                "targets: %s",
                cfg.info.run_id.c_str(), dev.name.c_str(), d, dev.pci_bus_id.c_str(),
                dev.uuid.c_str(), dev.sm_count, dev.l2_bytes >> 20, dev.driver.c_str(),
                dev.cuda.c_str(), tf ? tf->path.c_str() : "roofline fallback");
  con.line(d, head);
  if (cfg.targets_dir.empty()) return;
  const std::string tpath = tuning_path(cfg.targets_dir, tf, dev.name);
  std::string warning;
  const auto pins = load_pins(tpath, dev.name, &warning);
  if (!warning.empty()) std::fprintf(stderr, "kbench: warning: %s\n", warning.c_str());
  con.line(d, "cuBLASLt choices: " +
                  (pins.empty() ? "none pinned (" + tpath + " " +
                                      (warning.empty() ? "does not exist" : "not used") +
                                      "): the heuristic's first choice; kbench tune writes the "
                                      "table"
                                : std::to_string(pins.size()) + " pinned in " + tpath));
  std::string gemv_warning;
  const auto table = load_gemv_table(tpath, dev.name, &gemv_warning);
  if (!gemv_warning.empty()) std::fprintf(stderr, "kbench: warning: %s\n", gemv_warning.c_str());
  con.line(d, "GEMV choices: " + (table.empty() ? "the generic rule (no gemv table in " + tpath +
                                                      (gemv_warning.empty() ? "" : ": not used") +
                                                      "; kbench tune gemv writes it)"
                                                : std::to_string(table.size()) + " buckets in " +
                                                      tpath + ", the generic rule elsewhere"));
}

// The ceilings the rows use, and what the probe measured now.
std::string ceilings_line(const TargetFile* tf, const ProbeResult& probed) {
  const Ceilings c = merge_ceilings(tf, probed);
  char line[640];
  std::snprintf(
      line, sizeof line,
      "ceilings used: read %.0f GB/s, copy %.0f GB/s, launch %.2f us, graph node %.2f us, "
      "HBM latency %.2f us, bf16 %.0f TFLOP/s, int8 %.0f TOP/s; measured now: read %.0f, "
      "copy %.0f (cudaMemcpy %.0f), launch %.2f us, graph node %.2f us, HBM latency %.2f us",
      c.read_gbps, c.copy_gbps, c.launch_us, c.graph_node_us, c.mem_latency_us, c.bf16_tflops,
      c.int8_tops, probed.read_gbps, probed.copy_gbps, probed.memcpy_gbps, probed.launch_us,
      probed.graph_node_us, probed.mem_latency_us);
  return line;
}

// Each step in its own worker processes; one that throws: its failed rows.
std::vector<Record> run_steps(WorkerConfig& cfg, int d, const DeviceInfo& dev, const TargetFile* tf,
                              const ProbeResult& probed, const std::vector<Step>& steps,
                              const Injection& inject, Console& con) {
  std::vector<Record> rows;
  size_t n = 0, total = 0;
  for (const Step& st : steps) total += st.e->is_across_devices() ? 0 : 1;
  for (const Step& st : steps) {
    if (st.e->is_across_devices()) continue;
    const Experiment& e = *st.e;
    ++n;
    auto t0 = std::chrono::steady_clock::now();
    cfg.engine.inject_slowdown = injection_for(inject, e.name());
    std::vector<Record> er;
    try {
      er = run_experiment_isolated(cfg, e, dev, tf, probed, st.indices);
    } catch (const std::exception& ex) {
      er = failed_steps({st}, ex.what(), cfg, gpu_identity(dev), tf);
    }
    con.line(d, "[" + std::to_string(n) + "/" + std::to_string(total) + "] " + e.name() + ": " +
                    step_text(er, seconds_since(t0)));
    rows.insert(rows.end(), er.begin(), er.end());
  }
  return rows;
}

// One GPU's chain: its ceiling probe, then each step in worker processes.
// Chains of several GPUs run at once, a thread each (the references run in
// the workers); whatever goes wrong becomes this GPU's failed rows.
// `dev`: its index in, the GPU out (where it can be queried).
std::vector<Record> run_chain(const RunPlan& plan, WorkerConfig cfg, DeviceInfo& dev,
                              const std::vector<Step>& steps, const std::vector<TargetFile>& files,
                              Console& con) {
  const int d = dev.index;
  try {
    dev = query_device(d);
  } catch (const std::exception& ex) {
    return failed_steps(steps, "cannot query GPU " + std::to_string(d) + ": " + ex.what(), cfg,
                        gpu_identity(dev), nullptr);
  }
  const TargetFile* tf = target_for(files, dev, plan.targets.path);
  print_gpu_head(con, d, cfg, dev, tf);
  std::vector<Record> rows;
  ProbeResult probed;
  try {
    rows = run_probe_worker(cfg, dev, &probed);
  } catch (const std::exception& ex) {
    con.line(
        d, std::string("the ceiling probe failed: ") + ex.what() + ": this GPU's rows are failed");
    return failed_steps(steps, std::string("the ceiling probe failed on this GPU: ") + ex.what(),
                        cfg, gpu_identity(dev), tf);
  }
  con.line(d, ceilings_line(tf, probed));
  auto measured = run_steps(cfg, d, dev, tf, probed, steps, plan.inject, con);
  rows.insert(rows.end(), measured.begin(), measured.end());
  return rows;
}

}  // namespace

std::vector<Record> run_gpu_chains(const RunPlan& plan, const WorkerConfig& cfg,
                                   const std::vector<int>& devices, const std::vector<Step>& steps,
                                   const std::vector<TargetFile>& files, const std::string& host) {
  // Several GPUs in one run: each row says which (cuda:N); the gate takes
  // them as attempts of one key (docs/gate.md).
  const bool several = devices.size() > 1;
  Console con(several);
  std::vector<std::vector<Record>> per_gpu(devices.size());
  std::vector<std::exception_ptr> stopped(devices.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < devices.size(); ++k) {
    WorkerConfig c = cfg;
    if (several) c.info.device_label = "cuda:" + std::to_string(devices[k]);
    threads.emplace_back([&, c, k] {
      DeviceInfo dev;
      dev.index = devices[k];
      dev.name = "unknown";
      try {
        per_gpu[k] = run_chain(plan, c, dev, steps, files, con);
        stamp_gpu(per_gpu[k], dev, host);
      } catch (...) {  // run_chain turns errors into rows; this is a bug
        stopped[k] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  // A GPU without its rows must not leave a run that reads as complete.
  for (const auto& e : stopped)
    if (e) std::rethrow_exception(e);
  std::vector<Record> rows;
  for (auto& r : per_gpu) rows.insert(rows.end(), r.begin(), r.end());
  return rows;
}

}  // namespace kb::cli
