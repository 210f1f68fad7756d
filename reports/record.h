// One result row: the plain record every reporter formats (CSV, JSON,
// console). The measurement engine fills it; reporters only read it.
// Field order and names are the CSV schema v1 (docs/csv-schema.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kb {

struct Record {
  // The eight columns of PyTorch benchmarks/gpt_fast, in its order.
  std::string name;
  std::string metric;
  std::optional<double> target;
  std::optional<double> actual;  // empty for failed/incorrect/skipped rows
  std::string dtype;
  std::string device = "cuda";
  std::string arch;
  bool is_model = false;
  // Ours.
  std::string shape;
  std::string variant;
  std::string status = "ok";
  int64_t samples = 0;
  std::optional<double> median_us, min_us, max_us, noise_rel;
  std::optional<double> roofline, roofline_fraction;
  std::optional<double> sm_clock_mhz, mem_clock_mhz;
  std::string driver, cuda, suite_version, git_sha, run_id, timestamp;
  std::string message;  // why a row failed / was skipped / is flagged
};

// The statuses a row can have (docs/csv-schema.md "Statuses").
namespace status {
inline constexpr const char* ok = "ok";
inline constexpr const char* below_target = "below_target";
inline constexpr const char* incorrect = "incorrect";
inline constexpr const char* failed = "failed";
inline constexpr const char* skipped = "skipped";
inline constexpr const char* throttled = "throttled";
}  // namespace status

// Column names of schema v1, in order.
const std::vector<std::string>& csv_columns();
// The header line (no newline).
std::string csv_header();
// The row's fields as text, in column order (numbers in shortest round-trip form).
std::vector<std::string> record_fields(const Record& r);

// Shortest text that parses back to exactly `v` ("1208.12", "3e-05").
std::string format_number(double v);

}  // namespace kb
