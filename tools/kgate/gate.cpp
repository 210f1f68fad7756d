#include "tools/kgate/gate.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kb {

namespace {

std::string pct(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", rel * 100);
  return buf;
}

// The newest and the one before it, per arch.
struct ArchRuns {
  uint32_t newest = 0, previous = 0;
  bool has_previous = false;
  size_t keys = 0;
};

struct TargetCheck {
  std::optional<double> target;
  double tolerance = 0.05;  // TargetEntry's default, for the rows' own targets
  std::string source;
};

TargetCheck find_target(const Key& key, const Observation& o, const GateOptions& opt) {
  TargetCheck t;
  if (!key.arch.empty()) {
    if (const TargetFile* tf = match_gpu(opt.targets, key.arch)) {
      std::string variant(o.variant);
      if (const TargetEntry* e = tf->find(key.name, key.metric, key.dtype, key.shape, variant)) {
        t.target = resolve_target(*e, o.roofline(), key.lower_is_better);
        t.tolerance = e->tolerance;
        t.source = tf->path;
      }
    }
  }
  // No target file entry (or a relative one and no roofline in the row):
  // the target the run wrote into the row.
  if (!t.target && o.target()) {
    t.target = o.target();
    t.tolerance = 0.05;
    t.source = "the row's target column";
  }
  return t;
}

std::string target_why(double value, const TargetCheck& t, bool lower) {
  double miss = lower ? value / *t.target - 1 : 1 - value / *t.target;
  return std::string(lower ? "above" : "below") + " target: " + show_value(value) + " vs " +
         show_value(*t.target) + " (" + pct(miss) + " worse, tolerance " + pct(t.tolerance) + "; " +
         t.source + ")";
}

std::string history_why(const HistoryResult& h, const HistoryRuleOptions& r) {
  std::string base = "median of the last " + std::to_string(h.history) + " runs";
  switch (h.outcome) {
    case HistoryOutcome::fail:
      if (h.recent == 1)
        return pct(h.drop) + " worse than the " + base + ": more than --min-gap " + pct(r.min_gap) +
               " and than the history's noise explains (noise " + pct(h.noise) + ": up to " +
               pct(h.explained) + ")";
      return "the last " + std::to_string(h.recent) + " runs are " + pct(h.recent_drop) +
             " worse (" + (h.recent == 2 ? "the better of the two" : "their median") +
             ") than the median of the runs before them: more than --min-gap " + pct(r.min_gap) +
             " and than the noise explains for " + std::to_string(h.recent) + " runs (up to " +
             pct(h.recent_explained) + "); the newest is " + pct(h.drop) + " worse than the " +
             base;
    case HistoryOutcome::too_little_history:
      return "only " + std::to_string(h.history) + " earlier run" + (h.history == 1 ? "" : "s") +
             " on this GPU: the history rule needs " + std::to_string(r.min_history);
    case HistoryOutcome::too_noisy:
      return "history too noisy to gate: noise " + pct(h.noise) + " is above " + pct(r.max_noise) +
             " (a drop would have to exceed " + pct(h.explained) + " to be seen)";
    case HistoryOutcome::within_noise:
      return pct(h.drop) + " worse than the " + base + ", but the history's noise (" +
             pct(h.noise) + ") explains up to " + pct(h.explained);
    case HistoryOutcome::pass:
      break;
  }
  return "";
}

int status_rank(GateStatus s) { return static_cast<int>(s); }

RunContext context_of(const Run& run) {
  return {run.label, run.timestamp, run.git_sha, run.driver, run.cuda};
}

// For a failing key: the newest earlier run where its row was `ok` and not
// worse than `baseline` (when there is one) by more than the gap. The
// reports name it, so that the commits and drivers in between are the
// suspects.
void find_last_good(const History& hist, const std::vector<uint32_t>& series, const Key& key,
                    const std::optional<double>& baseline, double min_gap, GateKeyResult& r) {
  const auto& obs = hist.observations();
  for (size_t i = series.size() - 1; i-- > 0;) {
    const Observation& o = obs[series[i]];
    if (o.status != RowStatus::ok) continue;
    if (baseline) {
      double drop = key.lower_is_better ? o.actual / *baseline - 1 : 1 - o.actual / *baseline;
      if (drop > min_gap) continue;
    }
    r.last_good = context_of(hist.runs()[o.run]);
    r.last_good_value = o.actual;
    return;
  }
}

}  // namespace

GateReport run_gate(const History& hist, const GateOptions& opt) {
  GateReport rep;
  rep.strict = opt.strict;
  rep.window = opt.rule.window;
  rep.min_gap = opt.rule.min_gap;
  rep.min_history = opt.rule.min_history;
  rep.rows = hist.rows();
  rep.inputs = hist.files();
  for (const auto& w : hist.warnings()) rep.warnings.push_back(w.text());

  const auto& keys = hist.keys();
  const auto& obs = hist.observations();
  const auto& runs = hist.runs();

  // The newest run of each arch, and the run before it.
  std::map<std::string, ArchRuns> arch_runs;
  for (const auto& o : obs) {
    auto [it, fresh] = arch_runs.try_emplace(keys[o.key].arch);
    ArchRuns& a = it->second;
    if (fresh) {
      a.newest = o.run;
    } else if (o.run > a.newest) {
      a.previous = a.newest;
      a.has_previous = true;
      a.newest = o.run;
    } else if (o.run < a.newest && (!a.has_previous || o.run > a.previous)) {
      a.previous = o.run;
      a.has_previous = true;
    }
  }

  const size_t keep = static_cast<size_t>(opt.rule.window + opt.rule.max_recent);
  for (uint32_t k = 0; k < keys.size(); ++k) {
    const Key& key = keys[k];
    const auto& series = hist.series(k);
    if (series.empty()) continue;
    ArchRuns& ar = arch_runs[key.arch];
    const Observation& last = obs[series.back()];
    GateKeyResult r;
    r.name = key.name;
    r.metric = key.metric;
    r.dtype = key.dtype;
    r.shape = key.shape;
    r.arch = key.arch;
    r.device = key.device;
    r.lower_is_better = key.lower_is_better;

    if (last.run != ar.newest) {
      // Not in the newest run: worth saying only if it was in the one before.
      if (ar.has_previous && last.run == ar.previous) {
        r.status = GateStatus::inconclusive;
        r.rule = "missing";
        r.run = runs[ar.newest].label;
        r.why = "not in the newest run " + runs[ar.newest].label + " (was in " +
                runs[ar.previous].label + ")";
        if (last.measured()) r.value = last.actual;
        rep.keys.push_back(std::move(r));
      }
      continue;
    }
    ++ar.keys;
    r.run = runs[last.run].label;
    r.variant = std::string(last.variant);
    r.throttled = last.status == RowStatus::throttled;

    // The earlier measured runs (throttled ones say more about the machine
    // than about the code: left out of the baseline).
    std::vector<double> values;
    for (size_t i = series.size() - 1; i-- > 0 && values.size() < keep;) {
      const Observation& o = obs[series[i]];
      if (o.measured() && o.status != RowStatus::throttled) {
        values.push_back(o.actual);
        r.history_runs_labels.push_back(runs[o.run].label);
      }
    }
    std::reverse(values.begin(), values.end());
    std::reverse(r.history_runs_labels.begin(), r.history_runs_labels.end());
    r.history = values;

    // Rule 1, and rows that are not gated.
    if (last.status == RowStatus::failed || last.status == RowStatus::incorrect) {
      r.status = GateStatus::fail;
      bool failed = last.status == RowStatus::failed;
      r.rule = failed ? "failed" : "incorrect";
      r.why = failed ? "the run failed" : "the output is incorrect (it failed its check)";
      if (!last.message.empty()) r.why += ": " + std::string(last.message);
      find_last_good(hist, series, key, std::nullopt, opt.rule.min_gap, r);
      rep.keys.push_back(std::move(r));
      continue;
    }
    if (last.status == RowStatus::skipped) {
      r.status = GateStatus::skipped;
      r.rule = "skipped";
      r.why = last.message.empty() ? "skipped by the run" : std::string(last.message);
      rep.keys.push_back(std::move(r));
      continue;
    }

    const double value = last.actual;
    r.value = value;
    std::vector<std::string> fails, doubts;

    // Rule 2.
    TargetCheck t = find_target(key, last, opt);
    if (t.target) {
      r.target = t.target;
      if (below_target(value, *t.target, t.tolerance, key.lower_is_better))
        fails.push_back(target_why(value, t, key.lower_is_better));
    } else if (last.status == RowStatus::below_target) {
      fails.push_back("marked below_target by the run (no target found to check it against)");
    }

    // Rule 3.
    values.push_back(value);
    HistoryResult h = history_rule(values, key.lower_is_better, opt.rule);
    r.history_runs = h.history;
    r.noise = h.noise;
    if (h.history > 0) {
      r.baseline = h.baseline;
      r.change = h.change;
    }
    std::string hw = history_why(h, opt.rule);
    if (h.outcome == HistoryOutcome::fail)
      fails.push_back(hw);
    else if (h.outcome != HistoryOutcome::pass)
      doubts.push_back(hw);

    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : "; and ") + x;
      return s;
    };
    if (!fails.empty() && last.status == RowStatus::throttled) {
      r.status = GateStatus::inconclusive;
      r.rule = "throttled";
      r.why = "the run was throttled (SM clock low), so this may be the machine: " + join(fails) +
              "; rerun to tell";
    } else if (!fails.empty()) {
      r.status = GateStatus::fail;
      bool by_target = !t.target ? last.status == RowStatus::below_target
                                 : below_target(value, *t.target, t.tolerance, key.lower_is_better);
      bool by_history = h.outcome == HistoryOutcome::fail;
      r.rule = by_target && by_history ? "target+history" : by_target ? "target" : "history";
      r.why = join(fails);
      find_last_good(hist, series, key, r.baseline, opt.rule.min_gap, r);
    } else if (!doubts.empty()) {
      r.status = GateStatus::inconclusive;
      r.rule = h.outcome == HistoryOutcome::too_little_history ? "too little history"
               : h.outcome == HistoryOutcome::too_noisy        ? "too noisy"
                                                               : "within noise";
      r.why = join(doubts);
    }
    rep.keys.push_back(std::move(r));
  }

  for (const auto& [arch, a] : arch_runs)
    rep.gated_runs.push_back({arch, context_of(runs[a.newest]), a.keys});
  std::stable_sort(rep.keys.begin(), rep.keys.end(),
                   [](const GateKeyResult& a, const GateKeyResult& b) {
                     if (a.status != b.status) return status_rank(a.status) < status_rank(b.status);
                     return key_label(a) < key_label(b);
                   });
  return rep;
}

}  // namespace kb
