// What `kgate check` decided, as a plain record: one verdict per key of the
// newest run. The gate fills it; the reporters (console, Markdown, JUnit,
// HTML: gate_writers.h) only format it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kb {

enum class GateStatus { fail, inconclusive, pass, skipped };

const char* gate_status_name(GateStatus s);  // "FAIL", "inconclusive", "pass", "skipped"

struct GateKeyResult {
  std::string name, metric, dtype, shape, arch, device, variant;
  bool lower_is_better = false;
  GateStatus status = GateStatus::pass;
  std::string rule;  // which rule decided: "failed", "incorrect", "target", "history", ...
  std::string why;   // one line, no key: "dropped 8.1% ... "
  std::string run;   // the newest run's label
  std::optional<double> value;     // the newest run's value
  std::optional<double> baseline;  // median of the history window
  std::optional<double> change;    // (value - baseline) / baseline
  std::optional<double> target;    // the target applied (after tolerance: no)
  double noise = 0;                // relative noise of the history window
  int history_runs = 0;            // earlier runs in the window
  // Confirmation (docs/gate.md): the newest run's attempts of this key (1 =
  // not re-measured; the value is then the median of attempts 2..n), and
  // whether the first stage asks for re-measurement (`--suspects`).
  int attempts = 1;
  bool suspect = false;
  double suspect_score = 0;  // ordering of the suspects: larger first
  bool run_has_id = false;   // suspects need a run id to attach attempts to
  // Something to know that is not a verdict: the variant changed against
  // the history, the run was injected with a slowdown, the value is a median
  // of re-measurements. Shown in every report.
  std::string note;
  // Earlier measured values (oldest first, at most a few windows) and
  // their run labels, for the dashboard.
  std::vector<double> history;
  std::vector<std::string> history_runs_labels;
};

struct GateReport {
  std::vector<GateKeyResult> keys;  // failures first, then inconclusive, pass, skipped
  std::vector<std::string> warnings;
  std::vector<std::string> gated_runs;  // per arch: "NVIDIA H100 ...: run <id> (<timestamp>)"
  std::vector<std::string> inputs;      // the files read
  size_t rows = 0;                      // rows read in all
  bool strict = false;
  int window = 0;
  double min_gap = 0;

  size_t count(GateStatus s) const;
  // 0 pass, 1 regression (or inconclusive under --strict).
  int exit_code() const;
  // "FAIL: 2 regressions, 1 inconclusive, 40 passed, 3 skipped (46 keys)"
  std::string summary() const;
};

// "layer_norm [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3",
// with " (cuda:1)" when the device is not plain "cuda".
std::string key_label(const GateKeyResult& k);

// A value as the reports show it: 4 significant digits, no exponent for
// everyday magnitudes ("1208", "0.8123", "12.35").
std::string show_value(double v);
// "+3.2%", "-8.1%", "0.0%".
std::string show_change(double rel);

}  // namespace kb
