#include "tools/kgate/gate.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <string_view>

#include "reports/metrics.h"
#include "tools/kgate/boards.h"
#include "tools/kgate/gate_input.h"
#include "tools/kgate/percent.h"
#include "tools/kgate/siblings.h"
#include "tools/kgate/variant.h"

namespace kb {

namespace {

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
         show_value(*t.target) + " (" + percent(miss) + " worse, tolerance " +
         percent(t.tolerance) + "; " + t.source + ")";
}

std::string history_why(const HistoryResult& h, const HistoryRuleOptions& r) {
  std::string base = "median of the last " + std::to_string(h.history) + " runs";
  switch (h.outcome) {
    case HistoryOutcome::fail:
      if (h.recent == 1)
        return percent(h.drop) + " worse than the " + base + ": more than --min-gap " +
               percent(r.min_gap) + " and than the history's noise explains (noise " +
               percent(h.noise) + ": up to " + percent(h.explained) + ")";
      return "the last " + std::to_string(h.recent) + " runs are " + percent(h.recent_drop) +
             " worse (" + (h.recent == 2 ? "the better of the two" : "their median") +
             ") than the median of the runs before them: more than --min-gap " +
             percent(r.min_gap) + " and than the noise explains for " + std::to_string(h.recent) +
             " runs (up to " + percent(h.recent_explained) + "); the newest is " + percent(h.drop) +
             " worse than the " + base;
    case HistoryOutcome::too_little_history:
      return "only " + std::to_string(h.history) + " earlier run" + (h.history == 1 ? "" : "s") +
             " on this GPU: the history rule needs " + std::to_string(r.min_history);
    case HistoryOutcome::too_noisy:
      return "history too noisy to gate: noise " + percent(h.noise) + " is above " +
             percent(r.max_noise) + " (a drop would have to exceed " + percent(h.explained) +
             " to be seen)";
    case HistoryOutcome::within_noise:
      return percent(h.drop) + " worse than the " + base + ", but the history's noise (" +
             percent(h.noise) + ") explains up to " + percent(h.explained);
    case HistoryOutcome::pass:
      break;
  }
  return "";
}

// A failing drop on a board new to the key that the boards' spread explains.
std::string new_board_why(const HistoryResult& h, const BoardPlan& p, const HistoryRuleOptions& r) {
  return percent(h.drop) + " worse than the median of the last " + std::to_string(h.history) +
         " runs, beyond --min-gap " + percent(r.min_gap) + " and the history's noise (up to " +
         percent(h.explained) + "), but the newest run is on a board new to this key, and boards " +
         "differ by up to " + percent(p.allowance) +
         (p.observed ? " on it (twice the spread of its boards)" : " (--board-gap)") +
         ": judged against that board itself from " + std::to_string(r.min_history) + " runs on it";
}

// A seed mean (shape `mean`: the mean of its experiment's seed shapes,
// with no time per call of its own) moves with its shapes. Where it fails
// on history alone, every other shape of its name, metric, dtype and GPU
// in this run passed or was the machine's (`host launch`, or `new board`
// within what boards differ by), and at least one was the host's launch,
// its drop is the host's too: inconclusive, not a suspect (a recorded 4x
// H100 host: the gather_gemv and layer_norm means -4.5% and -5.8%, each
// of their shapes the host's or the board's). One shape that fails, or is
// inconclusive for another reason (a changed variant), keeps the mean
// failing.
void host_means(std::vector<GateKeyResult>& keys) {
  for (GateKeyResult& m : keys) {
    if (m.shape != "mean" || m.status != GateStatus::fail || m.rule != "history") continue;
    size_t shapes = 0, by_host = 0;
    bool all_fine = true;
    for (const GateKeyResult& k : keys) {
      if (k.shape == "mean" || k.name != m.name || k.metric != m.metric || k.dtype != m.dtype ||
          k.arch != m.arch || k.device != m.device)
        continue;
      ++shapes;
      if (k.status == GateStatus::inconclusive && k.rule == "host launch")
        ++by_host;
      else if (k.status != GateStatus::pass &&
               !(k.status == GateStatus::inconclusive && k.rule == "new board"))
        all_fine = false;
    }
    if (!all_fine || by_host == 0) continue;
    m.status = GateStatus::inconclusive;
    m.rule = "host launch";
    m.why += "; but each of its " + std::to_string(shapes) +
             " shapes in this run passed or is the machine's (" + std::to_string(by_host) +
             " of them the host's slower launch): the mean's drop is the host's";
    m.suspect = false;
    m.suspect_score = 0;
  }
}

// A drop within what the host's slower launch explains (boards.h HostLaunch).
std::string host_why(const HistoryResult& h, const HostLaunch& l) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                " (%+.2f us per call), but the newest run's host launches slower: the probe's "
                "launch(us) moved %+.2f us (%.2f -> %.2f), and a slowdown of up to that much per "
                "call (%+.2f us with the history's noise) is the host's, not the code's",
                l.slowdown_us, l.rise_us(), l.before_us, l.now_us, l.allowed_us);
  return percent(h.drop) + " worse than the median of the last " + std::to_string(h.history) +
         " runs" + buf;
}

// The newest run's time per call of a key (the median of its rows'
// median_us), NaN where its rows have none.
double time_per_call(const std::vector<Observation>& obs, const std::vector<uint32_t>& series,
                     const RunValue& now) {
  std::vector<double> t;
  for (size_t j = now.first; j < now.first + now.attempts; ++j)
    if (obs[series[j]].measured() && obs[series[j]].median_us())
      t.push_back(*obs[series[j]].median_us());
  return t.empty() ? Observation::kNone : median_of(t);
}

int status_rank(GateStatus s) { return static_cast<int>(s); }

RunContext context_of(const Run& run) {
  return {run.label, run.timestamp, run.git_sha, run.driver, run.cuda};
}

// For a failing key: the newest earlier run where it was good (measured,
// not throttled, its row `ok` or its re-measurements taken instead, and not
// worse than `baseline` (when there is one) by more than the gap). The
// reports name it, so that the commits and drivers in between are the
// suspects. `runs_of_key` ends with the run being judged.
// With `board` (>= 0; boards.h), only runs on that board: the baseline was
// that board's.
void find_last_good(const History& hist, const std::vector<uint32_t>& series,
                    const std::vector<RunValue>& runs_of_key, const Key& key,
                    const std::optional<double>& baseline, double min_gap, GateKeyResult& r,
                    int64_t board = kUnknownBoard) {
  const auto& obs = hist.observations();
  for (size_t i = runs_of_key.size() - 1; i-- > 0;) {
    const RunValue& e = runs_of_key[i];
    if (!e.measured || e.throttled) continue;
    if (board >= 0 && board_of_rows(hist, &series[e.first], e.attempts) != board) continue;
    const Observation& o = obs[series[e.first]];
    if (o.status != RowStatus::ok && e.remeasured == 0) continue;
    if (baseline) {
      double drop = key.lower_is_better ? e.value / *baseline - 1 : 1 - e.value / *baseline;
      if (drop > min_gap) continue;
    }
    r.last_good = context_of(hist.runs()[o.run]);
    r.last_good_value = e.value;
    return;
  }
}

}  // namespace

void group_runs(const std::vector<Observation>& obs, const std::vector<uint32_t>& series,
                std::vector<RunValue>& out) {
  out.clear();
  std::vector<double> ok, hot, re_ok, re_hot;
  for (size_t i = 0; i < series.size();) {
    size_t j = i;
    ok.clear();
    hot.clear();
    re_ok.clear();
    re_hot.clear();
    RunValue rv;
    rv.first = i;
    for (; j < series.size() && obs[series[j]].run == obs[series[i]].run; ++j) {
      const Observation& o = obs[series[j]];
      ++rv.attempts;
      if (o.attempt == 1 && rv.bad == SIZE_MAX &&
          (o.status == RowStatus::failed || o.status == RowStatus::incorrect))
        rv.bad = j;
      if (!o.measured()) continue;
      bool hot_row = o.status == RowStatus::throttled;
      if (o.attempt == 1) {
        (hot_row ? hot : ok).push_back(o.actual);
      } else {
        (hot_row ? re_hot : re_ok).push_back(o.actual);
      }
    }
    const std::vector<double>* use = !re_ok.empty()    ? &re_ok
                                     : !re_hot.empty() ? &re_hot
                                     : !ok.empty()     ? &ok
                                                       : &hot;
    // The run's own value: its GPUs' median (one GPU: its row).
    if (!ok.empty())
      rv.first_value = median_of(ok);
    else if (!hot.empty())
      rv.first_value = median_of(hot);
    if (!use->empty()) {
      rv.measured = true;
      rv.throttled = use == &re_hot || use == &hot;
      rv.value = median_of(*use);
      rv.remeasured = use == &re_ok || use == &re_hot ? static_cast<int>(use->size()) : 0;
    }
    out.push_back(rv);
    i = j;
  }
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
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

  const auto& keys = hist.keys();
  const auto& obs = hist.observations();
  const auto& runs = hist.runs();

  // The newest run of each arch, and the run before it (append order).
  std::map<std::string, ArchGate> arch_runs;
  for (const auto& [arch, a] : hist.arch_runs())
    arch_runs[arch] = {a.newest, a.previous, a.has_previous, 0, 0};

  // The GPUs of one kind in one run are attempts of one key: the keys that
  // differ only in their device label (cuda:0, cuda:1, ...) are judged as
  // one, their rows merged in run and attempt order.
  std::vector<std::vector<uint32_t>> groups;
  {
    std::map<std::string, size_t> at;
    for (uint32_t k = 0; k < keys.size(); ++k) {
      const Key& key = keys[k];
      const std::string g = key.name + '\x1f' + key.metric + '\x1f' + key.dtype + '\x1f' +
                            key.shape + '\x1f' + key.arch + '\x1f' + gate_key_device(key.device);
      auto [it, fresh] = at.try_emplace(g, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(k);
    }
  }
  // The probe's launch(us) of each run, per arch: the median of the run's
  // GPUs, attempt 1 (the probe is not re-measured); NaN where a run has
  // none. For the host rule (boards.h HostLaunch).
  std::map<std::string, std::vector<double>> launch_of;
  {
    std::vector<bool> launch_key(keys.size());
    for (size_t k = 0; k < keys.size(); ++k)
      launch_key[k] = keys[k].name == "roofline_probe" && keys[k].metric == metric_name::launch_us;
    std::map<std::pair<std::string, uint32_t>, std::vector<double>> rows;
    for (const auto& o : obs)
      if (launch_key[o.key] && o.attempt == 1 && o.measured())
        rows[{keys[o.key].arch, o.run}].push_back(o.actual);
    for (auto& [arch_run, v] : rows) {
      auto& per_run = launch_of[arch_run.first];
      per_run.resize(runs.size(), Observation::kNone);
      per_run[arch_run.second] = median_of(v);
    }
  }

  const size_t keep = static_cast<size_t>(opt.rule.window + opt.rule.max_recent);
  std::vector<RunValue> runs_of_key;
  std::vector<uint32_t> merged;
  for (const auto& group : groups) {
    Key key = keys[group.front()];
    key.device = gate_key_device(key.device);
    if (group.size() == 1) {
      merged = hist.series(group.front());
    } else {
      merged.clear();
      for (uint32_t k : group)
        merged.insert(merged.end(), hist.series(k).begin(), hist.series(k).end());
      std::stable_sort(merged.begin(), merged.end(), [&](uint32_t a, uint32_t b) {
        if (obs[a].run != obs[b].run) return obs[a].run < obs[b].run;
        if (obs[a].attempt != obs[b].attempt) return obs[a].attempt < obs[b].attempt;
        return obs[a].seq < obs[b].seq;
      });
    }
    const auto& series = merged;
    if (series.empty()) continue;
    ArchGate& ar = arch_runs[key.arch];
    group_runs(obs, series, runs_of_key);
    if (ar.has_previous)
      for (const RunValue& rv : runs_of_key)
        if (obs[series[rv.first]].run == ar.previous) ++ar.previous_keys;
    const RunValue& now = runs_of_key.back();
    const Observation& last = obs[series[now.bad != SIZE_MAX ? now.bad : now.first]];
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
        if (now.measured) r.value = now.value;
        rep.keys.push_back(std::move(r));
      }
      continue;
    }
    ++ar.keys;
    r.run = runs[last.run].label;
    r.run_has_id = runs[last.run].has_id;
    r.variant = std::string(last.variant);
    r.attempts = now.attempts;
    // The value judged is throttled (a throttled row with no unthrottled
    // re-measurement behind it): the reports call it so.
    r.throttled = now.measured && now.throttled;
    std::vector<std::string> notes;
    const std::string kernel = kernel_identity(last.variant);
    if (kernel.size() != last.variant.size())
      notes.push_back("injected slowdown (" + injected_part(last.variant) +
                      "): a gate self-test, not a kernel change");

    // The earlier measured runs of the same kernel (throttled ones say more
    // about the machine than about the code: left out of the baseline).
    // A run of another variant is another kernel: not the baseline.
    std::vector<double> values;
    std::vector<int64_t> boards;       // each value's board (boards.h)
    std::vector<uint32_t> value_runs;  // each value's run
    std::vector<int> value_attempts;   // and its attempts (GPUs)
    const RunValue* changed_from = nullptr;
    for (size_t i = runs_of_key.size() - 1; i-- > 0 && values.size() < keep;) {
      const RunValue& e = runs_of_key[i];
      if (!e.measured || e.throttled) continue;
      const Observation& o = obs[series[e.first]];
      if (kernel_identity(o.variant) != kernel) {
        if (!changed_from && values.empty()) changed_from = &e;
        continue;
      }
      values.push_back(e.value);
      boards.push_back(board_of_rows(hist, &series[e.first], e.attempts));
      value_runs.push_back(o.run);
      value_attempts.push_back(e.attempts);
      r.history_runs_labels.push_back(runs[o.run].label);
    }
    if (changed_from) {
      const Observation& o = obs[series[changed_from->first]];
      notes.push_back("variant changed: was '" + std::string(o.variant) + "' in run " +
                      runs[o.run].label + ", now '" + std::string(last.variant) +
                      "'; the baseline is the " + std::to_string(values.size()) +
                      " earlier run(s) of this variant");
    }
    std::reverse(values.begin(), values.end());
    std::reverse(boards.begin(), boards.end());
    std::reverse(value_runs.begin(), value_runs.end());
    std::reverse(value_attempts.begin(), value_attempts.end());
    std::reverse(r.history_runs_labels.begin(), r.history_runs_labels.end());
    // Boards (boards.h): with enough runs on the newest run's board, those
    // runs are its baseline; on a board new to the key, the boards' spread
    // may explain a drop.
    const int64_t board = board_of_rows(hist, &series[now.first], now.attempts);
    const BoardPlan boards_plan =
        plan_boards(values, boards, board, key.lower_is_better, opt.rule, opt.board);
    values = baseline_runs(boards_plan, values);
    r.history_runs_labels = baseline_runs(boards_plan, r.history_runs_labels);
    value_runs = baseline_runs(boards_plan, value_runs);
    value_attempts = baseline_runs(boards_plan, value_attempts);
    const int64_t last_good_board =
        boards_plan.mode == BoardMode::same_board ? board : kUnknownBoard;
    r.history = values;
    if (now.attempts > 1 && now.measured && now.remeasured > 0)
      notes.push_back("re-measured: median of " + std::to_string(now.remeasured) +
                      " re-measurement(s) " + show_value(now.value) + " (the nightly's own " +
                      (now.first_value ? show_value(*now.first_value) : std::string("-")) + ")");
    auto add_notes = [&] {
      for (const auto& n : notes) r.note += (r.note.empty() ? "" : "; ") + n;
    };

    // Rule 1, and rows that are not gated.
    if (last.status == RowStatus::failed || last.status == RowStatus::incorrect) {
      r.status = GateStatus::fail;
      bool failed = last.status == RowStatus::failed;
      r.rule = failed ? "failed" : "incorrect";
      r.why = failed ? "the run failed" : "the output is incorrect (it failed its check)";
      if (now.attempts > 1) r.why += " on " + hist.gpus()[last.gpu].label();
      if (!last.message.empty()) r.why += ": " + std::string(last.message);
      find_last_good(hist, series, runs_of_key, key, std::nullopt, opt.rule.min_gap, r);
      add_notes();
      rep.keys.push_back(std::move(r));
      continue;
    }
    if (last.status == RowStatus::skipped || !now.measured) {
      r.status = GateStatus::skipped;
      r.rule = "skipped";
      r.why = last.message.empty() ? "skipped by the run" : std::string(last.message);
      add_notes();
      rep.keys.push_back(std::move(r));
      continue;
    }

    const double value = now.value;
    r.value = value;
    std::vector<std::string> fails, doubts;

    // Rule 2.
    TargetCheck t = find_target(key, last, opt);
    bool by_target = false;
    if (t.target) {
      r.target = t.target;
      by_target = below_target(value, *t.target, t.tolerance, key.lower_is_better);
      if (by_target) fails.push_back(target_why(value, t, key.lower_is_better));
    } else if (last.status == RowStatus::below_target && now.attempts == 1) {
      by_target = true;
      fails.push_back("marked below_target by the run (no target found to check it against)");
    }

    // Rule 3.
    values.push_back(value);
    HistoryResult h = history_rule(values, key.lower_is_better, opt.rule, now.attempts,
                                   history_attempts_of(value_attempts));
    r.history_runs = h.history;
    r.noise = h.noise;
    if (h.history > 0) {
      r.baseline = h.baseline;
      r.change = h.change;
    }
    std::string hw = history_why(h, opt.rule);
    // A board new to the key: a drop within what boards differ by is
    // inconclusive, not a failure; beyond it, it fails as before.
    const bool new_board =
        boards_plan.mode == BoardMode::new_board && h.outcome == HistoryOutcome::fail;
    const bool explained = board_explains(boards_plan, h);
    if (new_board) {
      notes.push_back(board_note(boards_plan, hist.gpus()[board].uuid, opt.board) +
                      (explained ? "" : "; this drop (" + percent(h.drop) + ") is beyond it"));
    }
    // The probe's rows are the GPU's ceilings, not a kernel of the suite, and
    // `kbench run --rerun` cannot measure them again (it re-measures
    // experiments' points): a move beyond the noise is reported, never a
    // failure or a suspect; the rows they bound are gated themselves (H100:
    // graph_node(us) +6.1% on 1 of 12 nights of an unchanged build, which
    // the rerun then refused; docs/decisions/0018-probe-rows-reported-not-gated.md).
    const bool ceiling = key.name == "roofline_probe";
    if (ceiling) h.suspect = false;
    // Hosts (boards.h HostLaunch): a host that launches kernels slower adds
    // its launch cost to each timed call; a slowdown per call no larger
    // (with the history's noise) is the host's: inconclusive, and not a
    // suspect (measuring again on that host cannot tell). A target missed
    // by it is the host's too where the baseline met the target.
    HostLaunch host;
    if (!explained && !ceiling && (h.outcome == HistoryOutcome::fail || by_target)) {
      auto it = launch_of.find(key.arch);
      if (it != launch_of.end()) {
        std::vector<double> before;
        for (uint32_t run : value_runs)
          if (auto v = Observation::opt(it->second[run])) before.push_back(*v);
        host = host_launch(before, it->second[last.run], time_per_call(obs, series, now), h,
                           key.lower_is_better, opt.rule);
      }
    }
    const bool by_host = host.explains();
    if (host.applies) notes.push_back(host_note(host));
    std::string target_doubt;
    if (by_host && by_target && t.target &&
        !below_target(h.baseline, *t.target, t.tolerance, key.lower_is_better)) {
      target_doubt = fails.back() + " (the baseline " + show_value(h.baseline) + " met it)";
      fails.pop_back();
      by_target = false;
    }
    if (by_host) h.suspect = false;
    if (explained) {
      doubts.push_back(new_board_why(h, boards_plan, opt.rule));
      // Measuring again on the same board cannot tell the board from the code.
      h.suspect = false;
    } else if (h.outcome == HistoryOutcome::fail && ceiling)
      doubts.push_back(hw + " (a ceiling of the GPU, measured by the probe: reported, not gated)");
    else if (h.outcome == HistoryOutcome::fail && by_host)
      doubts.push_back(host_why(h, host));
    else if (h.outcome == HistoryOutcome::fail)
      fails.push_back(hw);
    else if (h.outcome != HistoryOutcome::pass)
      doubts.push_back(hw);
    if (h.outcome == HistoryOutcome::too_little_history && changed_from)
      doubts.back() += " (the variant changed)";
    if (!target_doubt.empty()) doubts.push_back(target_doubt);

    // Suspects: what the first stage asks kbench to measure again. Only a
    // key with one attempt (one that has its re-measurements is judged on
    // them), and never a crash or a wrong result (those fail as they are).
    if (now.attempts == 1 && (by_target || h.suspect)) {
      r.suspect = true;
      // Failures first, then the largest drop against what the noise explains.
      double ratio = h.explained > 0 ? h.drop / h.explained : h.drop * 100;
      r.suspect_score = (fails.empty() ? 0 : 1000) + ratio;
    }

    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : "; and ") + x;
      return s;
    };
    if (!fails.empty() && now.throttled) {
      r.status = GateStatus::inconclusive;
      r.rule = "throttled";
      r.why = "the run was throttled (SM clock low), so this may be the machine: " + join(fails) +
              "; rerun to tell";
    } else if (!fails.empty()) {
      r.status = GateStatus::fail;
      bool by_history = h.outcome == HistoryOutcome::fail && !explained && !by_host;
      r.rule = by_target && by_history ? "target+history" : by_target ? "target" : "history";
      r.why = join(fails);
      find_last_good(hist, series, runs_of_key, key, r.baseline, opt.rule.min_gap, r,
                     last_good_board);
    } else if (!doubts.empty()) {
      r.status = GateStatus::inconclusive;
      r.rule = ceiling && h.outcome == HistoryOutcome::fail      ? "ceiling"
               : explained                                       ? "new board"
               : by_host                                         ? "host launch"
               : h.outcome == HistoryOutcome::too_little_history ? "too little history"
               : h.outcome == HistoryOutcome::too_noisy          ? "too noisy"
                                                                 : "within noise";
      r.why = join(doubts);
    }
    add_notes();
    rep.keys.push_back(std::move(r));
  }

  host_means(rep.keys);
  add_input_failures(hist, arch_runs, rep);
  for (const auto& [arch, a] : arch_runs)
    rep.gated_runs.push_back({arch, context_of(runs[a.newest]), a.keys});
  // A GPU behind its siblings of the newest run: a finding about that GPU,
  // not a regression of the code (tools/kgate/siblings.h).
  for (const SiblingReport& s : sibling_check(hist, opt.sibling))
    for (const SiblingGpu& g : s.gpus)
      if (g.named) rep.gpu_findings.push_back({s.arch, s.run, g.gpu, g.why});
  std::stable_sort(rep.keys.begin(), rep.keys.end(),
                   [](const GateKeyResult& a, const GateKeyResult& b) {
                     if (a.status != b.status) return status_rank(a.status) < status_rank(b.status);
                     return key_label(a) < key_label(b);
                   });
  return rep;
}

}  // namespace kb
