// Reads a results CSV as the gate needs it: ours (schema v1) or PyTorch
// benchmarks/gpt_fast's (`name,metric,target,actual,dtype,device,arch,is_model`,
// and its older forms without `arch`, or without `arch` and `is_model`).
// Columns are taken by name from the header, so either order works. Our
// schema v1 and v2 files may be concatenated (a v2 header in the middle):
// the rows below a header are read with its columns.
//
// Damage is sorted in two kinds (docs/gate.md "Input"):
// - file-level (cannot be read, not CSV text (a NUL byte), a line over
//   64 KiB, no header, a required column missing, a different header in
//   the middle, no rows at all): ResultFileError, and the gate exits 2 — a
//   file that cannot be read must never pass;
// - row-level (wrong field count, a last line without its line end, a value
//   that is not a finite number or out of its range, a status outside the
//   closed set, an unknown metric, a malformed run_id or timestamp,
//   is_model not True/False): the row is handed to the bad-row callback,
//   naming the file and line, and the rest of the file is read. The gate
//   decides what it means: a row of an older run is a warning, a row of
//   tonight's run fails the night (tools/kgate/history.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kb {

struct ResultFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class ResultFormat {
  kbench,        // our schema: has `status` (and usually run_id, timestamp)
  gpt_fast,      // name,metric,target,actual,dtype,device,arch,is_model
  gpt_fast_old,  // the same without `arch`
};

// One row, as views valid during the callback only (a quoted field with
// doubled quotes lives in the reader's buffer, not in the file's text).
// Columns a format lacks are empty: a gpt_fast row has status "ok", no
// run_id, and shape "mean" for its micro-benchmark rows (those are the
// averages over the seed's shape list, which is what our `mean` rows are).
struct ResultRow {
  std::string_view name, metric, dtype, device, arch, shape, variant, status;
  std::string_view run_id, timestamp, message;
  std::string_view git_sha, driver, cuda;  // the run's context (empty in gpt_fast files)
  std::string_view suite_version;          // which roofline (reports/metrics.h)
  // Which GPU (schema v2; empty in v1 and gpt_fast files).
  std::string_view gpu_index, gpu_uuid, gpu_bus_id, host;
  bool is_model = false;
  std::optional<double> target, actual, roofline, roofline_fraction, noise_rel, min_us, median_us;
  int64_t samples = 0;
  size_t line = 0;  // where the row begins in the file (1-based)
};

struct ResultFileInfo {
  ResultFormat format = ResultFormat::kbench;
  size_t rows = 0;     // rows handed to the callback
  size_t skipped = 0;  // damaged rows skipped with a warning
};

// The largest magnitude a number of a row may have: no metric kgate knows
// comes near it (GB/s, TFLOPS, tokens/s, microseconds, seconds), so a value
// beyond it (1e308) is damage, not a measurement.
inline constexpr double kMaxRowValue = 1e12;

// A row the reader could not take: where, why, and the run id it names as
// written (its `run_id` field where the row has one at the header's place,
// else empty; it may be malformed): valid during the callback only.
struct BadRow {
  size_t line = 0;
  std::string what;
  std::string_view run_id;
};

using RowCallback = std::function<void(const ResultRow&)>;
using BadRowCallback = std::function<void(const BadRow&)>;
// (line, what): `what` does not repeat the path; the caller prefixes it.
using WarningCallback = std::function<void(size_t line, const std::string& what)>;

// Hands each valid row of `text` to `on_row`, each damaged row to
// `on_bad_row` (without one: a warning "...; row skipped"). Throws
// ResultFileError ("<path>:3: ...") on file-level damage, including a file
// with no valid row; `path` only names the file in messages.
ResultFileInfo parse_results(std::string_view text, const std::string& path,
                             const RowCallback& on_row, const WarningCallback& on_warning,
                             const BadRowCallback& on_bad_row = nullptr);

// The whole file as bytes; ResultFileError when it is a directory, missing,
// unreadable, fails mid-read, or is not CSV text: a NUL byte or a line over
// CsvReader::kMaxRecordBytes stops the reading there (/dev/zero, a pipe of
// binary data), so that no input makes it read without end.
std::string read_file_text(const std::string& path);

// A file's bytes held for as long as rows point into them: a regular file
// is mapped (no copy: a million-row history is a quarter of a gigabyte;
// pages are read as the reader reaches them, so a file of zeros costs one
// page), anything else (a pipe, /dev/stdin) is read. Same errors as
// read_file_text, but for a mapped file's NUL bytes and long lines, which
// the CSV reader finds where it stops.
class FileText {
 public:
  explicit FileText(const std::string& path);
  struct InMemory {};
  FileText(InMemory, std::string text) : text_(std::move(text)) {}
  ~FileText();
  FileText(const FileText&) = delete;
  FileText& operator=(const FileText&) = delete;
  std::string_view view() const {
    return map_ ? std::string_view(static_cast<const char*>(map_), size_) : std::string_view(text_);
  }
  // A mapped file's pages given back to the page cache once its rows are
  // read: views stay valid (a page read again is mapped again from the
  // file), and kgate compare does not hold two files' text beside the rows
  // made of them. Nothing for text held in memory.
  void release_pages() const;

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string text_;
};

}  // namespace kb
