// The history rule's board rule and the host rule (docs/gate.md "Boards"
// and "Hosts: the launch cost"; decisions 0019 and 0020).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/kgate/history.h"
#include "tools/kgate/history_rule.h"

namespace kb {

// A run's board: its GPU's index in History::gpus() when all its rows are on
// one GPU that names its UUID; else one of these.
constexpr int64_t kUnknownBoard = -1;   // a row without a UUID (schema v1, gpt_fast)
constexpr int64_t kSeveralBoards = -2;  // rows on two or more GPUs

struct BoardOptions {
  double board_gap = 0.04;  // a new board's allowed drop where the key's runs cannot tell
};

constexpr double kSpreadFactor = 2.0;  // allowance: this times the boards' spread
constexpr int kMinRunsPerBoard = 3;    // runs a board's median needs to count in the spread

enum class BoardMode {
  pooled,      // the history rule as before
  same_board,  // judged against the runs on the newest run's board only
  few_runs,    // those runs too (kMinRunsPerBoard or more), with the boards' pooled noise
  new_board,   // a board new to the key: pooled, a drop within `allowance` is inconclusive
};

struct BoardPlan {
  BoardMode mode = BoardMode::pooled;
  std::vector<size_t> same;  // same_board: indices of the earlier runs on that board
  int same_runs = 0;         // earlier runs on the newest run's board
  // new_board: the window's runs on other boards, those boards, and runs on several GPUs.
  int other_runs = 0, other_boards = 0, several_runs = 0;
  double allowance = 0;    // the drop the boards explain (relative)
  bool observed = false;   // allowance from the key's own spread (else --board-gap)
  double spread = 0;       // observed: the largest relative difference of two boards' medians
  int spread_boards = 0;   // observed: boards with >= kMinRunsPerBoard runs in the window
  bool from_file = false;  // allowance from the target file's `board_spread` for the key
  // few_runs: the window's run-to-run noise, each run against its own board's runs.
  PooledNoise noise;
  int noise_boards = 0;
};

// The run-to-run noise of runs on several boards, each board's offset taken
// out: from the differences of two runs of one board (relative to its
// median), boards with kMinRunsPerBoard runs or more; `runs` the degrees of
// freedom (runs less one per board). None under two such differences.
std::optional<PooledNoise> within_board_noise(
    const std::map<int64_t, std::vector<double>>& by_board, int* boards);

// The board of a run whose rows are rows[0..n) (indices of observations).
int64_t board_of_rows(const History& h, const uint32_t* rows, size_t n);

// The largest gap between two boards' medians of `by_board` (boards, >= 0,
// with kMinRunsPerBoard runs or more; `*boards` of them), relative to the
// better median; none under two such boards.
std::optional<double> spread_of_boards(const std::map<int64_t, std::vector<double>>& by_board,
                                       bool lower_is_better, int* boards);

// `boards[i]` is the board of earlier run i (`values[i]`, oldest first);
// `newest` the newest run's board.
BoardPlan plan_boards(const std::vector<double>& values, const std::vector<int64_t>& boards,
                      int64_t newest, bool lower_is_better, const HistoryRuleOptions& rule,
                      const BoardOptions& opt);

// A board new to the key, where its target file entry measured the GPU
// model's boards (`board_spread`): that spread stands for the window's
// when the window shows none or less of it.
BoardPlan with_file_spread(BoardPlan p, std::optional<double> file_spread);

// Of a per-run vector of the earlier runs, those the history rule judges
// against: the newest run's board's (same_board), else all.
template <typename T>
std::vector<T> baseline_runs(const BoardPlan& p, const std::vector<T>& v) {
  if (p.mode != BoardMode::same_board && p.mode != BoardMode::few_runs) return v;
  std::vector<T> out;
  for (size_t i : p.same) out.push_back(v[i]);
  return out;
}

// Whether a history-rule failure is a drop the boards' spread explains.
inline bool board_explains(const BoardPlan& p, const HistoryResult& h) {
  return p.mode == BoardMode::new_board && h.outcome == HistoryOutcome::fail &&
         h.drop <= p.allowance;
}

// The host rule: a kernel timed call by call pays the host's launch cost per call.
struct HostLaunch {
  bool applies = false;  // the probe's launch(us) rose beyond its noise; the key dropped
  double before_us = 0, now_us = 0;  // the probe's launch: the baseline runs' median, the newest
  double slowdown_us = 0;            // the key's newest time per call minus its baseline's
  double allowed_us = 0;             // the launch's rise plus the history's noise, per call
  double rise_us() const { return now_us - before_us; }
  bool explains() const { return applies && slowdown_us <= allowed_us; }
};

// The probe's launch(us) of the key's earlier runs (oldest first) and of the
// newest, and the newest run's median_us (NaN: none).
HostLaunch host_launch(const std::vector<double>& launch_before, double launch_now,
                       double time_now_us, const HistoryResult& h, bool lower_is_better,
                       const HistoryRuleOptions& rule);

std::string host_note(const HostLaunch& l);        // "the launch ceiling moved ..."
std::string short_board(const std::string& uuid);  // "GPU-5c1e1234…"
std::string board_note(const BoardPlan& p, const std::string& uuid, const BoardOptions& opt);
// The note of a key judged on a board of few runs (BoardMode::few_runs).
std::string few_runs_note(const BoardPlan& p, const std::string& uuid);

}  // namespace kb
