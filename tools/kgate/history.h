// The rows of every results file given to kgate, grouped into runs and into
// one series per key (name, metric, dtype, shape, arch, device). docs/gate.md
// ("Input", "Which run is tonight's", "Fail closed") says why run order is
// append order, never the clock, and which damaged rows fail the night.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/result_reader.h"

namespace kb {

struct Key {
  std::string name, metric, dtype, shape, arch, device;
  bool lower_is_better = false;
};

// A key's parts as one lookup string (Key, GateKeyResult, NoiseKey alike).
template <class K>
std::string key_id(const K& k, const std::string& device) {
  return k.name + '\x1f' + k.metric + '\x1f' + k.dtype + '\x1f' + k.shape + '\x1f' + k.arch +
         '\x1f' + device;
}

// "cuda:N" is "cuda" to the gate: the GPUs of one model are attempts of one key.
std::string gate_key_device(const std::string& device);

// The GPU a row names.
struct GpuId {
  std::string device, index, uuid, host;  // "" where the file has none
  std::string label() const;  // "cuda:1 GPU-5c1e... on node07", as short as the row allows.
};

struct Run {
  std::string label;      // run_id, or "<file>#<n>" for a file without run ids
  std::string timestamp;  // "" when the rows have none
  // The run's context, from the first row of its lowest attempt read.
  std::string git_sha, driver, cuda, suite_version;
  uint32_t context_attempt = 0;  // the attempt the context came from (0: none yet)
  // Its first own row (attempt 1; else its first row) among all rows read, and its last.
  uint32_t first_seen = 0, last_seen = 0;
  bool own_seen = false;  // first_seen is an attempt-1 row
  bool has_id = false;    // from a run_id (kbench), not from file order (gpt_fast)
};

enum class RowStatus : uint8_t { ok, below_target, throttled, incorrect, failed, skipped };
const char* status_name(RowStatus s);  // as the CSV writes it: "ok", "below_target", ...

struct Observation {
  uint32_t key = 0;
  uint32_t run = 0;  // index into History::runs(), which are in run order after finish()
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t seq = 0;      // position among all rows read
  uint32_t attempt = 1;  // 1 = the run's own row; 2.. = re-measurements (core/attempts.h)
  uint32_t gpu = 0;      // index into History::gpus()
  RowStatus status = RowStatus::ok;
  bool is_model = false;
  uint32_t samples = 0;
  double actual = 0;  // valid when measured()
  // NaN where the row has no value (optionals would double the memory).
  double target_ = kNone, roofline_ = kNone, roofline_fraction_ = kNone, noise_rel_ = kNone,
         min_us_ = kNone, max_us_ = kNone, median_us_ = kNone;
  std::string_view variant, message;

  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  static std::optional<double> opt(double v) {
    return v == v ? std::optional<double>(v) : std::nullopt;
  }
  std::optional<double> target() const { return opt(target_); }
  std::optional<double> roofline() const { return opt(roofline_); }
  std::optional<double> roofline_fraction() const { return opt(roofline_fraction_); }
  std::optional<double> noise_rel() const { return opt(noise_rel_); }
  std::optional<double> min_us() const { return opt(min_us_); }
  std::optional<double> max_us() const { return opt(max_us_); }
  std::optional<double> median_us() const { return opt(median_us_); }

  bool measured() const {
    return status == RowStatus::ok || status == RowStatus::below_target ||
           status == RowStatus::throttled;
  }
  // The order of a key's rows: run by run, each run's attempts in order, then as read.
  bool before(const Observation& o) const {
    return std::tie(run, attempt, seq) < std::tie(o.run, o.attempt, o.seq);
  }
};

struct Warning {
  std::string path;
  size_t line = 0;
  std::string what;
  std::string text() const;  // "path:line: what"
};

// The newest run of one GPU model (arch) and the one before it.
struct ArchRuns {
  uint32_t newest = 0, previous = 0;  // indices into History::runs()
  bool has_previous = false;
};

class History {
 public:
  // Reads one results file (or text). Throws ResultFileError on file-level
  // damage; row-level damage is kept for finish().
  void add_file(const std::string& path);
  void add_text(std::string text, const std::string& path);
  // Orders the runs and each key's observations; drops (with a warning) a
  // key's second row in one attempt of one run on one GPU.
  void finish();

  const std::vector<Key>& keys() const { return keys_; }
  const std::vector<Run>& runs() const { return runs_; }
  const std::vector<std::string>& files() const { return files_; }
  const std::vector<Observation>& observations() const { return obs_; }
  const std::vector<GpuId>& gpus() const { return gpus_; }
  // A key's observations, oldest run first, a run's attempts in order.
  const std::vector<uint32_t>& series(uint32_t key) const { return by_key_[key]; }
  // Warnings in file and line order, at most kMaxWarningsPerFile per file.
  static constexpr size_t kMaxWarningsPerFile = 50;
  const std::vector<Warning>& warnings() const { return warnings_; }
  size_t rows() const { return obs_.size(); }
  // Per GPU model, its newest run and the one before.
  const std::map<std::string, ArchRuns>& arch_runs() const { return arch_runs_; }
  // Tonight's rows that kgate cannot trust: each fails the night.
  const std::vector<Warning>& untrusted() const { return untrusted_; }

 private:
  // A row the reader refused, until finish() knows whether it is tonight's.
  struct Damaged {
    uint32_t file = 0;
    size_t line = 0;
    uint32_t seq = 0;  // the rows read before it
    std::string what;
    std::string run;  // the run its run_id names, "" where that is malformed
  };

  void parse(uint32_t file);
  void warn(uint32_t file, size_t line, std::string what);
  void find_arch_runs();
  void judge_damaged();
  void warn_out_of_order();
  // Sorts `list` by file and line, with a line per file that had more than
  // kMaxWarningsPerFile (`count`).
  void close_list(std::vector<Warning>& list, const std::vector<size_t>& count,
                  const std::string& more) const;
  std::string_view keep(std::string_view v, uint32_t file);
  std::string_view arch_spelling(std::string_view arch);
  uint32_t intern_key(const ResultRow& r);
  uint32_t intern_run(const ResultRow& r, uint32_t file, uint32_t key);
  uint32_t intern_gpu(const ResultRow& r);

  std::vector<std::string> files_;
  std::deque<FileText> texts_;    // the rows' views point into these
  std::deque<std::string> kept_;  // or into these, where the text had escapes
  std::vector<Key> keys_;
  std::vector<GpuId> gpus_;
  std::unordered_map<std::string, uint32_t> gpu_index_;
  std::unordered_map<std::string, uint32_t> key_index_;
  // gpu_name_key(arch) -> the first spelling read of that GPU model.
  std::unordered_map<std::string, std::string> arch_spelling_;
  std::string last_arch_, last_spelling_;
  std::vector<Run> runs_;
  std::unordered_map<std::string, uint32_t> run_index_;
  std::vector<uint32_t> repeats_;  // per key: rows seen in the current file without run id
  std::vector<Observation> obs_;
  std::vector<std::vector<uint32_t>> by_key_;
  std::vector<Warning> warnings_;
  std::vector<size_t> warning_count_;  // per file
  std::vector<Damaged> damaged_;
  std::vector<Warning> untrusted_;
  std::map<std::string, ArchRuns> arch_runs_;
  std::string scratch_;
  std::string last_run_id_;
  uint32_t last_run_ = UINT32_MAX;
};

// The `;` fields of a variant that are (`injected`) or are not the `inject=`
// fields kbench --inject-slowdown adds, joined again in their order.
inline std::string variant_fields(std::string_view variant, bool injected) {
  std::string out;
  size_t start = 0;
  while (start <= variant.size()) {
    size_t end = variant.find(';', start);
    if (end == std::string_view::npos) end = variant.size();
    std::string_view f = variant.substr(start, end - start);
    if ((f.rfind("inject=", 0) == 0) == injected) out += (out.empty() ? "" : ";") + std::string(f);
    start = end + 1;
  }
  return out;
}

// The kernel a row's variant names: an injected slowdown runs the same one.
inline std::string kernel_identity(std::string_view variant) {
  if (variant.find("inject=") == std::string_view::npos) return std::string(variant);
  return variant_fields(variant, false);
}

}  // namespace kb
