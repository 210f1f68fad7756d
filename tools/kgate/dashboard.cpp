#include "tools/kgate/dashboard.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <map>
#include <thread>

#include "core/record.h"

namespace kb {

namespace {

char status_letter(RowStatus s) { return kDashStatusLetters[static_cast<int>(s)]; }

std::string count_of(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

DashboardPoint* point_of(DashboardKey& dk, uint32_t run) {
  auto p = std::lower_bound(dk.points.begin(), dk.points.end(), run,
                            [](const DashboardPoint& pt, uint32_t r) { return pt.run < r; });
  return p == dk.points.end() || p->run != run ? nullptr : &*p;
}

// A row's min_us..max_us in the metric widens its run's error bar: the
// metric is computed from median_us, a time in proportion, a rate inversely.
void widen_spread(DashboardKey& dk, const Observation& o, bool lower) {
  DashboardPoint* p = point_of(dk, o.run);
  if (!p || !o.measured() || !o.min_us() || !o.max_us() || !o.median_us()) return;
  const double a = o.actual * (lower ? o.min_us_ / o.median_us_ : o.median_us_ / o.max_us_);
  const double b = o.actual * (lower ? o.max_us_ / o.median_us_ : o.median_us_ / o.min_us_);
  p->lo = std::fmin(p->lo, std::min(a, b));  // (fmin and fmax skip a NaN)
  p->hi = std::fmax(p->hi, std::max(a, b));
}

// A row of a key as a marker of its run's point (none where the run has no
// point); a GPU's row (`board` >= 0) only where the run is on several boards.
void add_marker(DashboardKey& dk, const Observation& o, int32_t board = -1) {
  DashboardPoint* p = point_of(dk, o.run);
  if (!p || (board >= 0 && p->board >= 0)) return;
  DashboardAttempt a;
  a.board = board;
  a.point = static_cast<uint32_t>(p - dk.points.data());
  a.attempt = static_cast<int>(o.attempt);
  a.status = status_letter(o.status);
  if (o.measured()) a.value = o.actual;
  dk.attempts.push_back(a);
}

using GpuIndex = std::map<std::pair<std::string, std::string>, uint32_t>;

// GPUs: one column per (arch, device) as the gate names them (cuda:N is cuda).
GpuIndex add_gpus(DashboardData& d, const History& h, const DashboardOptions& opt) {
  GpuIndex gpu_index;
  for (const Key& k : h.keys())
    gpu_index.emplace(std::make_pair(k.arch, gate_key_device(k.device)), 0);
  for (auto& [gpu, index] : gpu_index) {
    index = static_cast<uint32_t>(d.gpus.size());
    d.gpus.push_back({gpu.first, gpu.second});
    // Two target files for one GPU throw here, not in the threads below.
    if (!gpu.first.empty()) match_gpu(opt.gate.targets, gpu.first);
  }
  return gpu_index;
}

void add_runs(DashboardData& d, const History& h) {
  for (const Run& run : h.runs()) {
    DashboardRun& dr = d.runs.emplace_back();
    dr.label = run.label;
    dr.timestamp = run.timestamp;
    dr.has_time = parse_iso_time(dr.timestamp, dr.time);
    dr.git_sha = run.git_sha;
    dr.driver = run.driver;
    dr.cuda = run.cuda;
  }
}

// Judging every point is most of the work: keys are independent, so spread
// them over the cores.
void judge_keys(DashboardData& d, const History& h, const DashboardOptions& opt,
                const std::vector<std::vector<uint32_t>>& groups) {
  const size_t n_keys = groups.size();
  d.keys.resize(n_keys);
  const GateContext ctx = gate_context(h, opt.gate);
  std::atomic<uint32_t> next{0};
  auto work = [&] {
    std::vector<uint32_t> series;
    for (uint32_t k; (k = next++) < n_keys;) {
      merge_series(h, groups[k], series);
      Key key = h.keys()[groups[k].front()];
      key.device = gate_key_device(key.device);
      d.keys[k].points = judge_series(ctx, key, series);
      for (uint32_t i : series) {  // re-measurements (`<run>/<N>` rows), GPUs of a run
        const Observation& o = h.observations()[i];
        widen_spread(d.keys[k], o, key.lower_is_better);
        const bool named = !h.gpus()[o.gpu].uuid.empty();
        if (o.attempt >= 2 || named) add_marker(d.keys[k], o, o.attempt == 1 ? int32_t(o.gpu) : -1);
      }
    }
  };
  unsigned n = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n && n_keys > 64; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

// Boards: the History's GPUs (their index is a point's board), where a row names a UUID.
void add_boards(DashboardData& d, const History& h) {
  for (const GpuId& g : h.gpus())
    d.boards.push_back({g.uuid.empty() ? "" : short_board(g.uuid), g.device, g.host});
  if (std::all_of(h.gpus().begin(), h.gpus().end(), [](const GpuId& g) { return g.uuid.empty(); }))
    d.boards.clear();
}

// Each key's identity and `kgate check`'s verdict.
void describe_keys(DashboardData& d, const History& h, const GateReport& rep, GpuIndex& gpu_index,
                   const std::vector<std::vector<uint32_t>>& groups) {
  std::unordered_map<std::string, const GateKeyResult*> verdicts;
  for (const GateKeyResult& g : rep.keys) verdicts.emplace(key_id(g, g.device), &g);
  for (uint32_t k = 0; k < groups.size(); ++k) {
    Key key = h.keys()[groups[k].front()];
    key.device = gate_key_device(key.device);
    DashboardKey& dk = d.keys[k];
    dk.name = key.name;
    dk.metric = key.metric;
    dk.dtype = key.dtype;
    dk.shape = key.shape;
    dk.lower_is_better = key.lower_is_better;
    dk.gpu = gpu_index[{key.arch, key.device}];
    if (!h.series(groups[k].back()).empty())
      dk.variant = std::string(h.observations()[h.series(groups[k].back()).back()].variant);
    auto it = verdicts.find(key_id(key, key.device));
    if (it != verdicts.end()) {
      const GateKeyResult& g = *it->second;
      dk.has_verdict = true;
      dk.verdict = g.status;
      dk.rule = g.rule;
      dk.why = g.why;
      // The newest point (unless missing from the newest run) is the gated one.
      if (!dk.points.empty() && g.rule != "missing" &&
          h.runs()[dk.points.back().run].label == g.run)
        dk.points.back().verdict = g.status;
    }
  }
  for (const auto& [arch, a] : h.arch_runs()) d.runs[a.newest].gated = true;
}

// The rows History did not put in a series (a second row of a key in one
// attempt of a run): markers of that run's point.
void add_repeats(DashboardData& d, const History& h,
                 const std::vector<std::vector<uint32_t>>& groups) {
  const auto& obs = h.observations();
  std::vector<char> in_series(obs.size(), 0);
  std::vector<uint32_t> group_of(h.keys().size());
  for (uint32_t g = 0; g < groups.size(); ++g)
    for (uint32_t k : groups[g]) {
      group_of[k] = g;
      for (uint32_t i : h.series(k)) in_series[i] = 1;
    }
  for (uint32_t i = 0; i < obs.size(); ++i)
    if (!in_series[i]) {
      DashboardKey& dk = d.keys[group_of[obs[i].key]];
      add_marker(dk, obs[i]);
      widen_spread(dk, obs[i], dk.lower_is_better);
    }
}

void add_once(std::vector<uint32_t>& v, uint32_t x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// Per run: its own rows by status (re-measurements left out), keys by
// verdict, GPU models and boards.
void count_per_run(DashboardData& d, const History& h) {
  for (const DashboardKey& dk : d.keys)
    for (const DashboardPoint& p : dk.points) {
      ++d.runs[p.run].verdicts[static_cast<int>(p.verdict)];
      add_once(d.runs[p.run].gpus, dk.gpu);
    }
  for (const Observation& o : h.observations()) {
    if (o.attempt != 1) continue;
    ++d.runs[o.run].rows[static_cast<int>(o.status)];
    if (!d.boards.empty()) add_once(d.runs[o.run].boards, o.gpu);
  }
  for (auto& dr : d.runs) std::sort(dr.gpus.begin(), dr.gpus.end());
}

// What the runs lack, and what the page leaves out because of it.
void note_runs(DashboardData& d, const History& h, const DashboardOptions& opt) {
  const size_t nr = d.runs.size();
  if (nr == 1)
    d.notes.push_back("One run only: no trend and no baseline yet (the history rule needs " +
                      std::to_string(opt.gate.rule.min_history) + " earlier runs).");
  size_t no_time = 0, no_sha = 0, no_id = 0;
  for (const DashboardRun& r : d.runs) {
    no_time += !r.has_time;
    no_sha += r.git_sha.empty();
  }
  for (const Run& r : h.runs())
    no_id += r.label.find('#') != std::string::npos && r.timestamp.empty();
  if (no_time)
    d.notes.push_back(count_of(no_time, "run has", "runs have") + " no timestamp (of " +
                      std::to_string(nr) + "): the charts' x axis is the run order, not time.");
  if (no_sha)
    d.notes.push_back(count_of(no_sha, "run has", "runs have") + " no git_sha (of " +
                      std::to_string(nr) +
                      "; gpt_fast files have none): no commit markers where they are.");
  if (no_id)
    d.notes.push_back(count_of(no_id, "run comes", "runs come") +
                      " from files without run ids (gpt_fast): each repeat of a key in a file "
                      "is taken as that file's next run, files in the order given.");
}

// The same for the keys.
void note_keys(DashboardData& d, const DashboardOptions& opt) {
  const size_t nk = d.keys.size();
  size_t no_target = 0, no_roof = 0;
  for (const DashboardKey& k : d.keys) {
    bool t = false, r = false;
    for (const DashboardPoint& p : k.points) {
      t = t || p.target == p.target;
      r = r || p.roofline == p.roofline;
    }
    no_target += !t;
    no_roof += !r;
  }
  if (no_target)
    d.notes.push_back(count_of(no_target, "key has", "keys have") + " no target (of " +
                      std::to_string(nk) +
                      ", none in the target files nor in the rows): no target line; the gate "
                      "judges them by their history only.");
  if (no_roof)
    d.notes.push_back(count_of(no_roof, "key has", "keys have") + " no roofline (of " +
                      std::to_string(nk) +
                      "; gpt_fast rows and probes have none): their cells show the value, and "
                      "the roofline-fraction axis leaves them out.");
  for (const DashboardGpu& g : d.gpus)
    if (g.arch.empty())
      d.notes.push_back(
          "Rows without arch (older gpt_fast files) are shown under the GPU '(no arch)'; no "
          "target file can match them.");
  if (opt.gate.targets.empty())
    d.notes.push_back(
        "No target files given (--targets): targets come from the rows' own target column.");
}

}  // namespace

bool parse_iso_time(std::string_view s, int64_t& out) {
  const std::string t(s);
  std::tm tm{};
  const char* end = strptime(t.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (t.size() != 20 || !end || *end) return false;
  out = timegm(&tm);
  return true;
}

std::vector<DashboardPoint> judge_series(const GateContext& g, const Key& key,
                                         const std::vector<uint32_t>& series) {
  const auto& obs = g.hist.observations();
  const TargetFile* tf = key.arch.empty() ? nullptr : match_gpu(g.opt.targets, key.arch);
  // One point per run, judged by judge_key on the runs up to it.
  std::vector<RunValue> runs, upto;
  group_runs(obs, series, runs);
  std::vector<DashboardPoint> out;
  out.reserve(runs.size());
  for (const RunValue& rv : runs) {
    upto.push_back(rv);
    const Observation& o = obs[series[rv.bad != SIZE_MAX ? rv.bad : rv.first]];
    DashboardPoint p;
    p.run = o.run;
    p.status = status_letter(o.status);
    if (o.roofline()) p.roofline = *o.roofline();
    if (o.noise_rel()) p.noise = *o.noise_rel();
    p.samples = o.samples;
    if (rv.measured) p.value = rv.value;
    const int64_t board = board_of_rows(g.hist, &series[rv.first], rv.attempts);
    p.board = board >= 0 ? static_cast<int32_t>(board) : -1;
    const TargetCheck t = find_target(key, o, tf);  // drawn for every point, as rule 2 finds it
    if (t.target) p.target = *t.target;
    HistoryResult r;
    p.verdict = judge_key(g, {key, series, upto, upto.back(), o}, &r).status;
    if (r.history > 0 && r.baseline > 0) {
      p.baseline = r.baseline;
      p.band = std::max(g.opt.rule.min_gap, r.explained);
    }
    out.push_back(p);
  }
  return out;
}

DashboardData build_dashboard(const History& h, const DashboardOptions& opt) {
  DashboardData d;
  GateReport rep = run_gate(h, opt.gate);
  d.title = opt.title;
  d.generated = utc_now();
  d.inputs = h.files();
  d.rows = h.rows();
  d.window = opt.gate.rule.window;
  d.min_gap = opt.gate.rule.min_gap;
  d.strict = opt.gate.strict;
  d.gate_summary = rep.summary();
  for (const auto& g : rep.gated_runs) d.gated_runs.push_back(g.describe());
  d.warnings = rep.warnings;
  for (const auto& f : rep.input_failures) d.warnings.push_back("FAIL " + f.rule + " " + f.text());
  GpuIndex gpu_index = add_gpus(d, h, opt);
  add_runs(d, h);
  add_boards(d, h);
  const auto groups = key_groups(h.keys());
  judge_keys(d, h, opt, groups);
  describe_keys(d, h, rep, gpu_index, groups);
  add_repeats(d, h, groups);
  count_per_run(d, h);
  note_runs(d, h, opt);
  note_keys(d, opt);
  return d;
}

}  // namespace kb
