// `kbench run --rerun FILE --repeat N`: the suspects' points, N times,
// interleaved (A B C A B C), each in a fresh worker process, appended as
// attempts of the suspects' run (run_id <run>/<attempt>).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <regex>

#include "core/atomic_write.h"
#include "core/csv_writer.h"
#include "core/gpu_name.h"
#include "core/suspects.h"
#include "suite/cli.h"
#include "suite/cli/commands.h"
#include "suite/cli/plan.h"
#include "suite/cli/setup.h"
#include "suite/device.h"
#include "suite/engine.h"

namespace kb::cli {

namespace {

// One point to measure again, and the seed-mean groups to recompute.
struct RerunPoint {
  const Experiment* e = nullptr;
  size_t index = 0;
};
struct RerunMean {
  const Experiment* e = nullptr;
  std::string dtype, variant;
};
// The suspects of one run (`base`), as points of this build.
struct RerunPlan {
  std::vector<RerunPoint> todo;
  std::vector<RerunMean> means;
  std::string base;
};

// A row's variant without the mark of an injected slowdown (the last field).
std::string without_inject(const std::string& v) {
  if (v.rfind("inject=", 0) == 0) return "";
  const auto f = v.find(";inject=");
  return f == std::string::npos ? v : v.substr(0, f);
}

bool point_matches(const Point& p, const Suspect& s) {
  return dtype_name(p.dtype) == s.dtype &&
         (p.variant.empty() || variant_matches(p.variant, s.variant));
}

// The suspect's points (a seed mean: every point of its group) into `plan`;
// SuspectsError where this build has none.
void add_suspect(RerunPlan& plan, const Suspect& s, const std::string& at) {
  const Experiment* e = Registry::instance().find(s.name);
  if (!e)
    throw SuspectsError(at + "no experiment '" + s.name + "' in this build. Experiments:\n" +
                        experiment_names());
  if (e->is_across_devices())
    throw SuspectsError(at + "'" + s.name +
                        "' is measured across GPUs: --rerun does not re-measure it");
  const auto points = e->points();
  auto add = [&](size_t i) {
    for (const auto& t : plan.todo)
      if (t.e == e && t.index == i) return;
    plan.todo.push_back({e, i});
  };
  bool found = false;
  if (s.shape == "mean") {
    for (size_t i = 0; i < points.size(); ++i)
      if (points[i].in_seed_mean && point_matches(points[i], s)) {
        add(i);
        found = true;
      }
    if (found) {
      const std::string v = without_inject(s.variant);
      bool dup = false;
      for (const auto& m : plan.means) dup |= m.e == e && m.dtype == s.dtype && m.variant == v;
      if (!dup) plan.means.push_back({e, s.dtype, v});
    }
  } else {
    for (size_t i = 0; i < points.size() && !found; ++i)
      if (points[i].shape.str() == s.shape && point_matches(points[i], s)) {
        add(i);
        found = true;
      }
  }
  if (!found)
    throw SuspectsError(at + "experiment '" + s.name + "' has no point shape=" + s.shape +
                        " dtype=" + s.dtype + (s.variant.empty() ? "" : " variant=" + s.variant) +
                        " (was the suspects file written for another build?)");
}

// The suspects --filter selects (by experiment name, as `kbench run
// --filter` selects experiments); all of them without --filter.
std::vector<Suspect> filtered(const std::vector<Suspect>& sus, const Args& a) {
  if (a.filter.empty()) return sus;
  select(a.filter);  // a bad regex, or one that names no experiment: UsageError
  const std::regex re(a.filter, std::regex::ECMAScript);
  std::vector<Suspect> out;
  for (const Suspect& s : sus)
    if (std::regex_search(s.name, re)) out.push_back(s);
  std::printf("kbench: --filter '%s' keeps %zu of the %zu suspect(s) in %s\n", a.filter.c_str(),
              out.size(), sus.size(), a.rerun.c_str());
  return out;
}

RerunPlan rerun_plan(const std::string& file, const std::vector<Suspect>& sus) {
  RerunPlan plan;
  for (const Suspect& s : sus) {
    const std::string at = file + ":" + std::to_string(s.line) + ": ";
    if (plan.base.empty()) plan.base = s.run_id;
    if (s.run_id != plan.base)
      throw SuspectsError(at + "suspects of two runs (" + plan.base + ", " + s.run_id +
                          "): re-measure one run at a time");
    add_suspect(plan, s, at);
  }
  return plan;
}

// One attempt of every suspect point, a fresh worker per experiment, then
// the seed means recomputed from them.
std::vector<Record> measure_attempt(WorkerConfig& cfg, const RerunPlan& plan, int attempt,
                                    const DeviceInfo& dev, const TargetFile* tf,
                                    const ProbeResult& probed, const Injection& inject) {
  std::vector<Record> rows;
  std::map<const Experiment*, std::vector<std::vector<Record>>> per_point;
  std::vector<const Experiment*> order;
  for (const auto& t : plan.todo)
    if (std::find(order.begin(), order.end(), t.e) == order.end()) order.push_back(t.e);
  for (const Experiment* e : order) {
    std::vector<size_t> idx;
    for (const auto& t : plan.todo)
      if (t.e == e) idx.push_back(t.index);
    std::printf("[attempt %d] %s, %zu point(s) ...", attempt, e->name().c_str(), idx.size());
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    cfg.engine.inject_slowdown = injection_for(inject, e->name());
    auto got = run_points_isolated(cfg, *e, idx, dev, tf, probed);
    std::vector<Record> er;
    auto& pp = per_point[e];
    if (pp.empty()) pp.resize(e->points().size());
    for (size_t n = 0; n < idx.size(); ++n) {
      pp[idx[n]] = got[n];
      er.insert(er.end(), got[n].begin(), got[n].end());
    }
    const double secs = seconds_since(t0);
    std::printf(" %s\n", step_text(er, secs).c_str());
    rows.insert(rows.end(), er.begin(), er.end());
  }
  for (const auto& m : plan.means) {
    for (const auto& r : seed_mean_rows(m.e->source(), m.e->points(), per_point[m.e], tf)) {
      const std::string v = without_inject(r.variant);
      if (r.dtype == m.dtype && v == m.variant) rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace

int cmd_rerun(const Args& a) {
  const std::vector<Suspect> sus = filtered(read_suspects(a.rerun), a);
  const int repeat = a.repeat > 0 ? a.repeat : 3;
  const RunPlan run = run_plan(a);
  auto files = load_targets(run.targets);
  if (run.write_csv) check_csv_appendable(run.csv);  // refused before measuring, not after
  const RerunPlan plan = rerun_plan(a.rerun, sus);
  if (plan.todo.empty()) {
    std::printf("kbench: %s names no suspects%s: nothing to re-measure\n", a.rerun.c_str(),
                a.filter.empty() ? "" : " that --filter selects");
    return kExitOk;
  }
  const std::vector<int> devices = devices_for(a.device);
  if (devices.empty()) return kExitNoDevice;
  if (devices.size() != 1) throw UsageError("--rerun measures on one GPU: give --device N");
  DeviceInfo dev = query_device(devices.front());
  for (const Suspect& s : sus)
    if (!s.arch.empty() && !same_gpu_name(s.arch, dev.name))
      throw SuspectsError(a.rerun + ":" + std::to_string(s.line) + ": a suspect of '" + s.arch +
                          "', but this GPU is '" + dev.name + "'");
  WorkerConfig cfg = worker_config(run);
  check_gpu_inputs(files, dev, cfg);
  const TargetFile* tf = target_for(files, dev, run.targets.path);
  const int first = next_attempt(read_whole_file(run.csv).value_or(""), plan.base);
  std::printf(
      "kbench: re-measuring %zu point(s) of run %s, %d time(s) each, interleaved, as "
      "attempts %d..%d on %s\n",
      plan.todo.size(), plan.base.c_str(), repeat, first, first + repeat - 1, dev.name.c_str());
  ProbeResult probed;
  run_probe_worker(cfg, dev, &probed);
  const std::string host = host_name();
  std::vector<Record> rows;
  for (int k = 0; k < repeat; ++k) {
    cfg.info.run_id = attempt_run_id(plan.base, first + k);
    cfg.info.timestamp = utc_now();
    const auto got = measure_attempt(cfg, plan, first + k, dev, tf, probed, run.inject);
    rows.insert(rows.end(), got.begin(), got.end());
  }
  stamp_gpu(rows, dev, host);
  return finish_run(run, rows);
}

}  // namespace kb::cli
