#include "suite/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/tuning.h"
#include "git_sha.h"
#include "kernels/common/cuda_check.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemv/dispatch.h"
#include "reports/json_writer.h"
#include "suite/nccl_bench.h"
#include "suite/rows.h"

namespace kb {

namespace {

using nlohmann::json;

std::string num(double v) { return format_number(v); }

std::string probed_arg(const ProbeResult& p) {
  return num(p.read_gbps) + "," + num(p.copy_gbps) + "," + num(p.memcpy_gbps) + "," +
         num(p.launch_us) + "," + num(p.graph_node_us) + "," + num(p.bytes) + "," +
         num(p.mem_latency_us);
}

ProbeResult parse_probed(const std::string& s) {
  ProbeResult p;
  double v[7] = {0, 0, 0, 0, 0, 0, 0};
  if (std::sscanf(s.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                  &v[5], &v[6]) != 7)
    throw std::invalid_argument("bad --probed '" + s + "'");
  p.read_gbps = v[0];
  p.copy_gbps = v[1];
  p.memcpy_gbps = v[2];
  p.launch_us = v[3];
  p.graph_node_us = v[4];
  p.bytes = v[5];
  p.mem_latency_us = v[6];
  return p;
}

double monotonic_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// KBENCH_PHASE_TIMES=1 (docs/measuring.md): where a worker's wall time goes.
bool phase_times() {
  static const bool on = std::getenv("KBENCH_PHASE_TIMES") != nullptr;
  return on;
}

std::vector<std::string> common_args(const WorkerConfig& cfg, const DeviceInfo& dev) {
  const EngineOptions& o = cfg.engine;
  std::vector<std::string> a = {cfg.exe,       "__worker",
                                "--device",    std::to_string(dev.index),
                                "--label",     cfg.info.device_label,
                                "--run-id",    cfg.info.run_id,
                                "--timestamp", cfg.info.timestamp,
                                "--max-noise", num(o.max_noise),
                                "--max-time",  num(o.max_time_s),
                                "--seed",      std::to_string(o.seed)};
  if (o.quick) a.push_back("--quick");
  a.insert(a.end(), {"--buffer-sets", std::to_string(o.max_buffer_sets)});
  a.insert(a.end(), {"--buffer-mib", std::to_string(o.sampled_bytes_goal >> 20)});
  if (o.inject_slowdown > 0) a.insert(a.end(), {"--inject", num(o.inject_slowdown)});
  if (!o.check) a.push_back("--no-check");
  if (!cfg.targets_dir.empty()) {
    a.push_back("--targets");
    a.push_back(cfg.targets_dir);
  }
  return a;
}

struct WorkerResult {
  bool exited = false;  // exited normally (else signal or timeout)
  int code = -1;
  std::string why;  // for a worker that did not exit 0
  std::vector<json> lines;
};

// Starts the worker, waits for it (killing it after the timeout), and reads
// the JSON lines it wrote.
WorkerResult spawn(std::vector<std::string> args, double timeout_s) {
  WorkerResult res;
  char path[] = "/tmp/kbench-worker-XXXXXX";
  // O_CLOEXEC: a worker forked by another GPU's thread must not inherit it.
  int fd = ::mkostemp(path, O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the worker's rows");
  ::close(fd);
  args.push_back("--out");
  args.push_back(path);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const double forked_at = monotonic_s();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::unlink(path);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    // Only async-signal-safe calls here: the parent may have other threads
    // (one per GPU) holding stdio's locks at the moment of the fork.
    static const char msg[] = "kbench: cannot start a worker process (execv failed)\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::_exit(127);
  }
  const auto t0 = std::chrono::steady_clock::now();
  int st = 0;
  bool timed_out = false;
  for (;;) {
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (phase_times())
    std::fprintf(stderr, "kbench phases: worker %d forked at %.3f, reaped at %.3f\n", int(pid),
                 forked_at, monotonic_s());
  if (timed_out) {
    res.why = "worker timed out after " + num(timeout_s) + " s and was killed";
  } else if (WIFEXITED(st)) {
    res.exited = true;
    res.code = WEXITSTATUS(st);
    if (res.code != 0) res.why = "worker exited with code " + std::to_string(res.code);
  } else if (WIFSIGNALED(st)) {
    res.why = std::string("worker died of signal ") + std::to_string(WTERMSIG(st)) + " (" +
              strsignal(WTERMSIG(st)) + ")";
  }
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    try {
      res.lines.push_back(json::parse(line));
    } catch (const json::exception&) {
      break;  // a line cut short by the crash
    }
  }
  ::unlink(path);
  return res;
}

}  // namespace

std::vector<Record> run_probe_worker(const WorkerConfig& cfg, const DeviceInfo& dev,
                                     ProbeResult* probed) {
  auto args = common_args(cfg, dev);
  args.push_back("--probe");
  WorkerResult r = spawn(args, cfg.timeout_s);
  std::vector<Record> rows;
  bool have = false;
  for (const auto& j : r.lines) {
    if (j.contains("row")) rows.push_back(record_from_json(j["row"]));
    if (j.contains("probed")) {
      *probed = parse_probed(j["probed"].get<std::string>());
      have = true;
    }
  }
  if (!have)
    throw std::runtime_error("the ceiling probe failed: " + (r.why.empty() ? "no result" : r.why));
  return rows;
}

namespace {

struct Pass {
  std::vector<std::vector<Record>> rows;               // per entry of `todo`
  std::vector<std::optional<MeasuredPoint>> measured;  // what a measured point's rows came from
};

// One worker pass over `todo` (points of `e`, ascending unless `listed`):
// the rows of each, in that order. A worker that dies in a point leaves that
// point `failed` and a new worker goes on at the next; `listed` = false
// starts a worker at a point and lets it run to the end (--from), true names
// the points (--points).
Pass run_pass(const WorkerConfig& cfg, const Experiment& e, const DeviceInfo& dev,
              const TargetFile* targets, const ProbeResult& probed, const std::vector<size_t>& todo,
              bool listed) {
  const std::vector<Point> points = e.points();
  Pass pass;
  pass.measured.resize(todo.size());
  std::vector<std::vector<Record>>& per_point = pass.rows;
  per_point.resize(todo.size());
  size_t next = 0;  // into todo
  while (next < todo.size()) {
    auto args = common_args(cfg, dev);
    if (!listed) {
      args.insert(args.end(), {"--experiment", e.name(), "--from", std::to_string(todo[next])});
    } else {
      std::string list;
      for (size_t k = next; k < todo.size(); ++k)
        list += (list.empty() ? "" : ",") + std::to_string(todo[k]);
      args.insert(args.end(), {"--experiment", e.name(), "--points", list});
    }
    args.insert(args.end(), {"--probed", probed_arg(probed)});
    WorkerResult r = spawn(args, cfg.timeout_s);
    for (const auto& j : r.lines) {
      if (!j.contains("point")) continue;
      const size_t i = j["point"].get<size_t>();
      for (size_t k = next; k < todo.size(); ++k) {
        if (todo[k] != i) continue;
        if (j.contains("row")) per_point[k].push_back(record_from_json(j["row"]));
        if (j.contains("measurement"))
          pass.measured[k] = measured_point_from_json(j["measurement"]);
      }
    }
    size_t done = next;
    while (done < todo.size() && !per_point[done].empty()) ++done;
    if (r.exited && r.code == 0 && done == todo.size()) break;
    if (r.exited && r.code == kWorkerContextLost) {
      next = done;  // the faulting point's rows were written; go on after it
      continue;
    }
    if (done < todo.size()) {
      // The worker died in the middle of point `done`.
      per_point[done] = status_rows(e.source(), points[todo[done]], status::failed,
                                    r.why.empty() ? "worker stopped without a result" : r.why, "",
                                    cfg.info, gpu_identity(dev), targets);
      next = done + 1;
    } else {
      next = done;
    }
  }
  return pass;
}

// The first pass's rows of `todo`, then (kernel protocol, cfg.processes > 1)
// more passes, each a fresh worker over the points the first one measured
// (and checked), up to cfg.short_processes passes for the points whose
// first timed call was short (processes_for), and per point the rows of
// its processes' measurements together (combine_process_measurements).
// Passes go one after another, so a point's processes are an experiment's
// length apart in time.
std::vector<std::vector<Record>> run_passes(const WorkerConfig& cfg, const Experiment& e,
                                            const DeviceInfo& dev, const TargetFile* targets,
                                            const ProbeResult& probed,
                                            const std::vector<size_t>& todo, bool listed) {
  const int passes = e.sampling() == Protocol::kernel ? std::max(1, cfg.processes) : 1;
  const int most = e.sampling() == Protocol::kernel ? std::max(passes, cfg.short_processes) : 1;
  // Each process samples its share of the buffer-set bytes (at least 3
  // sets still), so a point spans as many allocations as one process
  // would; only the first checks the output.
  WorkerConfig each = cfg;
  each.engine.sampled_bytes_goal = std::max<size_t>(cfg.engine.sampled_bytes_goal / passes, 1);
  Pass first = run_pass(each, e, dev, targets, probed, todo, listed);
  if (most == 1) return first.rows;
  each.engine.check = false;
  std::vector<size_t> again, at;  // points the first pass measured; their index in todo
  for (size_t k = 0; k < todo.size(); ++k)
    if (point_measured(first.rows[k]) && first.measured[k]) {
      again.push_back(todo[k]);
      at.push_back(k);
    }
  if (again.empty()) return first.rows;
  // Passes 2..processes measure every point again; passes up to
  // short_processes only the short ones (processes_for) and, with
  // cfg.spread_extend, those whose first `processes` disagree
  // (processes_after). more[p] holds pass p + 2's results, its points
  // `in_pass[p]` (indices into `again`).
  std::vector<int> wanted;  // per point of `again`: its processes
  for (size_t k : at)
    wanted.push_back(processes_for(first.measured[k]->m.value_s, passes, cfg.short_processes));
  std::vector<Pass> more;
  std::vector<std::vector<size_t>> in_pass;
  // Where point n's result is in further pass p (none where it skipped it).
  auto index_in = [&](size_t p, size_t n) -> std::optional<size_t> {
    const auto& has = in_pass[p];
    const auto it = std::find(has.begin(), has.end(), n);
    if (it == has.end()) return std::nullopt;
    return static_cast<size_t>(it - has.begin());
  };
  for (int p = 1;; ++p) {
    if (p == passes && cfg.spread_extend > 0)
      for (size_t n = 0; n < again.size(); ++n) {
        std::vector<double> medians{first.measured[at[n]]->m.value_s};
        for (size_t q = 0; q < more.size(); ++q)
          if (const auto j = index_in(q, n); j && more[q].measured[*j])
            medians.push_back(more[q].measured[*j]->m.value_s);
        wanted[n] = std::max(
            wanted[n], processes_after(medians, passes, cfg.short_processes, cfg.spread_extend));
      }
    std::vector<size_t> points_n, todo_p;
    for (size_t n = 0; n < again.size(); ++n)
      if (wanted[n] > p) {
        points_n.push_back(n);
        todo_p.push_back(again[n]);
      }
    if (todo_p.empty()) break;
    more.push_back(run_pass(each, e, dev, targets, probed, todo_p, true));
    in_pass.push_back(std::move(points_n));
  }
  const std::vector<Point> points = e.points();
  const Ceilings ceilings = merge_ceilings(targets, probed);
  // KBENCH_SET_DETAIL (docs/measuring.md): every point lists its processes.
  static const bool list_always = std::getenv("KBENCH_SET_DETAIL") != nullptr;
  for (size_t n = 0; n < again.size(); ++n) {
    const Point& pt = points[again[n]];
    std::vector<ProcessResult> further;
    for (size_t p = 0; p < more.size(); ++p)
      if (const auto j = index_in(p, n))
        further.push_back({more[p].rows[*j], more[p].measured[*j]});
    first.rows[at[n]] = point_rows_of_processes(
        *first.measured[at[n]], further,
        [&](const Measurement& m) {
          return measured_rows(e.source(), pt, first.measured[at[n]]->detail, e.work_for(pt), m,
                               ceilings, cfg.info, gpu_identity(dev), targets);
        },
        [&](const std::string& why) {
          return status_rows(e.source(), pt, status::failed, why, first.measured[at[n]]->detail,
                             cfg.info, gpu_identity(dev), targets);
        },
        list_always);
  }
  return first.rows;
}

}  // namespace

std::vector<Record> run_experiment_isolated(const WorkerConfig& cfg, const Experiment& e,
                                            const DeviceInfo& dev, const TargetFile* targets,
                                            const ProbeResult& probed,
                                            const std::vector<size_t>& indices) {
  const std::vector<Point> points = e.points();
  std::vector<size_t> todo = indices;
  if (todo.empty())
    for (size_t i = 0; i < points.size(); ++i) todo.push_back(i);
  const auto per_point = run_passes(cfg, e, dev, targets, probed, todo, !indices.empty());
  std::vector<Record> out;
  for (const auto& rows : per_point) out.insert(out.end(), rows.begin(), rows.end());
  std::vector<Point> measured;
  for (size_t i : todo) measured.push_back(points[i]);
  auto means = seed_mean_rows(e.source(), measured, per_point, targets);
  out.insert(out.end(), means.begin(), means.end());
  return out;
}

std::vector<std::vector<Record>> run_points_isolated(const WorkerConfig& cfg, const Experiment& e,
                                                     const std::vector<size_t>& indices,
                                                     const DeviceInfo& dev,
                                                     const TargetFile* targets,
                                                     const ProbeResult& probed) {
  const std::vector<Point> points = e.points();
  for (size_t i : indices)
    if (i >= points.size()) throw std::out_of_range("no point " + std::to_string(i));
  return run_passes(cfg, e, dev, targets, probed, indices, true);
}

std::vector<PointTime> measure_points_isolated(const WorkerConfig& cfg, const Experiment& e,
                                               const std::vector<Point>& points,
                                               const DeviceInfo& dev) {
  if (points.empty()) return {};
  auto args = common_args(cfg, dev);
  args.insert(args.end(), {"--experiment", e.name(), "--measure", points_arg(points)});
  WorkerResult r = spawn(args, cfg.timeout_s);
  return point_times_from_lines(r.lines, e.name(), points, r.why);
}

// Each wait of a collective (init, one operation, finalize) gives up after
// this long and aborts the communicators; the parent's --timeout still
// bounds the whole worker.
constexpr double kCollectiveWaitS = 120;

std::vector<Record> run_collective_isolated(const WorkerConfig& cfg, const std::string& name,
                                            const std::vector<int>& devices,
                                            const std::string& host) {
  DeviceInfo d0 = query_device(devices.front());
  const GpuIdentity gpu = gpu_identity(d0);
  const int ranks = static_cast<int>(devices.size());
  std::string list;
  for (int d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
  auto stamp = [&](std::vector<Record> rows) {
    for (auto& r : rows) {
      r.gpu_index = list;  // the GPUs together: no one UUID
      r.host = host;
    }
    return rows;
  };
  std::string why;
  if (ranks < 2)
    return stamp(collective_status_rows(
        name, ranks, status::skipped,
        "a collective needs 2 or more GPUs; this run has 1 (--device all on a host with "
        "several, or --device 0,1,...)",
        cfg.info, gpu));
  if (!nccl_built(&why))
    return stamp(collective_status_rows(name, ranks, status::skipped, why, cfg.info, gpu));
  auto args = common_args(cfg, d0);
  args.insert(args.end(), {"--collective", name, "--devices", list});
  WorkerResult r = spawn(args, cfg.timeout_s);
  std::vector<Record> rows;
  for (const auto& j : r.lines)
    if (j.contains("row")) rows.push_back(record_from_json(j["row"]));
  if (r.exited && r.code == 0 && !rows.empty()) return stamp(rows);
  // What the worker did not finish: failed, with its reason.
  std::string reason = r.why.empty() ? "worker stopped without a result" : r.why;
  for (const auto& j : r.lines)
    if (j.contains("error")) reason = j["error"].get<std::string>();
  std::vector<Record> out;
  for (auto& want : collective_status_rows(name, ranks, status::failed, reason, cfg.info, gpu)) {
    bool have = false;
    for (const auto& got : rows)
      if (got.name == want.name && got.metric == want.metric && got.shape == want.shape) {
        out.push_back(got);
        have = true;
      }
    if (!have) out.push_back(want);
  }
  for (const auto& got : rows)
    if (got.name != name) out.push_back(got);  // the link probe's row
  return stamp(out);
}

int worker_main(int argc, char** argv) {
  // Arguments come from the parent (common_args); a bad one is a bug.
  std::string out_path, experiment, targets_dir, probed, collective, devices, measure;
  int device = 0;
  size_t from = 0;
  std::vector<size_t> only;  // --points: exactly these, in this order
  bool probe = false;
  EngineOptions o;
  RunInfo info;
  info.suite_version = KBENCH_VERSION;
  info.git_sha = KBENCH_GIT_SHA;
  // KBENCH_PHASE_TIMES: when this worker entered main, had its GPU
  // (cuInit and the device's properties), had its context and stream (the
  // engine), and left main; beside the parent's fork and reap times.
  struct Stamps {
    double main = monotonic_s(), device = 0, engine = 0;
    ~Stamps() {
      if (phase_times())
        std::fprintf(stderr,
                     "kbench phases: worker %d main at %.3f, device +%.3f s, context +%.3f s, "
                     "work +%.3f s, left main at %.3f\n",
                     int(::getpid()), main, device > 0 ? device - main : 0.0,
                     engine > 0 ? engine - device : 0.0, engine > 0 ? monotonic_s() - engine : 0.0,
                     monotonic_s());
    }
  } stamps;
  for (int i = 2; i < argc; ++i) {
    std::string f = argv[i];
    auto v = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (f == "--out")
      out_path = v();
    else if (f == "--device")
      device = std::atoi(v().c_str());
    else if (f == "--label")
      info.device_label = v();
    else if (f == "--run-id")
      info.run_id = v();
    else if (f == "--timestamp")
      info.timestamp = v();
    else if (f == "--max-noise")
      o.max_noise = std::atof(v().c_str());
    else if (f == "--max-time")
      o.max_time_s = std::atof(v().c_str());
    else if (f == "--seed")
      o.seed = std::strtoull(v().c_str(), nullptr, 10);
    else if (f == "--quick")
      o.quick = true;
    else if (f == "--targets")
      targets_dir = v();
    else if (f == "--experiment")
      experiment = v();
    else if (f == "--from")
      from = std::strtoull(v().c_str(), nullptr, 10);
    else if (f == "--points") {
      std::string list = v();
      for (size_t pos = 0; pos < list.size();) {
        size_t end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        only.push_back(std::strtoull(list.substr(pos, end - pos).c_str(), nullptr, 10));
        pos = end + 1;
      }
    } else if (f == "--buffer-sets")
      o.max_buffer_sets = std::atoi(v().c_str());
    else if (f == "--buffer-mib")
      o.sampled_bytes_goal = static_cast<size_t>(std::atoll(v().c_str())) << 20;
    else if (f == "--no-check")
      o.check = false;
    else if (f == "--inject")
      o.inject_slowdown = std::atof(v().c_str());
    else if (f == "--probed")
      probed = v();
    else if (f == "--probe")
      probe = true;
    else if (f == "--collective")
      collective = v();
    else if (f == "--devices")
      devices = v();
    else if (f == "--measure")
      measure = v();
  }
  std::ofstream out(out_path, std::ios::app);
  if (!out) {
    std::fprintf(stderr, "kbench worker: cannot write %s\n", out_path.c_str());
    return 2;
  }
  if (!collective.empty()) {
    std::vector<int> devs;
    for (size_t pos = 0; pos < devices.size();) {
      size_t end = devices.find(',', pos);
      if (end == std::string::npos) end = devices.size();
      devs.push_back(std::atoi(devices.substr(pos, end - pos).c_str()));
      pos = end + 1;
    }
    try {
      // The rows are written together: a collective's rows are only whole.
      for (const auto& r : measure_collective(collective, devs, info, kCollectiveWaitS, o.quick))
        out << json{{"row", record_to_json(r)}}.dump() << "\n";
      out.flush();
      return 0;
    } catch (const std::exception& ex) {
      out << json{{"error", std::string(ex.what())}}.dump() << "\n";
      out.flush();
      std::fprintf(stderr, "kbench worker: %s: %s\n", collective.c_str(), ex.what());
      return 1;
    }
  }
  try {
    DeviceInfo dev = query_device(device);
    stamps.device = monotonic_s();
    std::vector<TargetFile> files;
    if (!targets_dir.empty()) files = load_target_dir(targets_dir);
    const TargetFile* tf = match_gpu(files, dev.name);
    if (!targets_dir.empty()) {  // the parent said what is wrong with the table, once
      const std::string tpath = tuning_path(targets_dir, tf, dev.name);
      gemm::set_pinned_algos(load_pins(tpath, dev.name, nullptr));
      gemv::set_table(load_gemv_table(tpath, dev.name, nullptr), tpath);
    }
    Engine engine(dev, tf, o, info);
    stamps.engine = monotonic_s();
    if (probe) {
      ProbeResult p;
      auto rows = engine.probe(&p);
      for (const auto& r : rows) out << json{{"row", record_to_json(r)}}.dump() << "\n";
      out << json{{"probed", probed_arg(p)}}.dump() << "\n";
      out.flush();
      return 0;
    }
    const Experiment* e = Registry::instance().find(experiment);
    if (!e) {
      std::fprintf(stderr, "kbench worker: no experiment '%s'\n", experiment.c_str());
      return 2;
    }
    if (!measure.empty()) {
      // --measure: these points' times, no rows (measure_points_isolated).
      // The first that fails ends the worker: its line says why.
      const std::vector<Point> points = parse_points_arg(measure);
      for (size_t i = 0; i < points.size(); ++i) {
        try {
          out << point_time_line(i, engine.measure_point(*e, points[i])).dump() << "\n";
          out.flush();
        } catch (const std::exception& ex) {
          out << point_error_line(i, ex.what()).dump() << "\n";
          out.flush();
          std::fprintf(stderr, "kbench worker: %s: %s\n", point_text(e->name(), points[i]).c_str(),
                       ex.what());
          return 1;
        }
      }
      return 0;
    }
    engine.set_ceilings(merge_ceilings(tf, parse_probed(probed)));
    const auto points = e->points();
    std::vector<size_t> todo = only;
    if (todo.empty())
      for (size_t i = from; i < points.size(); ++i) todo.push_back(i);
    for (size_t i : todo) {
      if (i >= points.size()) continue;
      MeasuredPoint measured;
      const auto rows = engine.run_point(*e, points[i], &measured);
      if (point_measured(rows))  // for a parent of several processes (run_passes)
        out << json{{"point", i}, {"measurement", measured_point_to_json(measured)}}.dump() << "\n";
      for (const auto& r : rows)
        out << json{{"point", i}, {"row", record_to_json(r)}}.dump() << "\n";
      out.flush();  // rows of finished points survive a crash in the next one
      if (engine.context_lost()) return kWorkerContextLost;
    }
    return 0;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "kbench worker: %s\n", ex.what());
    return 1;
  }
}

}  // namespace kb
