// Reads a results CSV as the gate needs it: ours (schema v1 and v2) or
// gpt_fast's, columns by name. File-level damage throws ResultFileError (an
// unreadable file never passes); a damaged row goes to the bad-row callback
// (docs/gate.md "Input").
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

// One row, as views valid during the callback only. Columns a format lacks
// are empty; a gpt_fast row has status "ok" and, unless a model row, shape
// "mean" (its rows average the seed's shapes, as our `mean` rows do).
struct ResultRow {
  std::string_view name, metric, dtype, device, arch, shape, variant, status;
  std::string_view run_id, timestamp, message;
  std::string_view git_sha, driver, cuda;  // the run's context (empty in gpt_fast files)
  std::string_view suite_version;          // which roofline (roofline_version)
  // Which GPU (schema v2; empty in v1 and gpt_fast files).
  std::string_view gpu_index, gpu_uuid, gpu_bus_id, host;
  bool is_model = false;
  std::optional<double> target, actual, roofline, roofline_fraction, noise_rel, min_us, max_us,
      median_us;
  int64_t samples = 0;
  size_t line = 0;  // where the row begins in the file (1-based)
};

struct ResultFileInfo {
  ResultFormat format = ResultFormat::kbench;
  size_t rows = 0;     // rows handed to the callback
  size_t skipped = 0;  // damaged rows skipped with a warning
};

// The largest magnitude a row's number may have: beyond it is damage.
inline constexpr double kMaxRowValue = 1e12;

// A row the reader could not take: where, why, and its run id as written
// (maybe malformed or empty); valid during the callback only.
struct BadRow {
  size_t line = 0;
  std::string what;
  std::string_view run_id;
};

using RowCallback = std::function<void(const ResultRow&)>;
using BadRowCallback = std::function<void(const BadRow&)>;
// (line, what): `what` does not repeat the path; the caller prefixes it.
using WarningCallback = std::function<void(size_t line, const std::string& what)>;

// Each valid row of `text` to `on_row`, each damaged one to `on_bad_row`
// (without one: a warning). Throws ResultFileError ("<path>:3: ...") on
// file-level damage, a file with no valid row included.
ResultFileInfo parse_results(std::string_view text, const std::string& path,
                             const RowCallback& on_row, const WarningCallback& on_warning,
                             const BadRowCallback& on_bad_row = nullptr);

// The whole file; ResultFileError when it cannot be read or is not CSV
// text (a NUL byte or an over-long line stops the reading: /dev/zero).
std::string read_file_text(const std::string& path);

// A file's bytes held while rows point into them: a regular file mapped (a
// million-row history is a quarter of a gigabyte), anything else read.
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
  // A mapped file's pages given back once its rows are read (views stay
  // valid: a page read again is mapped again).
  void release_pages() const;

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string text_;
};

}  // namespace kb
