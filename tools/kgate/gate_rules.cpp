#include <algorithm>
#include <cstdio>

#include "reports/format.h"
#include "tools/kgate/gate.h"

namespace kb {

namespace {

std::string target_why(double value, const TargetCheck& t, bool lower) {
  const double miss = target_miss(value, *t.target, lower);
  return std::string(lower ? "above" : "below") + " target: " + show_value(value) + " vs " +
         show_value(*t.target) + " (" + percent(miss) + " worse, tolerance " +
         percent(t.tolerance) + "; " + t.source + ")";
}

// The floor a newest value's drop was held to (gap_of).
std::string gap_text(const HistoryResult& h, const HistoryRuleOptions& r) {
  if (h.attempts == 1 || h.gap >= r.min_gap) return "--min-gap " + percent(r.min_gap);
  return "the key's floor " + percent(h.gap) + " (4 times its noise, at least --confirmed-gap " +
         percent(r.confirmed_gap) + ")";
}

std::string history_why(const HistoryResult& h, const HistoryRuleOptions& r) {
  std::string base = "median of the last " + std::to_string(h.history) + " runs";
  switch (h.outcome) {
    case HistoryOutcome::fail:
      if (h.recent == 1)
        return percent(h.drop) + " worse than the " + base + ": more than " + gap_text(h, r) +
               " and than the history's noise explains (noise " + percent(h.noise) + ": up to " +
               percent(h.explained) + ")";
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
// Or, beyond that spread, one the board explains because nothing else changed.
std::string new_board_why(const HistoryResult& h, const BoardPlan& p, const HistoryRuleOptions& r,
                          bool same_build) {
  const std::string allowance =
      percent(p.allowance) + (p.from_file  ? " on it (twice the target file's board_spread)"
                              : p.observed ? " on it (twice the spread of its boards)"
                                           : " (--board-gap)");
  return percent(h.drop) + " worse than the median of the last " + std::to_string(h.history) +
         " runs, beyond " + gap_text(h, r) + " and the history's noise (up to " +
         percent(h.explained) + "), but the newest run is on a board new to this key" +
         (same_build ? ", and its last good run is of the same build, driver and CUDA: the "
                       "drop is the board's, though beyond the " +
                           allowance + " boards differ by"
                     : ", and boards differ by up to " + allowance) +
         ": judged against that board itself from " + std::to_string(r.min_history) + " runs on it";
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

// The newest run's time per call (its rows' median median_us), NaN for none.
double time_per_call(const std::vector<Observation>& obs, const std::vector<uint32_t>& series,
                     const RunValue& now) {
  std::vector<double> t;
  for (size_t j = now.first; j < now.first + now.attempts; ++j)
    if (obs[series[j]].measured() && obs[series[j]].median_us())
      t.push_back(*obs[series[j]].median_us());
  return t.empty() ? Observation::kNone : median_of(t);
}

// For a failing key: the newest earlier run that was good (measured,
// unthrottled, `ok` or re-measured, within the gap of `baseline`), on
// `board` where that is >= 0.
void find_last_good(const History& hist, const std::vector<uint32_t>& series,
                    const std::vector<RunValue>& runs_of_key, const Key& key,
                    const std::optional<double>& baseline, double min_gap, GateKeyResult& r,
                    int64_t board = kUnknownBoard, const Observation** row = nullptr) {
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
    if (row) *row = &o;
    return;
  }
}

// A build named by its commit: known, and with no local changes.
bool named_build(const std::string& sha) {
  const std::string dirty = "-dirty";
  return !sha.empty() && sha != "unknown" &&
         !(sha.size() >= dirty.size() &&
           sha.compare(sha.size() - dirty.size(), dirty.size(), dirty) == 0);
}

// On a board new to the key: its last good run (any board), where that run
// is of the newest run's very build: the same commit, driver and CUDA, the
// same kernel (variant), and no slowdown injected tonight. Between the two
// only the board changed.
std::optional<RunContext> same_build_last_good(const GateContext& g, const KeyRuns& k,
                                               double baseline) {
  const Run& now = g.hist.runs()[k.last.run];
  const std::string kernel = kernel_identity(k.last.variant);
  if (!named_build(now.git_sha) || kernel.size() != k.last.variant.size()) return std::nullopt;
  GateKeyResult good;
  const Observation* row = nullptr;
  find_last_good(g.hist, k.series, k.runs, k.key, baseline, g.opt.rule.min_gap, good, kUnknownBoard,
                 &row);
  if (!good.last_good || !row || good.last_good->git_sha != now.git_sha ||
      good.last_good->driver != now.driver || good.last_good->cuda != now.cuda ||
      std::string(row->variant) != kernel)
    return std::nullopt;
  return good.last_good;
}

// The earlier runs the newest run is judged against (rule 3).
struct Baseline {
  std::vector<double> values;
  std::vector<uint32_t> runs;  // each value's run
  std::vector<int> attempts;   // and its attempts (GPUs)
  const RunValue* changed_from = nullptr;
  int64_t board = kUnknownBoard;  // the newest run's board (boards.h)
  BoardPlan plan;
};

// What the rules found for one key, before its verdict.
struct Findings {
  std::vector<std::string> fails, doubts;
  TargetCheck target;
  bool by_target = false;
  HistoryResult history;
  bool explained = false;  // a board new to the key explains the drop
  bool ceiling = false;    // a row of the probe: reported, not gated
  bool by_host = false;    // the host's slower launch explains the drop
};

// The earlier measured, unthrottled runs of the same kernel, as the board
// rule narrows them (boards.h).
Baseline find_baseline(const GateContext& g, const KeyRuns& k, GateKeyResult& r,
                       std::vector<std::string>& notes) {
  const auto& obs = g.hist.observations();
  const auto& runs = g.hist.runs();
  const std::string kernel = kernel_identity(k.last.variant);
  Baseline b;
  std::vector<int64_t> boards;
  for (size_t i = k.runs.size() - 1; i-- > 0 && b.values.size() < g.keep;) {
    const RunValue& e = k.runs[i];
    if (!e.measured || e.throttled) continue;
    const Observation& o = obs[k.series[e.first]];
    if (kernel_identity(o.variant) != kernel) {
      if (!b.changed_from && b.values.empty()) b.changed_from = &e;
      continue;
    }
    b.values.push_back(e.value);
    boards.push_back(board_of_rows(g.hist, &k.series[e.first], e.attempts));
    b.runs.push_back(o.run);
    b.attempts.push_back(e.attempts);
    r.history_runs_labels.push_back(runs[o.run].label);
  }
  if (b.changed_from) {
    const Observation& o = obs[k.series[b.changed_from->first]];
    notes.push_back("variant changed: was '" + std::string(o.variant) + "' in run " +
                    runs[o.run].label + ", now '" + std::string(k.last.variant) +
                    "'; the baseline is the " + std::to_string(b.values.size()) +
                    " earlier run(s) of this variant");
  }
  std::reverse(b.values.begin(), b.values.end());
  std::reverse(boards.begin(), boards.end());
  std::reverse(b.runs.begin(), b.runs.end());
  std::reverse(b.attempts.begin(), b.attempts.end());
  std::reverse(r.history_runs_labels.begin(), r.history_runs_labels.end());
  b.board = board_of_rows(g.hist, &k.series[k.now.first], k.now.attempts);
  b.plan = plan_boards(b.values, boards, b.board, k.key.lower_is_better, g.opt.rule, g.opt.board);
  b.values = baseline_runs(b.plan, b.values);
  r.history_runs_labels = baseline_runs(b.plan, r.history_runs_labels);
  b.runs = baseline_runs(b.plan, b.runs);
  b.attempts = baseline_runs(b.plan, b.attempts);
  r.history = b.values;
  return b;
}

// Rule 1: a row `failed` or `incorrect` fails the key.
bool rule1_failed_or_incorrect(const GateContext& g, const KeyRuns& k, GateKeyResult& r) {
  const Observation& last = k.last;
  if (last.status != RowStatus::failed && last.status != RowStatus::incorrect) return false;
  r.status = GateStatus::fail;
  bool failed = last.status == RowStatus::failed;
  r.rule = failed ? "failed" : "incorrect";
  r.why = failed ? "the run failed" : "the output is incorrect (it failed its check)";
  if (k.now.attempts > 1) r.why += " on " + g.hist.gpus()[last.gpu].label();
  if (!last.message.empty()) r.why += ": " + std::string(last.message);
  find_last_good(g.hist, k.series, k.runs, k.key, std::nullopt, g.opt.rule.min_gap, r);
  return true;
}

// A row the run skipped, or one with no measured value: not gated.
bool not_gated(const KeyRuns& k, GateKeyResult& r) {
  if (k.last.status != RowStatus::skipped && k.now.measured) return false;
  r.status = GateStatus::skipped;
  r.rule = "skipped";
  r.why = k.last.message.empty() ? "skipped by the run" : std::string(k.last.message);
  return true;
}

// A target file's targets hold on the host it was measured on: where the
// newest run's probe launches slower than the file's `measured.launch_us`,
// each call may take that much longer (decisions/0055). The target on this
// host, or nullopt where the host launches no slower or a time is unknown.
std::optional<double> host_target(const GateContext& g, const KeyRuns& k, const TargetFile* tf,
                                  double target) {
  auto it = g.launch_of.find(k.key.arch);
  if (!tf || !(tf->measured.launch_us > 0) || it == g.launch_of.end()) return std::nullopt;
  return target_on_host(target, k.now.value, time_per_call(g.hist.observations(), k.series, k.now),
                        it->second[k.last.run] - tf->measured.launch_us, k.key.lower_is_better);
}

// Rule 2: below target beyond the target's tolerance fails, unless the
// host's slower launch than the target file's explains the miss.
void rule2_below_target(const GateContext& g, const KeyRuns& k, GateKeyResult& r, Findings& f,
                        std::vector<std::string>& notes) {
  const double value = k.now.value;
  const bool lower = k.key.lower_is_better;
  const TargetFile* tf = k.key.arch.empty() ? nullptr : match_gpu(g.opt.targets, k.key.arch);
  f.target = find_target(k.key, k.last, tf);
  if (f.target.target) {
    r.target = f.target.target;
    f.by_target = below_target(value, *f.target.target, f.target.tolerance, lower);
    const auto on_host = f.by_target ? host_target(g, k, tf, *f.target.target) : std::nullopt;
    if (on_host && !below_target(value, *on_host, f.target.tolerance, lower)) {
      f.by_target = false;
      r.target_on_host = true;
      notes.push_back(target_why(value, f.target, lower) + ", but " +
                      host_target_met(g.launch_of.at(k.key.arch)[k.last.run],
                                      tf->measured.launch_us, *on_host));
    }
    if (f.by_target) f.fails.push_back(target_why(value, f.target, lower));
  } else if (k.last.status == RowStatus::below_target && k.now.attempts == 1) {
    f.by_target = true;
    f.fails.push_back("marked below_target by the run (no target found to check it against)");
  }
}

// The host rule (boards.h HostLaunch): a slowdown per call within the
// host's slower launch is the host's.
HostLaunch host_of(const GateContext& g, const KeyRuns& k, const Baseline& b, const Findings& f) {
  HostLaunch host;
  if (f.explained || f.ceiling) return host;
  if (f.history.outcome != HistoryOutcome::fail && !f.by_target && !f.history.suspect) return host;
  auto it = g.launch_of.find(k.key.arch);
  if (it == g.launch_of.end()) return host;
  std::vector<double> before;
  for (uint32_t run : b.runs)
    if (auto v = Observation::opt(it->second[run])) before.push_back(*v);
  return host_launch(before, it->second[k.last.run],
                     time_per_call(g.hist.observations(), k.series, k.now), f.history,
                     k.key.lower_is_better, g.opt.rule);
}

// Rule 3: a drop beyond both --min-gap and the history's noise fails; what
// the machine explains and the probe's ceilings are reported, not failed.
void rule3_history(const GateContext& g, const KeyRuns& k, const Baseline& b, GateKeyResult& r,
                   Findings& f, std::vector<std::string>& notes) {
  std::vector<double> values = b.values;
  values.push_back(k.now.value);
  HistoryResult& h = f.history;
  const bool few = b.plan.mode == BoardMode::few_runs;
  h = history_rule(values, k.key.lower_is_better, g.opt.rule, k.now.attempts,
                   history_attempts_of(b.attempts), k.now.mid_spread,
                   few ? &b.plan.noise : nullptr);
  if (few && (h.outcome != HistoryOutcome::pass || h.suspect))
    notes.push_back(few_runs_note(b.plan, g.hist.gpus()[b.board].uuid));
  r.history_runs = h.history;
  r.young = h.outcome == HistoryOutcome::too_little_history;
  r.noise = h.noise;
  if (h.history > 0) {
    r.baseline = h.baseline;
    r.change = h.change;
  }
  if (h.seen_before)
    notes.push_back("a slow state seen before: " + std::to_string(h.seen_before) + " of the last " +
                    std::to_string(h.history) + " runs were as slow; a drop within --min-gap " +
                    percent(g.opt.rule.min_gap) + " to a level the history knows is not failed");
  std::string hw = history_why(h, g.opt.rule);
  const bool new_board = b.plan.mode == BoardMode::new_board && h.outcome == HistoryOutcome::fail;
  const BoardPlan plan = with_file_spread(b.plan, f.target.board_spread);
  f.explained = board_explains(plan, h);
  const auto same_build =
      new_board && !f.explained ? same_build_last_good(g, k, h.baseline) : std::nullopt;
  if (new_board) {
    std::string beyond = f.explained ? "" : "; this drop (" + percent(h.drop) + ") is beyond it";
    if (same_build)  // only where the allowance did not explain the drop
      beyond += ", but the key's last good run " + same_build->run + " is of this very build " +
                "(commit " + same_build->git_sha + ", driver " + same_build->driver + ", CUDA " +
                same_build->cuda + "): only the board changed";
    notes.push_back(board_note(plan, g.hist.gpus()[b.board].uuid, g.opt.board) + beyond);
  }
  f.explained = f.explained || same_build.has_value();
  // The probe's ceilings: --rerun cannot measure them again (decisions/0018).
  f.ceiling = k.key.name == "roofline_probe";
  if (f.ceiling) h.suspect = false;
  const HostLaunch host = host_of(g, k, b, f);
  // Measuring again on that host cannot tell the host from the code.
  if (host.explains()) h.suspect = false;
  const bool judged = h.outcome == HistoryOutcome::fail || f.by_target;
  f.by_host = judged && host.explains();
  if (host.applies && judged) notes.push_back(host_note(host));
  std::string target_doubt;
  if (f.by_host && f.by_target && f.target.target &&
      !below_target(h.baseline, *f.target.target, f.target.tolerance, k.key.lower_is_better)) {
    target_doubt = f.fails.back() + " (the baseline " + show_value(h.baseline) + " met it)";
    f.fails.pop_back();
    f.by_target = false;
  }
  if (f.explained) {
    f.doubts.push_back(new_board_why(h, plan, g.opt.rule, same_build.has_value()));
    // Measuring again on the same board cannot tell the board from the code.
    h.suspect = false;
  } else if (h.outcome == HistoryOutcome::fail && f.ceiling)
    f.doubts.push_back(hw + " (a ceiling of the GPU, measured by the probe: reported, not gated)");
  else if (h.outcome == HistoryOutcome::fail && f.by_host)
    f.doubts.push_back(host_why(h, host));
  else if (h.outcome == HistoryOutcome::fail)
    f.fails.push_back(hw);
  else if (h.outcome != HistoryOutcome::pass)
    f.doubts.push_back(hw);
  if (h.outcome == HistoryOutcome::too_little_history && b.changed_from)
    f.doubts.back() += " (the variant changed)";
  if (!target_doubt.empty()) f.doubts.push_back(target_doubt);
}

// Rule 4, its first stage: the keys of one attempt to measure again.
void rule4_suspect(const KeyRuns& k, const Findings& f, GateKeyResult& r) {
  const HistoryResult& h = f.history;
  if (k.now.attempts != 1 || !(f.by_target || h.suspect)) return;
  r.suspect = true;
  // Failures first, then the largest drop against what the noise explains.
  double ratio = h.explained > 0 ? h.drop / h.explained : h.drop * 100;
  r.suspect_score = (f.fails.empty() ? 0 : 1000) + ratio;
}

// The key's status and its one-line reason from what rules 2 and 3 found.
void verdict(const GateContext& g, const KeyRuns& k, const Baseline& b, const Findings& f,
             GateKeyResult& r) {
  const HistoryResult& h = f.history;
  if (!f.fails.empty() && k.now.throttled) {
    r.status = GateStatus::inconclusive;
    r.rule = "throttled";
    r.why = "the run was throttled (SM clock low), so this may be the machine: " +
            join(f.fails, "; and ") + "; rerun to tell";
  } else if (!f.fails.empty()) {
    r.status = GateStatus::fail;
    bool by_history = h.outcome == HistoryOutcome::fail && !f.explained && !f.by_host;
    r.rule = f.by_target && by_history ? "target+history" : f.by_target ? "target" : "history";
    r.why = join(f.fails, "; and ");
    const int64_t last_good_board =
        b.plan.mode == BoardMode::same_board || b.plan.mode == BoardMode::few_runs ? b.board
                                                                                   : kUnknownBoard;
    find_last_good(g.hist, k.series, k.runs, k.key, r.baseline, g.opt.rule.min_gap, r,
                   last_good_board);
  } else if (!f.doubts.empty()) {
    r.status = GateStatus::inconclusive;
    r.rule = f.ceiling && h.outcome == HistoryOutcome::fail    ? "ceiling"
             : f.explained                                     ? "new board"
             : f.by_host                                       ? "host launch"
             : h.outcome == HistoryOutcome::too_little_history ? "too little history"
             : h.outcome == HistoryOutcome::too_noisy          ? "too noisy"
                                                               : "within noise";
    r.why = join(f.doubts, "; and ");
  }
}

}  // namespace

TargetCheck find_target(const Key& key, const Observation& o, const TargetFile* tf) {
  TargetCheck t;
  if (tf) {
    if (const TargetEntry* e =
            tf->find(key.name, key.metric, key.dtype, key.shape, std::string(o.variant))) {
      t.target = resolve_target(*e, o.roofline(), key.lower_is_better);
      t.tolerance = e->tolerance;
      t.board_spread = e->board_spread;
      t.source = tf->path;
    }
  }
  // No entry (or a relative one and no roofline in the row): the row's own.
  if (!t.target && o.target()) {
    t.target = o.target();
    t.tolerance = 0.05;
    t.source = "the row's target column";
  }
  return t;
}

GateKeyResult result_of(const Key& key) {
  GateKeyResult r;
  r.name = key.name;
  r.metric = key.metric;
  r.dtype = key.dtype;
  r.shape = key.shape;
  r.arch = key.arch;
  r.device = key.device;
  r.lower_is_better = key.lower_is_better;
  return r;
}

RunContext context_of(const Run& run) {
  return {run.label, run.timestamp, run.git_sha, run.driver, run.cuda};
}

GateKeyResult judge_key(const GateContext& g, const KeyRuns& k, HistoryResult* history) {
  const auto& runs = g.hist.runs();
  GateKeyResult r = result_of(k.key);
  r.run = runs[k.last.run].label;
  r.run_has_id = runs[k.last.run].has_id;
  r.variant = std::string(k.last.variant);
  r.attempts = k.now.attempts;
  // A throttled row with no unthrottled re-measurement behind it.
  r.throttled = k.now.measured && k.now.throttled;
  std::vector<std::string> notes;
  if (kernel_identity(k.last.variant).size() != k.last.variant.size())
    notes.push_back("injected slowdown (" + variant_fields(k.last.variant, true) +
                    "): a gate self-test, not a kernel change");
  const Baseline b = find_baseline(g, k, r, notes);
  if (k.now.attempts > 1 && k.now.measured && k.now.remeasured > 0)
    notes.push_back("re-measured: median of " + std::to_string(k.now.remeasured) +
                    " re-measurement(s) " + show_value(k.now.value) + " (the nightly's own " +
                    (k.now.first_value ? show_value(*k.now.first_value) : std::string("-")) + ")");
  if (rule1_failed_or_incorrect(g, k, r) || not_gated(k, r)) {
    r.note = join(notes, "; ");
    return r;
  }
  r.value = k.now.value;
  Findings f;
  rule2_below_target(g, k, r, f, notes);
  rule3_history(g, k, b, r, f, notes);
  rule4_suspect(k, f, r);
  verdict(g, k, b, f, r);
  r.note = join(notes, "; ");
  if (history) *history = f.history;
  return r;
}

}  // namespace kb
