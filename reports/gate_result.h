// What `kgate check` decided, as a plain record: one verdict per key of the
// newest run. The gate fills it; the reporters below format it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kb {

enum class GateStatus { fail, inconclusive, pass, skipped };

const char* gate_status_name(GateStatus s);  // "FAIL", "inconclusive", "pass", "skipped"

// Which commit, driver and CUDA measured a run ("" where the file has no such column).
struct RunContext {
  std::string run, timestamp, git_sha, driver, cuda;
};

// "run r42 (<timestamp>; commit d691121bf87b, driver 580.159.04, CUDA 13.0)".
std::string describe_run(const RunContext& r);

// The newest run of one GPU model: the run the gate judged.
struct GatedRun {
  std::string arch;  // "" for rows without one
  RunContext context;
  size_t keys = 0;
  std::string describe() const;  // "NVIDIA H100 80GB HBM3: run r42 (...), 240 keys"
};

struct GateKeyResult {
  std::string name, metric, dtype, shape, arch, device, variant;
  bool lower_is_better = false;
  GateStatus status = GateStatus::pass;
  std::string rule;        // which rule decided: "failed", "incorrect", "target", "history", ...
  std::string why;         // one line, no key: "dropped 8.1% ... "
  std::string run;         // the newest run's label
  bool throttled = false;  // the newest row's status is `throttled` (SM clock low)
  // A failing key's newest good run: what changed since is the first suspect.
  std::optional<RunContext> last_good;
  std::optional<double> last_good_value;
  std::optional<double> value;     // the newest run's value
  std::optional<double> baseline;  // median of the history window
  std::optional<double> change;    // (value - baseline) / baseline
  std::optional<double> target;    // the target applied (after tolerance: no)
  double noise = 0;                // relative noise of the history window
  int history_runs = 0;            // earlier runs in the window
  bool young = false;              // too few runs for the history rule, whatever decided
  int attempts = 1;                // the newest run's (its value: the median of attempts 2..n)
  bool suspect = false;            // the first stage asks for re-measurement (`--suspects`)
  bool target_on_host = false;     // below its target, met on this host (decisions/0055)
  double suspect_score = 0;        // ordering of the suspects: larger first
  bool run_has_id = false;         // suspects need a run id to attach attempts to
  std::string note;                // not a verdict: a changed variant, an injected slowdown, ...
  // The baseline's values (oldest first) and their run labels.
  std::vector<double> history;
  std::vector<std::string> history_runs_labels;
};

// A GPU behind its siblings in the newest run (siblings.h); not an exit code.
struct GpuFinding {
  std::string arch, run, gpu, why;
};

// What fails the night before any key is judged (rule 5, fail closed).
struct InputFailure {
  std::string where;  // "results.csv:1234", or the GPU model for a partial run
  std::string rule;   // "untrusted row", "partial run"
  std::string why;
  std::string text() const { return where + ": " + why; }
};

struct GateReport {
  std::vector<GateKeyResult> keys;           // failures first, then inconclusive, pass, skipped
  std::vector<InputFailure> input_failures;  // each fails the night (exit 1)
  std::vector<GpuFinding> gpu_findings;
  std::vector<std::string> warnings;
  std::vector<GatedRun> gated_runs;  // per arch, the newest run
  std::vector<std::string> inputs;   // the files read
  size_t rows = 0;                   // rows read in all
  bool strict = false;
  int window = 0;
  int min_history = 0;
  double min_gap = 0;
  std::string dashboard;     // the dashboard's URL (--dashboard): each key links to its chart
  std::string host;          // the machine kgate ran on ("" = not known)
  std::string generated_at;  // when kgate ran, ISO-8601 UTC ("" = not known)

  size_t count(GateStatus s) const;
  // 0 pass, 1 regression, an input failure (or inconclusive under --strict).
  int exit_code() const;
  // "FAIL: 2 regressions, 1 inconclusive, 40 passed, 3 skipped (46 keys)".
  std::string summary() const;
  // Inconclusive for too little history only: folded into history_note's
  // one line rather than listed (none under --strict).
  bool folded(const GateKeyResult& k) const;
  size_t count_folded() const;
  std::string history_note() const;  // "" when none are folded
  std::string provenance() const;    // "kgate ran on <host> at <time>", or ""
};

// "last good: run r41 (...; commit ..., driver ...): 1850", or "".
std::string last_good_text(const GateKeyResult& k);

// The night at a glance: the drops by size and, where many keys dropped at
// once, "broad: N of M keys moved together" (more likely the machine than
// one kernel). Empty when fewer than two keys dropped.
std::vector<std::string> findings(const GateReport& r);
// "failing since run X" (the run after the last good one), "" when tonight's
// is the first failing run or when not known.
std::string failing_since(const GateKeyResult& k);
// The key's why, then failing_since and last_good_text where there are any.
std::string why_with_history(const GateKeyResult& k);
// The key's charts on the dashboard (--dashboard), else "".
std::string chart_link(const GateReport& r, const GateKeyResult& k);
// The keys by status, each status worst drop first.
void order_worst_first(GateReport& r);

// "layer_norm [BS=4096;D=8192] bfloat16 memory_bandwidth(GB/s) @ NVIDIA H100 80GB HBM3",
// with " (cuda:1)" when the device is not plain "cuda"; no " @ arch" for "".
template <class K>
std::string key_label(const K& k, const std::string& arch) {
  std::string s = k.name;
  if (!k.shape.empty()) s += " [" + k.shape + "]";
  s += " " + k.dtype + " " + k.metric;
  if (!arch.empty()) s += " @ " + arch;
  if (!k.device.empty() && k.device != "cuda") s += " (" + k.device + ")";
  return s;
}
inline std::string key_label(const GateKeyResult& k) { return key_label(k, k.arch); }

// 4 significant digits, no exponent for everyday magnitudes ("1208",
// "0.8123"); show_change: "+3.2%", "0.0%"; "-" for none.
std::string show_value(double v);
std::string show_change(double rel);
std::string show_value(const std::optional<double>& v);
std::string show_change(const std::optional<double>& rel);

// A target met on a host that launches slower than the target file's
// (decisions/0055), as kbench's rows and kgate's notes both say it:
// "this host launches slower (4.98 vs 3.36 us): the target here is 1511, met".
inline constexpr const char* kHostLaunchesSlower = "this host launches slower";
std::string host_target_met(double launch_us, double file_launch_us, double target_here);

// The formats of a gate report (docs/gate.md). gate_console folds passes,
// skipped and new keys into counts unless `all`.
std::string gate_console(const GateReport& r, bool all = false);
// The console's per-key line: "FAIL <key>: <value> (baseline <b>, <change>): <why>".
std::string gate_line(const GateKeyResult& k);
// One line naming every key too noisy to gate ("" when none).
std::string too_noisy_line(const GateReport& r);
// The status as the reports show it: "FAIL", "inconclusive", "pass",
// "pass (throttled)", "new", "skipped".
std::string shown_status(const GateReport& r, const GateKeyResult& k);
std::string gate_markdown(const GateReport& r);
std::string gate_junit(const GateReport& r);
std::string gate_html(const GateReport& r);

// & < > " escaped; for XML also ', and the control characters XML 1.0
// does not allow dropped.
enum class Markup { html, xml };
std::string escape_markup(const std::string& s, Markup m);

}  // namespace kb
