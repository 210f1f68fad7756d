#include "suite/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include "reports/json_writer.h"
#include "suite/rows.h"
#include "suite/worker.h"

namespace kb {

namespace {

using nlohmann::json;

struct WorkerResult {
  bool exited = false;  // exited normally (else signal or timeout)
  int code = -1;
  std::string why;  // for a worker that did not exit 0
  std::vector<json> lines;
};

WorkerRequest request_for(const WorkerConfig& cfg, const DeviceInfo& dev) {
  WorkerRequest r;
  r.device = dev.index;
  r.targets_dir = cfg.targets_dir;
  r.engine = cfg.engine;
  r.info = cfg.info;
  return r;
}

// How a worker ended: "" when it exited 0, else why.
std::string how_it_ended(int st, bool timed_out, double timeout_s, bool* exited, int* code) {
  if (timed_out) return "worker timed out after " + format_number(timeout_s) + " s and was killed";
  if (WIFEXITED(st)) {
    *exited = true;
    *code = WEXITSTATUS(st);
    return *code ? "worker exited with code " + std::to_string(*code) : "";
  }
  if (WIFSIGNALED(st))
    return std::string("worker died of signal ") + std::to_string(WTERMSIG(st)) + " (" +
           strsignal(WTERMSIG(st)) + ")";
  return "";
}

// Starts the worker, waits for it (killing it after the timeout), and reads
// the JSON lines it wrote.
WorkerResult spawn(const std::string& exe, WorkerRequest req, double timeout_s) {
  char path[] = "/tmp/kbench-worker-XXXXXX";
  // O_CLOEXEC: a worker forked by another GPU's thread must not inherit it.
  int fd = ::mkostemp(path, O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the worker's rows");
  ::close(fd);
  req.out = path;
  std::vector<std::string> args = worker_argv(exe, req);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
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
    if (r == pid || (r < 0 && errno != EINTR)) break;
    if (seconds_since(t0) > timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  WorkerResult res;
  res.why = how_it_ended(st, timed_out, timeout_s, &res.exited, &res.code);
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

struct Pass {
  std::vector<std::vector<Record>> rows;               // per entry of `todo`
  std::vector<std::optional<MeasuredPoint>> measured;  // what a measured point's rows came from
};

// One worker pass over `todo`: a worker that dies in a point fails it and a
// new one goes on at the next.
Pass run_pass(const WorkerConfig& cfg, const Experiment& e, const DeviceInfo& dev,
              const TargetFile* targets, const std::vector<size_t>& todo,
              const std::string& probed) {
  Pass pass;
  pass.measured.resize(todo.size());
  pass.rows.resize(todo.size());
  size_t next = 0;  // into todo
  while (next < todo.size()) {
    WorkerRequest req = request_for(cfg, dev);
    req.experiment = e.name();
    req.probed = probed;
    req.points.assign(todo.begin() + static_cast<std::ptrdiff_t>(next), todo.end());
    WorkerResult r = spawn(cfg.exe, req, cfg.timeout_s);
    for (const auto& j : r.lines) {
      if (!j.contains("point")) continue;
      const size_t i = j["point"].get<size_t>();
      for (size_t k = next; k < todo.size(); ++k) {
        if (todo[k] != i) continue;
        if (j.contains("row")) pass.rows[k].push_back(record_from_json(j["row"]));
        if (j.contains("measurement"))
          pass.measured[k] = measured_point_from_json(j["measurement"]);
      }
    }
    size_t done = next;
    while (done < todo.size() && !pass.rows[done].empty()) ++done;
    if (r.exited && r.code == 0 && done == todo.size()) break;
    if (done < todo.size() && !(r.exited && r.code == kWorkerContextLost)) {
      // The worker died in the middle of point `done`.
      pass.rows[done] = status_rows(e.source(), e.points()[todo[done]], status::failed,
                                    r.why.empty() ? "worker stopped without a result" : r.why, "",
                                    cfg.info, gpu_identity(dev), targets);
      ++done;
    }
    next = done;  // after a lost context: the faulting point's rows were written
  }
  return pass;
}

// The further passes over the points the first measured (`again`, their
// first times `first_s`): all up to `processes`, the short ones beyond.
// Per point of `again`, its further processes' results in pass order.
std::vector<std::vector<ProcessResult>> further_passes(const WorkerConfig& each,
                                                       const Experiment& e, const DeviceInfo& dev,
                                                       const TargetFile* targets,
                                                       const std::vector<size_t>& again,
                                                       const std::vector<double>& first_s,
                                                       int passes, const std::string& probed) {
  std::vector<std::vector<ProcessResult>> further(again.size());
  for (int p = 1;; ++p) {
    std::vector<size_t> points_n, todo_p;
    for (size_t n = 0; n < again.size(); ++n)
      if (processes_for(first_s[n], passes, each.short_processes) > p) {
        points_n.push_back(n);
        todo_p.push_back(again[n]);
      }
    if (todo_p.empty()) break;
    const Pass pass = run_pass(each, e, dev, targets, todo_p, probed);
    for (size_t j = 0; j < points_n.size(); ++j)
      further[points_n[j]].push_back({pass.rows[j], pass.measured[j]});
  }
  return further;
}

// The first pass, then the further passes (kernel protocol), one after
// another (a point's processes an experiment apart), and the rows of each
// point's processes together.
std::vector<std::vector<Record>> run_passes(const WorkerConfig& cfg, const Experiment& e,
                                            const DeviceInfo& dev, const TargetFile* targets,
                                            const ProbeResult& probed,
                                            const std::vector<size_t>& todo) {
  const int passes = e.sampling() == Protocol::kernel ? std::max(1, cfg.processes) : 1;
  const int most = e.sampling() == Protocol::kernel ? std::max(passes, cfg.short_processes) : 1;
  // Each process samples its share of the buffer-set bytes; the first checks.
  WorkerConfig each = cfg;
  each.engine.sampled_bytes_goal = std::max<size_t>(cfg.engine.sampled_bytes_goal / passes, 1);
  const std::string probed_text = probed_arg(probed);
  Pass first = run_pass(each, e, dev, targets, todo, probed_text);
  if (most == 1) return first.rows;
  each.engine.check = false;
  std::vector<size_t> again, at;  // points the first pass measured; their index in todo
  std::vector<double> first_s;
  for (size_t k = 0; k < todo.size(); ++k)
    if (point_measured(first.rows[k]) && first.measured[k]) {
      again.push_back(todo[k]);
      at.push_back(k);
      first_s.push_back(first.measured[k]->m.value_s);
    }
  if (again.empty()) return first.rows;
  const auto further = further_passes(each, e, dev, targets, again, first_s, passes, probed_text);
  const std::vector<Point> points = e.points();
  const Ceilings ceilings = merge_ceilings(targets, probed);
  const GpuIdentity gpu = gpu_identity(dev);
  for (size_t n = 0; n < again.size(); ++n) {
    const Point& pt = points[again[n]];
    const MeasuredPoint& m0 = *first.measured[at[n]];
    first.rows[at[n]] = point_rows_of_processes(
        m0, further[n],
        [&](const Measurement& m) {
          return measured_rows(e.source(), pt, m0.detail, e.work_for(pt), m, ceilings, cfg.info,
                               gpu, targets);
        },
        [&](const std::string& why) {
          return status_rows(e.source(), pt, status::failed, why, m0.detail, cfg.info, gpu,
                             targets);
        },
        cfg.engine.detail);
  }
  return first.rows;
}

}  // namespace

std::vector<Record> run_probe_worker(const WorkerConfig& cfg, const DeviceInfo& dev,
                                     ProbeResult* probed) {
  WorkerRequest req = request_for(cfg, dev);
  req.probe = true;
  WorkerResult r = spawn(cfg.exe, req, cfg.timeout_s);
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

std::vector<Record> run_experiment_isolated(const WorkerConfig& cfg, const Experiment& e,
                                            const DeviceInfo& dev, const TargetFile* targets,
                                            const ProbeResult& probed,
                                            const std::vector<size_t>& indices) {
  const std::vector<Point> points = e.points();
  std::vector<size_t> todo = indices;
  if (todo.empty())
    for (size_t i = 0; i < points.size(); ++i) todo.push_back(i);
  const auto per_point = run_passes(cfg, e, dev, targets, probed, todo);
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
  return run_passes(cfg, e, dev, targets, probed, indices);
}

std::vector<PointTime> measure_points_isolated(const WorkerConfig& cfg, const Experiment& e,
                                               const std::vector<Point>& points,
                                               const DeviceInfo& dev) {
  if (points.empty()) return {};
  WorkerRequest req = request_for(cfg, dev);
  req.experiment = e.name();
  req.measure = points_arg(points);
  WorkerResult r = spawn(cfg.exe, req, cfg.timeout_s);
  return point_times_from_lines(r.lines, e.name(), points, r.why);
}

std::vector<Record> run_across_devices_isolated(const WorkerConfig& cfg, const Experiment& e,
                                                const std::vector<int>& devices,
                                                const std::string& host) {
  const DeviceInfo d0 = query_device(devices.front());
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
  const AcrossDevices& a = e.across();
  if (const std::string why = a.unavailable(ranks); !why.empty())
    return stamp(a.status_rows(ranks, status::skipped, why, cfg.info, gpu));
  WorkerRequest req = request_for(cfg, d0);
  req.experiment = e.name();
  req.devices = devices;
  WorkerResult r = spawn(cfg.exe, req, cfg.timeout_s);
  std::vector<Record> rows;
  for (const auto& j : r.lines)
    if (j.contains("row")) rows.push_back(record_from_json(j["row"]));
  if (r.exited && r.code == 0 && !rows.empty()) return stamp(rows);
  // What the worker did not finish: failed, with its reason.
  std::string reason = r.why.empty() ? "worker stopped without a result" : r.why;
  for (const auto& j : r.lines)
    if (j.contains("error")) reason = j["error"].get<std::string>();
  std::vector<Record> out;
  for (auto& want : a.status_rows(ranks, status::failed, reason, cfg.info, gpu)) {
    bool have = false;
    for (const auto& got : rows)
      if (got.name == want.name && got.metric == want.metric && got.shape == want.shape) {
        out.push_back(got);
        have = true;
      }
    if (!have) out.push_back(want);
  }
  for (const auto& got : rows)
    if (got.name != e.name()) out.push_back(got);  // a probe's row (the link roofline)
  return stamp(out);
}

}  // namespace kb
