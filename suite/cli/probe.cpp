#include "suite/probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "core/atomic_write.h"
#include "core/datasheets.h"
#include "kernels/common/cuda_check.h"
#include "suite/chain_probe.h"
#include "suite/cli.h"
#include "suite/cli/commands.h"
#include "suite/cli/setup.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "suite/ideal_kernels.h"
#include "suite/ladder_probe.h"

namespace kb::cli {

namespace {

// The chains' times (in the order of `chains`), measured as a run measures
// roofline_ideal's rows, in worker processes alone on the GPU (this
// process's context reset first: docs/decisions/0009). A failed worker
// fails the probe.
std::vector<double> chains_in_workers(const RunPlan& plan, const DeviceInfo& dev,
                                      const std::vector<Point>& chains,
                                      std::vector<Point>* all_points,
                                      std::vector<double>* all_seconds) {
  const Experiment& e = chain_experiment();
  KB_CUDA_CHECK(cudaDeviceReset());
  WorkerConfig cfg = worker_config(plan);
  cfg.info.device_label = "cuda";
  // No target files: the file the probe is about to write must not stop it.
  cfg.targets_dir.clear();
  static_assert(kChainProcesses == kDefaultProcesses, "the chains are measured as rows are");
  cfg.engine.sampled_bytes_goal =
      std::max<size_t>(cfg.engine.sampled_bytes_goal / kChainProcesses, 1);
  try {
    std::vector<Point> runs_points;
    for (const Point& p : e.points())
      if (e.unsupported_reason(p, dev.prop).empty()) runs_points.push_back(p);
    std::vector<size_t> at;
    const std::vector<Point> points = chain_worker_points(runs_points, chains, &at);
    std::vector<std::vector<double>> per_process(kChainProcesses);
    for (auto& times : per_process)
      for (const PointTime& t : measure_points_isolated(cfg, e, points, dev))
        times.push_back(t.value_s);
    // Every point's mean (the single launches fold into the rungs).
    *all_seconds = mean_over_processes(per_process);
    *all_points = points;
    std::vector<double> out;
    for (size_t k : at) out.push_back(all_seconds->at(k));
    return out;
  } catch (const std::exception& ex) {
    throw std::runtime_error(
        std::string("the ladder probe's chains, measured in worker processes as rows are, "
                    "failed: ") +
        ex.what() + "; nothing was written");
  }
}

// The ceilings, the ladder, and the rungs the workers measured faster.
struct Probed {
  ProbeResult p;
  LadderProbe lp;
  std::vector<std::string> folded;
};

// On the current device (`dev`).
Probed measure(const RunPlan& plan, const DeviceInfo& dev) {
  Probed r;
  cudaStream_t s;
  KB_CUDA_CHECK(cudaStreamCreate(&s));
  r.p = probe_ceilings(s, dev.mem_bytes, plan.quick);
  cudaStreamDestroy(s);
  {
    EngineOptions eo;
    eo.quick = plan.quick;
    Engine engine(dev, nullptr, eo, RunInfo{});
    r.lp = probe_ladder(engine, dev.sm_count, dev.mem_bytes, plan.quick);
  }
  const std::vector<Point> chains = chain_points(r.lp.max_bytes);
  std::vector<Point> worker_points;
  std::vector<double> worker_s;
  const std::vector<double> chain_s =
      chains_in_workers(plan, dev, chains, &worker_points, &worker_s);
  std::vector<std::string> reads, copies;
  for (Ideal k : kIdealReads) reads.push_back(ideal_name(k));
  for (Ideal k : kIdealCopies) copies.push_back(ideal_name(k));
  r.folded = fold_worker_rungs(r.lp.sol, worker_points, worker_s, reads, copies);
  r.lp.chain_report = set_further_launches(r.lp.sol, chains, chain_s);
  return r;
}

void print_ladder(const Probed& r) {
  std::fprintf(stderr,
               "chains: roofline_ideal's chain points measured in worker processes of their own "
               "(kbench __worker, each measuring roofline_ideal's points as a run's worker does; "
               "the mean of 3, as a row's)\n");
  for (const auto* rungs : {&r.lp.read, &r.lp.copy})
    for (const auto& rung : *rungs) {
      std::fprintf(stderr, "ladder %s %.0f B:", rungs == &r.lp.read ? "read" : "copy", rung.bytes);
      for (const auto& [k, t] : rung.median_s)
        std::fprintf(stderr, " %s %.3f us", k.c_str(), t * 1e6);
      std::fprintf(stderr, "\n");
    }
  for (const auto& line : r.folded)
    std::fprintf(stderr, "rung measured as rows are, faster than this process: %s\n", line.c_str());
  for (const auto& line : r.lp.chain_report) std::fprintf(stderr, "chain %s\n", line.c_str());
}

// An existing --write file (`path`) of this GPU: only its ladder is
// replaced, by the faster of both per rung (a bound must hold for every
// probe) unless `replace`.
void replace_ladder(const std::string& path, bool replace, const SpeedOfLight& probed,
                    const std::string& today, const DeviceInfo& dev) {
  const auto text = read_whole_file(path);
  if (!text) throw std::runtime_error(path + ": cannot read");
  const ProbedFile f =
      merge_probed_ladder(*text, path, dev.name, replace, probed, today, dev.driver);
  atomic_write(path, f.text);
  if (f.merged)
    std::printf(
        "measured.ladder of %s: the faster of the file's and this probe's (%d rungs and "
        "entries kept from the file; --replace writes this probe's alone): review the diff "
        "and commit it\n",
        path.c_str(), f.kept);
  else
    std::printf("measured.ladder of %s replaced: review the diff and commit it\n", path.c_str());
}

// A draft's targets: 80% of the roofline, each dtype and seed mean.
nlohmann::ordered_json draft_targets() {
  nlohmann::ordered_json targets = nlohmann::ordered_json::array();
  for (const auto& e : Registry::instance().all()) {
    if (e.is_across_devices()) continue;
    for (const Metric& m : e.metric_list()) {
      if (!m.has_roofline) continue;  // a relative target of no roofline is none
      std::vector<std::string> dtypes;
      for (const auto& p2 : e.points()) {
        std::string dt = dtype_name(p2.dtype);
        if (std::find(dtypes.begin(), dtypes.end(), dt) == dtypes.end()) dtypes.push_back(dt);
      }
      for (const auto& dt : dtypes)
        for (const char* shape : {"*", "mean"})
          if (shape[0] == '*' || e.has_seed_mean())
            targets.push_back({{"name", e.name()},
                               {"metric", m.name},
                               {"dtype", dt},
                               {"shape", shape},
                               {"roofline_fraction", 0.8}});
    }
  }
  return targets;
}

// A new target file, printed or written to --write: peaks from the
// datasheet table, the measured figures under `measured`, never `peaks`.
void write_draft(const std::string& write, const DeviceInfo& dev, const Probed& r,
                 const std::string& table, const std::optional<DatasheetTable>& sheets,
                 const std::string& today) {
  const ProbeResult& p = r.p;
  std::string peaks_message = sheets ? "" : table + ": no datasheet table";
  const Datasheet* sheet = sheets ? find_datasheet(*sheets, dev.name) : nullptr;
  std::string draft_message;
  nlohmann::ordered_json peaks = draft_peaks(sheet, table, dev.name, p.read_gbps, &draft_message);
  if (!draft_message.empty()) peaks_message += (peaks_message.empty() ? "" : "; ") + draft_message;
  nlohmann::ordered_json doc;
  doc["gpu"] = dev.name;
  // `gpu` takes the GPU by its exact name; a `match` of that name would also
  // take a sibling model whose name extends it (the H200 NVL).
  doc["match"] = nlohmann::ordered_json::array();
  doc["peaks"] = peaks;
  doc["measured"] = {{"read_gbps", std::round(p.read_gbps)},
                     {"copy_gbps", std::round(std::max(p.copy_gbps, p.memcpy_gbps))},
                     {"launch_us", std::round(p.launch_us * 100) / 100},
                     {"graph_node_us", std::round(p.graph_node_us * 100) / 100},
                     {"mem_latency_us", std::round(p.mem_latency_us * 100) / 100},
                     {"date", utc_now().substr(0, 10)},
                     {"driver", dev.driver}};
  doc["targets"] = draft_targets();
  const std::string text =
      set_ladder(doc.dump(), write.empty() ? "(draft)" : write, r.lp.sol, today, dev.driver);
  if (write.empty()) {
    std::printf("%s", text.c_str());
  } else {
    atomic_write(write, text);
    std::printf("draft target file written to %s%s\n", write.c_str(),
                sheet ? (": peaks from " + table + " (" + sheet->gpu + ")").c_str()
                      : ": fill in the datasheet peaks");
  }
  if (!peaks_message.empty()) std::fprintf(stderr, "kbench: probe: %s\n", peaks_message.c_str());
}

}  // namespace

int cmd_probe(const Args& a) {
  if (parse_device_spec(a.device).size() != 1)
    throw UsageError("probe measures one GPU: --device N, got '" + a.device + "'");
  // Its inputs read before it measures: one that does not parse is exit 2.
  // (--replace: the file's ladder may be what is broken; set_ladder reads the rest.)
  if (!a.write.empty() && !a.replace && std::filesystem::exists(a.write)) load_target_file(a.write);
  const RunPlan plan = run_plan(a);
  const std::string table = datasheets_path(plan.targets.path);
  std::optional<DatasheetTable> sheets;
  std::error_code exists_ec;
  if (std::filesystem::exists(table, exists_ec)) sheets = load_datasheets(table);
  const std::vector<int> devices = devices_for(a.device);
  if (devices.empty()) return kExitNoDevice;
  const int d = devices.front();
  DeviceInfo dev = query_device(d);
  // Another GPU's file would keep its name, peaks and measured values
  // around this GPU's ladder: refused before anything is measured.
  if (!a.write.empty() && std::filesystem::exists(a.write))
    if (const auto text = read_whole_file(a.write))
      if (std::string why = probe_write_refusal(*text, a.write, dev.name); !why.empty())
        throw UsageError(why);
  // The line tools/bringup.sh reads rather than matching names itself.
  std::fprintf(stderr, "%s\n", target_file_line(load_targets(plan.targets), dev.name).c_str());
  KB_CUDA_CHECK(cudaSetDevice(d));
  const Probed r = measure(plan, dev);
  print_ladder(r);
  const std::string today = utc_now().substr(0, 10);
  if (!a.write.empty() && std::filesystem::exists(a.write))
    replace_ladder(a.write, a.replace, r.lp.sol, today, dev);
  else
    write_draft(a.write, dev, r, table, sheets, today);
  return kExitOk;
}

}  // namespace kb::cli
