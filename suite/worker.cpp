#include "suite/worker.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/tuning.h"
#include "git_sha.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemv/dispatch.h"
#include "reports/json_writer.h"
#include "suite/engine.h"
#include "suite/experiment.h"
#include "suite/point_wire.h"
#include "suite/worker_request.h"

namespace kb {

namespace {

using nlohmann::json;

void write(std::ofstream& out, const json& j) { out << j.dump() << "\n"; }

// A multi-device experiment across r.devices: its rows, written together
// (they are only whole), or the error that left none.
int run_across_devices(const Experiment& e, const WorkerRequest& r, std::ofstream& out) {
  try {
    for (const auto& row : e.across().measure(r.devices, r.info, r.engine.quick))
      write(out, json{{"row", record_to_json(row)}});
    out.flush();
    return 0;
  } catch (const std::exception& ex) {
    write(out, json{{"error", std::string(ex.what())}});
    out.flush();
    std::fprintf(stderr, "kbench worker: %s: %s\n", e.name().c_str(), ex.what());
    return 1;
  }
}

int run_probe(Engine& engine, std::ofstream& out) {
  ProbeResult p;
  for (const auto& row : engine.probe(&p)) write(out, json{{"row", record_to_json(row)}});
  write(out, json{{"probed", probed_arg(p)}});
  out.flush();
  return 0;
}

// --measure: these points' times, no rows (measure_points_isolated). The
// first that fails ends the worker: its line says why.
int measure_points(Engine& engine, const Experiment& e, const std::string& arg,
                   std::ofstream& out) {
  const std::vector<Point> points = parse_points_arg(arg);
  for (size_t i = 0; i < points.size(); ++i) {
    try {
      write(out, point_time_line(i, engine.measure_point(e, points[i])));
      out.flush();
    } catch (const std::exception& ex) {
      write(out, point_error_line(i, ex.what()));
      out.flush();
      std::fprintf(stderr, "kbench worker: %s: %s\n", point_text(e.name(), points[i]).c_str(),
                   ex.what());
      return 1;
    }
  }
  return 0;
}

// The rows of the points asked for, one point at a time, each with what it
// was built from (for a parent of several processes: run_passes).
int run_points(Engine& engine, const Experiment& e, const WorkerRequest& r, std::ofstream& out) {
  const auto points = e.points();
  for (size_t i : r.points) {
    if (i >= points.size()) continue;
    MeasuredPoint measured;
    const auto rows = engine.run_point(e, points[i], &measured);
    if (point_measured(rows))
      write(out, json{{"point", i}, {"measurement", measured_point_to_json(measured)}});
    for (const auto& row : rows) write(out, json{{"point", i}, {"row", record_to_json(row)}});
    out.flush();  // rows of finished points survive a crash in the next one
    if (engine.context_lost()) return kWorkerContextLost;
  }
  return 0;
}

// The GPU's work on its own: the probe, or an experiment's points.
int run_on_device(const WorkerRequest& r, std::ofstream& out) {
  const DeviceInfo dev = query_device(r.device);
  std::vector<TargetFile> files;
  if (!r.targets_dir.empty()) files = load_target_dir(r.targets_dir);
  const TargetFile* tf = match_gpu(files, dev.name);
  if (!r.targets_dir.empty()) {  // the parent said what is wrong with the table, once
    const std::string tpath = tuning_path(r.targets_dir, tf, dev.name);
    gemm::set_pinned_algos(load_pins(tpath, dev.name, nullptr));
    gemv::set_table(load_gemv_table(tpath, dev.name, nullptr));
  }
  Engine engine(dev, tf, r.engine, r.info);
  if (r.probe) return run_probe(engine, out);
  const Experiment* e = Registry::instance().find(r.experiment);
  if (!e) {
    std::fprintf(stderr, "kbench worker: no experiment '%s'\n", r.experiment.c_str());
    return 2;
  }
  if (!r.measure.empty()) return measure_points(engine, *e, r.measure, out);
  engine.set_ceilings(merge_ceilings(tf, parse_probed(r.probed)));
  return run_points(engine, *e, r, out);
}

}  // namespace

// What the rows use of it (not the latency's two medians).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProbeResult, read_gbps, copy_gbps, memcpy_gbps, launch_us,
                                   graph_node_us, bytes, mem_latency_us)

std::string probed_arg(const ProbeResult& p) { return nlohmann::json(p).dump(); }

ProbeResult parse_probed(const std::string& s) {
  try {
    return nlohmann::json::parse(s).get<ProbeResult>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument("bad probed ceilings '" + s + "'");
  }
}

int worker_main(int argc, char** argv) {
  WorkerRequest r;
  try {
    r = parse_worker_request(argc, argv);  // from the parent: a bad one is a bug
  } catch (const std::invalid_argument& ex) {
    std::fprintf(stderr, "kbench worker: %s\n", ex.what());
    return 2;
  }
  r.info.suite_version = KBENCH_VERSION;
  r.info.git_sha = KBENCH_GIT_SHA;
  std::ofstream out(r.out, std::ios::app);
  if (!out) {
    std::fprintf(stderr, "kbench worker: cannot write %s\n", r.out.c_str());
    return 2;
  }
  try {
    if (!r.devices.empty()) {
      const Experiment* e = Registry::instance().find(r.experiment);
      if (!e || !e->is_across_devices())
        throw std::invalid_argument("no multi-device experiment '" + r.experiment + "'");
      return run_across_devices(*e, r, out);
    }
    return run_on_device(r, out);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "kbench worker: %s\n", ex.what());
    return 1;
  }
}

}  // namespace kb
