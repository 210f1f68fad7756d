// One result row, in the order and names of the CSV schema v2
// (docs/csv-schema.md): v1's 27 columns, then the GPU's identity.
#pragma once

#include <cstdint>
#include <cstdio>
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
  // Schema v2: which GPU of which host ("" where unknown); the UUID and
  // PCI bus id name the board, gpu_index as CUDA_VISIBLE_DEVICES numbers it.
  std::string gpu_index, gpu_uuid, gpu_bus_id, host;
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

// Every column of a Record, in the schema's order: f(column name, member);
// the CSV and the JSON rows are both written from it.
template <class R, class F>
void for_each_field(R&& r, F f) {
  f("name", r.name);
  f("metric", r.metric);
  f("target", r.target);
  f("actual", r.actual);
  f("dtype", r.dtype);
  f("device", r.device);
  f("arch", r.arch);
  f("is_model", r.is_model);
  f("shape", r.shape);
  f("variant", r.variant);
  f("status", r.status);
  f("samples", r.samples);
  f("median_us", r.median_us);
  f("min_us", r.min_us);
  f("max_us", r.max_us);
  f("noise_rel", r.noise_rel);
  f("roofline", r.roofline);
  f("roofline_fraction", r.roofline_fraction);
  f("sm_clock_mhz", r.sm_clock_mhz);
  f("mem_clock_mhz", r.mem_clock_mhz);
  f("driver", r.driver);
  f("cuda", r.cuda);
  f("suite_version", r.suite_version);
  f("git_sha", r.git_sha);
  f("run_id", r.run_id);
  f("timestamp", r.timestamp);
  f("message", r.message);
  f("gpu_index", r.gpu_index);
  f("gpu_uuid", r.gpu_uuid);
  f("gpu_bus_id", r.gpu_bus_id);
  f("host", r.host);
}

// Column names of the current schema (v2), in order.
const std::vector<std::string>& csv_columns();
// The header line (no newline).
std::string csv_header();
// Schema v1: v2's first 27 columns (older history files keep this header).
size_t csv_columns_v1();
std::string csv_header_v1();
// The row's fields as text, in column order; `columns` = csv_columns_v1()
// gives a v1 row.
std::vector<std::string> record_fields(const Record& r);
std::vector<std::string> record_fields(const Record& r, size_t columns);

// Shortest text that parses back to exactly `v` ("1208.12", "3e-05").
std::string format_number(double v);
// `v` through printf's `format`, which converts one double ("%.2f").
inline std::string format_double(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Now in UTC, as the `timestamp` column writes it by default.
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");
// This machine's host name, the `host` column ("" if it cannot be read).
std::string host_name();

}  // namespace kb
