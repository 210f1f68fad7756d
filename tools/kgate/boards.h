// The board rule of the history rule (docs/gate.md "Boards"), and the host
// rule (docs/gate.md "Hosts: the launch cost", HostLaunch below): boards of one
// GPU model differ. Measured on two H100 80GB HBM3 boards, one build
// (docs/decisions/0019-boards-judged-on-their-own.md): compute-bound rows 2-3.4% apart,
// memory-bound rows within 0.3%, while run-to-run noise on one board is 0.05-0.35%. A nightly whose
// runner pool moves to another board of the same model would read that as a drop.
//
// So, for a key whose newest run is on one board (CSV schema v2's
// gpu_uuid):
// - same board: with at least --min-history earlier runs of the key on that
//   board, the baseline and the noise are those runs only (like with like,
//   as the variant rule does);
// - a board new to the key: fewer runs on it than that, and the rest of the
//   window on other named boards: the baseline pools them as before, and a
//   drop the boards' spread can explain is inconclusive, not a failure.
//   The spread is the key's own (the largest relative difference between
//   the medians of boards with >= 3 runs in the window, times
//   kSpreadFactor) where the window holds two such boards, else
//   --board-gap.
// A run on several GPUs (--device all, a fleet under one run id), a row
// without a UUID (schema v1) anywhere in the window, or a window all on
// the newest board: the history rule as before.
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
  // The drop a board new to a key may show against other boards where the
  // key's own window cannot tell: 3.4% measured between two H100 boards on
  // the MLP at D = 16384, rounded up.
  double board_gap = 0.04;
};

// Why 2: the range of the medians of a few boards underestimates how far
// the next board may lie. With board offsets drawn from one normal
// distribution, a new board lies further below a known one than 2 x the
// range of the known boards in 14% of cases for 2 known boards, 4.5% for
// 3, 1.7% for 4 (1 x the range: 25%, 15%, 10%; 3 x: 9%, 2%, 0.5%); 3 would
// also hide a 10% real drop behind the 3.4% the H100 boards differ by.
constexpr double kSpreadFactor = 2.0;
constexpr int kMinRunsPerBoard = 3;  // a board's median counts in the spread from this many runs

enum class BoardMode {
  pooled,      // the history rule as before
  same_board,  // judged against the runs on the newest run's board only
  new_board,   // a board new to the key: pooled, a drop within `allowance` is inconclusive
};

struct BoardPlan {
  BoardMode mode = BoardMode::pooled;
  // same_board: the indices into the earlier values of the runs on that
  // board, oldest first.
  std::vector<size_t> same;
  int same_runs = 0;  // earlier runs on the newest run's board
  // new_board: the window's runs on other boards (one board each), the
  // distinct boards among them, and its runs on several GPUs.
  int other_runs = 0, other_boards = 0, several_runs = 0;
  double allowance = 0;   // the drop the boards explain (relative)
  bool observed = false;  // allowance = kSpreadFactor x the key's own spread (else --board-gap)
  double spread = 0;      // observed: the largest relative difference of two boards' medians
  int spread_boards = 0;  // observed: boards with >= kMinRunsPerBoard runs in the window
};

// The board of a run whose rows are rows[0..n) (indices into the
// history's observations).
int64_t board_of_rows(const History& h, const uint32_t* rows, size_t n);

// `boards[i]` is the board of earlier run i (`values[i]`, oldest first);
// `newest` the newest run's board. The window is the last `rule.window` of
// them (as the history rule's baseline).
BoardPlan plan_boards(const std::vector<double>& values, const std::vector<int64_t>& boards,
                      int64_t newest, bool lower_is_better, const HistoryRuleOptions& rule,
                      const BoardOptions& opt);

// The earlier values the history rule judges against under `p`: the runs on
// the newest run's board (same_board), else all of them. `v` is any per-run
// vector of the earlier runs (values, labels).
template <typename T>
std::vector<T> baseline_runs(const BoardPlan& p, const std::vector<T>& v) {
  if (p.mode != BoardMode::same_board) return v;
  std::vector<T> out;
  for (size_t i : p.same) out.push_back(v[i]);
  return out;
}

// Whether a history-rule failure is a drop the boards' spread explains: on a
// board new to the key and within the allowance (then inconclusive).
inline bool board_explains(const BoardPlan& p, const HistoryResult& h) {
  return p.mode == BoardMode::new_board && h.outcome == HistoryOutcome::fail &&
         h.drop <= p.allowance;
}

// Hosts (docs/gate.md "Hosts: the launch cost"): a kernel timed call by
// call pays one launch's host-side cost per call, so a host that launches
// slower adds a constant time to every call of a short row. Measured
// (docs/decisions/0020-host-launch-rule.md): 20 one-GPU H100 runs whose probe read launch(us) 3.36
// us, then the same build family on a 4x H100 host whose GPUs read 4.96-5.02 us (median 4.98: +1.62
// us): all 30 gemv, gather_gemv and layer_norm rows of 4.4 to 346 us per call were +0.75 to +1.71
// us per call slower (24 of them +1.05 to +1.71; gemv D=1024 int8 -27.6%, the 346 us row -0.4%),
// the CUDA-graph decode rows not at all, and nothing in those kernels had changed.
struct HostLaunch {
  // The probe's launch(us) of the newest run (the median of its GPUs) is
  // above that of the key's baseline runs by more than the history rule
  // lets the probe's own launch row move (--min-gap and its noise), and the
  // key has a time per call (median_us) and a drop.
  bool applies = false;
  double before_us = 0, now_us = 0;  // the probe's launch: the baseline runs' median, the newest
  double slowdown_us = 0;            // the key's newest time per call minus its baseline's
  double allowed_us = 0;             // the launch's rise plus the history's noise, per call
  double rise_us() const { return now_us - before_us; }
  bool explains() const { return applies && slowdown_us <= allowed_us; }
};

// `launch_before`: the probe's launch(us) of the key's earlier runs (oldest
// first; the history rule's window is the last --window of them);
// `launch_now` and `time_now_us` (the key's median_us): the newest run's,
// NaN where it has none; `h`: the history rule's result for the key.
HostLaunch host_launch(const std::vector<double>& launch_before, double launch_now,
                       double time_now_us, const HistoryResult& h, bool lower_is_better,
                       const HistoryRuleOptions& rule);

// "the launch ceiling moved +1.62 us (3.36 -> 4.98): a slowdown of up to
// that much per call is the host's", and where the key's is beyond it, so.
std::string host_note(const HostLaunch& l);

// A board's UUID, short: its first 12 characters and "…".
std::string short_board(const std::string& uuid);

// The note a new board's key carries in every report: "first runs on board
// GPU-5c1e… (2 earlier runs on it): judged against 20 runs on 1 other
// board; ...".
std::string board_note(const BoardPlan& p, const std::string& uuid, const BoardOptions& opt);

}  // namespace kb
