#include "tools/kgate/boards.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "reports/format.h"

namespace kb {

int64_t board_of_rows(const History& h, const uint32_t* rows, size_t n) {
  const auto& obs = h.observations();
  int64_t board = kUnknownBoard;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t gpu = obs[rows[k]].gpu;
    if (h.gpus()[gpu].uuid.empty()) return kUnknownBoard;
    if (board == kUnknownBoard)
      board = gpu;
    else if (board != gpu)
      board = kSeveralBoards;  // and stays so, unless a later row has no UUID
  }
  return board;
}

std::optional<double> spread_of_boards(const std::map<int64_t, std::vector<double>>& by_board,
                                       bool lower_is_better, int* boards) {
  std::vector<double> medians;
  for (const auto& [board, v] : by_board)
    if (board >= 0 && static_cast<int>(v.size()) >= kMinRunsPerBoard)
      medians.push_back(median_of(v));
  *boards = static_cast<int>(medians.size());
  if (medians.size() < 2) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  // Relative to the better of the two: how far the worse board is behind it.
  const double better = lower_is_better ? *lo : *hi;
  if (!(better > 0)) return std::nullopt;
  return (*hi - *lo) / better;
}

std::optional<PooledNoise> within_board_noise(
    const std::map<int64_t, std::vector<double>>& by_board, int* boards) {
  std::vector<double> diffs;
  PooledNoise n;
  *boards = 0;
  for (const auto& [board, v] : by_board) {
    if (board < 0 || static_cast<int>(v.size()) < kMinRunsPerBoard) continue;
    const double level = median_of(v);
    if (!(level > 0)) continue;
    ++*boards;
    n.runs += static_cast<int>(v.size()) - 1;
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = i + 1; j < v.size(); ++j) diffs.push_back(std::fabs(v[i] - v[j]) / level);
  }
  if (diffs.size() < 2) return std::nullopt;
  // The difference of two runs of one normal noise has sigma sqrt(2) times
  // the runs'; its absolute value's median is 0.6745 of that.
  n.noise = median_of(diffs) / (0.6745 * std::sqrt(2.0));
  return n;
}

BoardPlan plan_boards(const std::vector<double>& values, const std::vector<int64_t>& boards,
                      int64_t newest, bool lower_is_better, const HistoryRuleOptions& rule,
                      const BoardOptions& opt) {
  BoardPlan p;
  if (newest < 0 || values.empty()) return p;
  for (size_t i = 0; i < boards.size(); ++i)
    if (boards[i] == newest) p.same.push_back(i);
  p.same_runs = static_cast<int>(p.same.size());
  if (p.same.size() == boards.size()) return p;  // all on this board: the same as pooled
  if (p.same_runs >= rule.min_history) {
    p.mode = BoardMode::same_board;
    return p;
  }
  const std::vector<size_t> same = std::move(p.same);
  p.same.clear();

  // A board new to the key, only where every run of the window names its
  // board (a run without a UUID may have been on this very board).
  const size_t begin =
      values.size() > static_cast<size_t>(rule.window) ? values.size() - rule.window : 0;
  std::map<int64_t, std::vector<double>> by_board;
  for (size_t i = begin; i < values.size(); ++i) {
    if (boards[i] == kUnknownBoard) return p;
    if (boards[i] == newest) continue;
    ++p.other_runs;
    if (boards[i] == kSeveralBoards)
      ++p.several_runs;
    else
      by_board[boards[i]];
  }
  if (p.other_runs == 0) return p;
  p.other_boards = static_cast<int>(by_board.size());
  p.mode = BoardMode::new_board;
  for (size_t i = begin; i < values.size(); ++i)
    if (boards[i] >= 0) by_board[boards[i]].push_back(values[i]);

  // A few runs on the board: their median, and the noise the window's
  // boards show once each board's offset is taken out.
  if (p.same_runs >= kMinRunsPerBoard) {
    auto noise = within_board_noise(by_board, &p.noise_boards);
    if (noise && noise->runs >= rule.min_history) {
      p.mode = BoardMode::few_runs;
      p.same = same;
      p.noise = *noise;
      return p;
    }
  }

  // The key's own spread, where the window shows two boards well enough.
  if (const auto spread = spread_of_boards(by_board, lower_is_better, &p.spread_boards)) {
    p.observed = true;
    p.spread = *spread;
    p.allowance = kSpreadFactor * p.spread;
    return p;
  }
  p.allowance = opt.board_gap;
  return p;
}

BoardPlan with_file_spread(BoardPlan p, std::optional<double> file_spread) {
  if (p.mode != BoardMode::new_board || !file_spread) return p;
  if (p.observed && p.spread >= *file_spread) return p;
  p.from_file = true;
  p.spread = *file_spread;
  p.allowance = kSpreadFactor * *file_spread;
  return p;
}

HostLaunch host_launch(const std::vector<double>& launch_before, double launch_now,
                       double time_now_us, const HistoryResult& h, bool lower_is_better,
                       const HistoryRuleOptions& rule) {
  HostLaunch l;
  if (!(launch_now > 0) || !(time_now_us > 0) || h.history == 0 || !(h.drop > 0)) return l;
  // Only a launch that moved beyond its own noise (the history rule on the
  // probe's launch row, over the same runs).
  std::vector<double> launch = launch_before;
  launch.push_back(launch_now);
  HistoryRuleOptions one = rule;
  one.max_recent = 1;  // the newest night's own launch, not a trend
  const HistoryResult moved = history_rule(launch, /*lower_is_better=*/true, one);
  if (moved.outcome != HistoryOutcome::fail) return l;
  l.applies = true;
  l.before_us = moved.baseline;
  l.now_us = launch_now;
  // The key's time per call at its baseline (a rate is inversely proportional).
  const double base_us = lower_is_better ? time_now_us / (1 + h.drop) : time_now_us * (1 - h.drop);
  l.slowdown_us = time_now_us - base_us;
  // The slowest time per call the history's noise explains, over the baseline's.
  const double noise_us = lower_is_better   ? base_us * h.explained
                          : h.explained < 1 ? base_us * h.explained / (1 - h.explained)
                                            : HUGE_VAL;
  l.allowed_us = l.rise_us() + noise_us;
  return l;
}

std::string host_note(const HostLaunch& l) {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "the launch ceiling moved %+.2f us (%.2f -> %.2f): a slowdown of up to that much "
      "per call is the host's; this key is %+.2f us per call (%s %+.2f us with its noise)",
      l.rise_us(), l.before_us, l.now_us, l.slowdown_us, l.explains() ? "within" : "beyond",
      l.allowed_us);
  return buf;
}

std::string short_board(const std::string& uuid) {
  const size_t n = 12;  // "GPU-" and 8 hex digits: unique enough to tell boards apart
  return uuid.size() <= n ? uuid : uuid.substr(0, n) + "\u2026";
}

std::string few_runs_note(const BoardPlan& p, const std::string& uuid) {
  return "judged against its " + std::to_string(p.same_runs) + " earlier runs on board " +
         short_board(uuid) + ", with the run-to-run noise of the window's " +
         std::to_string(p.noise_boards) + " boards, each run against its own board's (" +
         percent(p.noise.noise) + " from " + std::to_string(p.noise.runs) + " runs)";
}

std::string board_note(const BoardPlan& p, const std::string& uuid, const BoardOptions& opt) {
  const auto runs_text = [](int n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); };
  std::string s = "first runs on board " + short_board(uuid) + " (" + runs_text(p.same_runs) +
                  " earlier on it): judged against " + runs_text(p.other_runs);
  const int single = p.other_runs - p.several_runs;
  if (single > 0)
    s += (p.several_runs ? ", " + std::to_string(single) : std::string()) + " on " +
         std::to_string(p.other_boards) + " other board" + (p.other_boards == 1 ? "" : "s");
  if (p.several_runs)
    s += (single ? " and " + std::to_string(p.several_runs) : std::string()) + " on several GPUs";
  if (p.from_file)
    s += "; on this key the target file measured boards of this model " + percent(p.spread) +
         " apart (board_spread): a drop within " + std::to_string(static_cast<int>(kSpreadFactor)) +
         " x that, " + percent(p.allowance) + ", is inconclusive";
  else if (p.observed)
    s += "; on this key the medians of its " + std::to_string(p.spread_boards) +
         " boards differ by up to " + percent(p.spread) + ": a drop within " +
         std::to_string(static_cast<int>(kSpreadFactor)) + " x that, " + percent(p.allowance) +
         ", is inconclusive";
  else
    s += "; boards of one model differ by up to 3.4% on compute-bound rows (H100, measured): a "
         "drop within --board-gap " +
         percent(opt.board_gap) + " is inconclusive";
  return s;
}

}  // namespace kb
