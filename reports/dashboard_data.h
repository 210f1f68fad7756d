// What `kgate dashboard` shows (docs/dashboard.md): every key's history, each
// point with the verdict, baseline and band the gate gives it on its night.
// tools/kgate/dashboard.cpp fills it; dashboard_html.cpp formats it.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "reports/gate_result.h"

namespace kb {

// A row's status as one letter (the page keeps 100 000 of them):
// o ok, b below_target, t throttled, i incorrect, f failed, s skipped.
inline constexpr const char* kDashStatusLetters = "obtifs";

struct DashboardGpu {
  std::string arch;    // as the driver names it; "" when the rows have no arch
  std::string device;  // "cuda", or "cuda:N" for one GPU of a `--device all` run
};

struct DashboardRun {
  std::string label;      // run_id, or "<file>#<n>" for a gpt_fast file
  std::string timestamp;  // as written; "" when none
  int64_t time = 0;       // seconds since 1970 (UTC), valid when has_time
  bool has_time = false;
  std::string git_sha, driver, cuda;   // from the run's first row; "" when none
  std::vector<uint32_t> gpus;          // DashboardGpu indices with rows in this run
  std::vector<uint32_t> boards;        // DashboardData::boards with rows in this run
  std::array<uint32_t, 6> rows{};      // its own rows by status (no re-measurement)
  std::array<uint32_t, 4> verdicts{};  // keys by verdict, in GateStatus order
  bool gated = false;  // the newest run of one of its GPUs: its verdicts are `kgate check`'s
};

struct DashboardPoint {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  uint32_t run = 0;
  char status = 'o';  // kDashStatusLetters
  GateStatus verdict = GateStatus::pass;
  double value = kNone;     // NaN for rows without a measurement
  double roofline = kNone;  // this row's roofline (same unit as value)
  double target = kNone;    // the target the gate applies to this row
  double baseline = kNone;  // median of the earlier runs in the window; NaN when none
  double band = kNone;      // relative half-width of the band around the baseline
  double noise = kNone;     // the row's noise_rel: its samples' spread
  // The run's rows' min_us..max_us in the metric (NaN: no row has them).
  double lo = kNone, hi = kNone;
  uint32_t samples = 0;
  int32_t board = -1;  // DashboardData::boards; -1 unless all its rows are on one UUID
};

// A re-measurement of a point, or one GPU's row of a run on several boards.
struct DashboardAttempt {
  uint32_t point = 0;  // index into DashboardKey::points
  int attempt = 2;
  int32_t board = -1;  // set for the rows of a run on several boards
  char status = 'o';
  double value = DashboardPoint::kNone;
};

// A GPU as the rows name it (History::gpus()): uuid is the gate's short label.
struct DashboardBoard {
  std::string uuid, device, host;  // "" where the rows have none
};

struct DashboardKey {
  std::string name, metric, dtype, shape, variant;  // variant of the newest row
  uint32_t gpu = 0;
  bool lower_is_better = false;
  std::vector<DashboardPoint> points;  // oldest run first
  std::vector<DashboardAttempt> attempts;
  // `kgate check`'s verdict on this GPU's newest run; none for a key in
  // neither of its two newest runs (retired).
  bool has_verdict = false;
  GateStatus verdict = GateStatus::pass;
  std::string rule, why;
};

struct DashboardData {
  std::string title;
  std::string generated;  // ISO-8601 UTC
  std::vector<std::string> inputs;
  size_t rows = 0;
  int window = 0;
  double min_gap = 0;
  bool strict = false;
  std::string gate_summary;             // GateReport::summary()
  std::vector<std::string> gated_runs;  // per GPU model: its newest run
  std::vector<DashboardGpu> gpus;
  std::vector<DashboardBoard> boards;
  std::vector<DashboardRun> runs;  // oldest first
  std::vector<DashboardKey> keys;
  std::vector<std::string> warnings;  // the input's row-level damage
  std::vector<std::string> notes;     // what is missing, and what that leaves out
};

// One self-contained HTML file: nothing fetched when it is viewed.
std::string dashboard_html(const DashboardData& d);

// `s` as a JSON string literal, inert inside an HTML <script>.
std::string json_string(const std::string& s);

}  // namespace kb
