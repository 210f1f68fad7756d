// The board rule of the history rule and the host rule (docs/gate.md
// "Boards" and "Hosts: the launch cost"): boards of one GPU model differ by
// more than one board's run-to-run noise, and a host that launches slower
// adds a constant time to every call of a short row
// (docs/decisions/0019-boards-judged-on-their-own.md, 0020-host-launch-rule.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/kgate/history.h"
#include "tools/kgate/history_rule.h"

namespace kb {

// A run's board: an index into History::gpus() when all its rows (every
// attempt) are on one GPU that names its UUID; else one of these.
constexpr int64_t kUnknownBoard = -1;   // a row without a UUID (schema v1, gpt_fast)
constexpr int64_t kSeveralBoards = -2;  // rows on two or more GPUs

struct BoardOptions {
  // The drop a board new to a key may show where the key's own window
  // cannot tell how far its boards differ (3.4% measured on two H100s).
  double board_gap = 0.04;
};

// The allowance is this many times the spread of the known boards' medians
// (docs/gate.md "Boards" says why 2).
constexpr double kSpreadFactor = 2.0;
constexpr int kMinRunsPerBoard = 3;  // a board's median counts in the spread from this many runs

enum class BoardMode {
  pooled,      // the history rule as before
  same_board,  // judged against the runs on the newest run's board only
  new_board,   // a board new to the key: pooled, a drop within `allowance` is inconclusive
};

struct BoardPlan {
  BoardMode mode = BoardMode::pooled;
  std::vector<size_t> same;  // same_board: indices of the earlier runs on that board
  int same_runs = 0;         // earlier runs on the newest run's board
  // new_board: the window's runs on other boards (one board each), the
  // distinct boards among them, and its runs on several GPUs.
  int other_runs = 0, other_boards = 0, several_runs = 0;
  double allowance = 0;   // the drop the boards explain (relative)
  bool observed = false;  // allowance = kSpreadFactor x the key's own spread (else --board-gap)
  double spread = 0;      // observed: the largest relative difference of two boards' medians
  int spread_boards = 0;  // observed: boards with >= kMinRunsPerBoard runs in the window
};

// The board of a run whose rows are rows[0..n) (indices of observations).
int64_t board_of_rows(const History& h, const uint32_t* rows, size_t n);

// `boards[i]` is the board of earlier run i (`values[i]`, oldest first);
// `newest` the newest run's board.
BoardPlan plan_boards(const std::vector<double>& values, const std::vector<int64_t>& boards,
                      int64_t newest, bool lower_is_better, const HistoryRuleOptions& rule,
                      const BoardOptions& opt);

// Of any per-run vector of the earlier runs, those the history rule judges
// against under `p`: the newest run's board's (same_board), else all.
template <typename T>
std::vector<T> baseline_runs(const BoardPlan& p, const std::vector<T>& v) {
  if (p.mode != BoardMode::same_board) return v;
  std::vector<T> out;
  for (size_t i : p.same) out.push_back(v[i]);
  return out;
}

// Whether a history-rule failure is a drop the boards' spread explains.
inline bool board_explains(const BoardPlan& p, const HistoryResult& h) {
  return p.mode == BoardMode::new_board && h.outcome == HistoryOutcome::fail &&
         h.drop <= p.allowance;
}

// The host rule: a kernel timed call by call pays one launch's host-side
// cost per call.
struct HostLaunch {
  // The newest run's probe launch(us) moved up beyond its own noise, and the
  // key has a time per call (median_us) and a drop.
  bool applies = false;
  double before_us = 0, now_us = 0;  // the probe's launch: the baseline runs' median, the newest
  double slowdown_us = 0;            // the key's newest time per call minus its baseline's
  double allowed_us = 0;             // the launch's rise plus the history's noise, per call
  double rise_us() const { return now_us - before_us; }
  bool explains() const { return applies && slowdown_us <= allowed_us; }
};

// `launch_before`: the probe's launch(us) of the key's earlier runs, oldest
// first; `launch_now` and `time_now_us` (the key's median_us): the newest
// run's, NaN where it has none; `h`: the history rule's result for the key.
HostLaunch host_launch(const std::vector<double>& launch_before, double launch_now,
                       double time_now_us, const HistoryResult& h, bool lower_is_better,
                       const HistoryRuleOptions& rule);

// "the launch ceiling moved +1.62 us (3.36 -> 4.98): ..." and the key's slowdown.
std::string host_note(const HostLaunch& l);

// A board's UUID, short: its first 12 characters and "…".
std::string short_board(const std::string& uuid);

// The note of a key on a new board: "first runs on board GPU-5c1e… (...)".
std::string board_note(const BoardPlan& p, const std::string& uuid, const BoardOptions& opt);

}  // namespace kb
