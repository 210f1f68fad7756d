#include "tools/kgate/gate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/csv_writer.h"
#include "core/metrics.h"

namespace kb {

namespace {

// A seed mean (no time per call of its own) failing on history (or its
// target) alone while each of its shapes passed or was the machine's, at
// least one by the host's launch (or on this host's target), is the host's
// too (docs/gate.md "Hosts: the launch cost").
void host_means(std::vector<GateKeyResult>& keys) {
  for (GateKeyResult& m : keys) {
    if (m.shape != "mean" || m.status != GateStatus::fail) continue;
    if (m.rule != "history" && m.rule != "target") continue;
    size_t shapes = 0, by_host = 0;
    bool all_fine = true;
    for (const GateKeyResult& k : keys) {
      if (k.shape == "mean" || k.name != m.name || k.metric != m.metric || k.dtype != m.dtype ||
          k.arch != m.arch || k.device != m.device)
        continue;
      ++shapes;
      by_host += m.rule == "target"
                     ? k.target_on_host
                     : k.status == GateStatus::inconclusive && k.rule == "host launch";
      // For a target: each shape met its own (its history may not judge yet).
      const bool judged_fine = m.rule == "target"
                                   ? k.rule != "throttled"
                                   : k.rule == "host launch" || k.rule == "new board";
      all_fine = all_fine && (k.status == GateStatus::pass ||
                              (k.status == GateStatus::inconclusive && judged_fine));
    }
    if (!all_fine || by_host == 0) continue;
    if (m.rule == "target") {  // its shapes met their targets on this host
      m.status = GateStatus::pass;
      m.note = (m.note.empty() ? "" : m.note + "; ") + m.why + ", but each of its " +
               std::to_string(shapes) + " shapes in this run passed (" + std::to_string(by_host) +
               " of them on this host's target): so does the mean";
      m.why.clear();
      m.rule.clear();
      m.suspect = false;
      m.suspect_score = 0;
      continue;
    }
    m.status = GateStatus::inconclusive;
    m.rule = "host launch";
    m.why += "; but each of its " + std::to_string(shapes) +
             " shapes in this run passed or is the machine's (" + std::to_string(by_host) +
             " of them the host's slower launch): the mean's drop is the host's";
    m.suspect = false;
    m.suspect_score = 0;
  }
}

// The probe's launch(us) of each run per arch (the median of its GPUs'
// attempt 1), NaN where a run has none.
std::map<std::string, std::vector<double>> launch_per_run(const History& hist) {
  const auto& keys = hist.keys();
  std::map<std::string, std::vector<double>> launch_of;
  std::vector<bool> launch_key(keys.size());
  for (size_t k = 0; k < keys.size(); ++k)
    launch_key[k] = keys[k].name == "roofline_probe" && keys[k].metric == metric_name::launch_us;
  std::map<std::pair<std::string, uint32_t>, std::vector<double>> rows;
  for (const auto& o : hist.observations())
    if (launch_key[o.key] && o.attempt == 1 && o.measured())
      rows[{keys[o.key].arch, o.run}].push_back(o.actual);
  for (auto& [arch_run, v] : rows) {
    auto& per_run = launch_of[arch_run.first];
    per_run.resize(hist.runs().size(), Observation::kNone);
    per_run[arch_run.second] = median_of(v);
  }
  return launch_of;
}

// An arch's newest run and the one before, with how many gate keys each has.
struct ArchGate : ArchRuns {
  size_t keys = 0, previous_keys = 0;
};

// Rule 5, fail closed: tonight's untrusted rows, and a newest run with
// fewer than half the keys of the run before it.
void add_input_failures(const History& hist, const std::map<std::string, ArchGate>& arch_runs,
                        GateReport& rep) {
  for (const Warning& w : hist.untrusted())
    rep.input_failures.push_back(
        {w.path + (w.line && w.line != SIZE_MAX ? ":" + std::to_string(w.line) : std::string()),
         "untrusted row", w.what});
  const auto& runs = hist.runs();
  for (const auto& [arch, a] : arch_runs) {
    if (!a.has_previous || a.keys >= 0.5 * static_cast<double>(a.previous_keys)) continue;
    rep.input_failures.push_back(
        {arch.empty() ? std::string("rows without an arch") : arch, "partial run",
         "the newest run " + runs[a.newest].label + " has " + std::to_string(a.keys) +
             (a.keys == 1 ? " key" : " keys") + " where the run before it, " +
             runs[a.previous].label + ", had " + std::to_string(a.previous_keys) +
             ": fewer than half (a run cut short, or a stray row appended after the night's "
             "rows: the newest run is the one appended last)"});
  }
}

}  // namespace

std::vector<std::vector<uint32_t>> key_groups(const std::vector<Key>& keys) {
  std::vector<std::vector<uint32_t>> groups;
  std::map<std::string, size_t> at;
  for (uint32_t k = 0; k < keys.size(); ++k) {
    auto [it, fresh] =
        at.try_emplace(key_id(keys[k], gate_key_device(keys[k].device)), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(k);
  }
  return groups;
}

void merge_series(const History& hist, const std::vector<uint32_t>& group,
                  std::vector<uint32_t>& merged) {
  if (group.size() == 1) {
    merged = hist.series(group.front());
    return;
  }
  const auto& obs = hist.observations();
  merged.clear();
  for (uint32_t k : group)
    merged.insert(merged.end(), hist.series(k).begin(), hist.series(k).end());
  std::stable_sort(merged.begin(), merged.end(),
                   [&](uint32_t a, uint32_t b) { return obs[a].before(obs[b]); });
}

void group_runs(const std::vector<Observation>& obs, const std::vector<uint32_t>& series,
                std::vector<RunValue>& out) {
  out.clear();
  for (size_t i = 0, j; i < series.size(); i = j) {
    std::vector<double> v[4];  // attempt 1 ok, throttled; re-measurements ok, throttled
    RunValue rv;
    rv.first = i;
    for (j = i; j < series.size() && obs[series[j]].run == obs[series[i]].run; ++j) {
      const Observation& o = obs[series[j]];
      ++rv.attempts;
      if (o.attempt == 1 && rv.bad == SIZE_MAX &&
          (o.status == RowStatus::failed || o.status == RowStatus::incorrect))
        rv.bad = j;
      if (o.measured())
        v[(o.attempt > 1) * 2 + (o.status == RowStatus::throttled)].push_back(o.actual);
    }
    // The run's own value: its GPUs' median (one GPU: its row).
    if (!v[0].empty() || !v[1].empty()) rv.first_value = median_of(v[v[0].empty() ? 1 : 0]);
    const int use = !v[2].empty() ? 2 : !v[3].empty() ? 3 : !v[0].empty() ? 0 : 1;
    if (!v[use].empty()) {
      rv.measured = true;
      rv.throttled = use % 2 == 1;
      rv.value = median_of(v[use]);
      std::vector<double>& x = v[use];
      if (x.size() % 2 == 0) {
        std::sort(x.begin(), x.end());
        rv.mid_spread = x[x.size() / 2] - x[x.size() / 2 - 1];
      }
      rv.remeasured = use >= 2 ? static_cast<int>(v[use].size()) : 0;
    }
    out.push_back(rv);
  }
}

std::string suspects_csv(const GateReport& rep, size_t* capped, double max_share) {
  std::vector<const GateKeyResult*> s;
  size_t gated = 0;
  for (const auto& k : rep.keys) {
    if (k.status == GateStatus::skipped || k.rule == "missing") continue;
    ++gated;
    if (k.suspect && k.run_has_id) s.push_back(&k);
  }
  std::stable_sort(s.begin(), s.end(), [](const GateKeyResult* a, const GateKeyResult* b) {
    return a->suspect_score > b->suspect_score;
  });
  size_t cap = std::max<size_t>(1, static_cast<size_t>(std::floor(max_share * gated + 1e-9)));
  if (capped) *capped = s.size() > cap ? s.size() - cap : 0;
  if (s.size() > cap) s.resize(cap);
  std::string out = "run_id,name,dtype,shape,variant,metric,arch,reason\n";
  for (const GateKeyResult* k : s) {
    std::string reason = k->status == GateStatus::fail ? "fails: " : "drop: ";
    reason += k->change ? show_change(*k->change) + " against the baseline" : k->rule;
    if (k->status == GateStatus::fail) reason += " (" + k->rule + ")";
    out += csv_line({k->run, k->name, k->dtype, k->shape, k->variant, k->metric, k->arch, reason}) +
           "\n";
  }
  return out;
}

GateContext gate_context(const History& hist, const GateOptions& opt) {
  return {hist, opt, launch_per_run(hist),
          static_cast<size_t>(opt.rule.window + opt.rule.max_recent)};
}

GateReport run_gate(const History& hist, const GateOptions& opt) {
  GateReport rep;
  rep.strict = opt.strict;
  rep.window = opt.rule.window;
  rep.min_gap = opt.rule.min_gap;
  rep.min_history = opt.rule.min_history;
  rep.rows = hist.rows();
  rep.inputs = hist.files();
  for (const auto& w : hist.warnings()) rep.warnings.push_back(w.text());

  const auto& obs = hist.observations();
  const auto& runs = hist.runs();

  std::map<std::string, ArchGate> arch_runs;
  for (const auto& [arch, a] : hist.arch_runs()) arch_runs[arch] = {a};

  const GateContext ctx = gate_context(hist, opt);
  std::vector<RunValue> runs_of_key;
  std::vector<uint32_t> series;
  for (const auto& group : key_groups(hist.keys())) {
    Key key = hist.keys()[group.front()];
    key.device = gate_key_device(key.device);
    merge_series(hist, group, series);
    if (series.empty()) continue;
    ArchGate& ar = arch_runs[key.arch];
    group_runs(obs, series, runs_of_key);
    if (ar.has_previous)
      for (const RunValue& rv : runs_of_key)
        if (obs[series[rv.first]].run == ar.previous) ++ar.previous_keys;
    const RunValue& now = runs_of_key.back();
    const Observation& last = obs[series[now.bad != SIZE_MAX ? now.bad : now.first]];
    if (last.run != ar.newest) {
      // Not in the newest run: worth saying only if it was in the one before.
      if (ar.has_previous && last.run == ar.previous) {
        GateKeyResult r = result_of(key);
        r.status = GateStatus::inconclusive;
        r.rule = "missing";
        r.run = runs[ar.newest].label;
        r.why = "not in the newest run " + runs[ar.newest].label + " (was in " +
                runs[ar.previous].label + ")";
        if (now.measured) r.value = now.value;
        rep.keys.push_back(std::move(r));
      }
      continue;
    }
    ++ar.keys;
    rep.keys.push_back(judge_key(ctx, {key, series, runs_of_key, now, last}));
  }

  host_means(rep.keys);
  add_input_failures(hist, arch_runs, rep);
  for (const auto& [arch, a] : arch_runs)
    rep.gated_runs.push_back({arch, context_of(runs[a.newest]), a.keys});
  // A GPU behind its siblings: a finding about that GPU, not about the code.
  for (const SiblingReport& s : sibling_check(hist, opt.sibling))
    for (const SiblingGpu& g : s.gpus)
      if (g.named) rep.gpu_findings.push_back({s.arch, s.run, g.gpu, g.why});
  std::stable_sort(rep.keys.begin(), rep.keys.end(),
                   [](const GateKeyResult& a, const GateKeyResult& b) {
                     if (a.status != b.status) return a.status < b.status;
                     return key_label(a) < key_label(b);
                   });
  return rep;
}

}  // namespace kb