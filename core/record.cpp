#include "core/record.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <ctime>

namespace kb {

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> cols = {
      "name",         "metric",        "target",  "actual",    "dtype",         "device",
      "arch",         "is_model",      "shape",   "variant",   "status",        "samples",
      "median_us",    "min_us",        "max_us",  "noise_rel", "roofline",      "roofline_fraction",
      "sm_clock_mhz", "mem_clock_mhz", "driver",  "cuda",      "suite_version", "git_sha",
      "run_id",       "timestamp",     "message", "gpu_index", "gpu_uuid",      "gpu_bus_id",
      "host"};
  return cols;
}

size_t csv_columns_v1() { return 27; }

static std::string header_of(size_t n) {
  std::string h;
  for (size_t i = 0; i < n; ++i) {
    if (!h.empty()) h += ',';
    h += csv_columns()[i];
  }
  return h;
}

std::string csv_header() { return header_of(csv_columns().size()); }

std::string csv_header_v1() { return header_of(csv_columns_v1()); }

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip
  return std::string(buf, res.ptr);
}

static std::string opt(const std::optional<double>& v) {
  return v ? format_number(*v) : std::string();
}

std::vector<std::string> record_fields(const Record& r) {
  return {r.name,
          r.metric,
          opt(r.target),
          opt(r.actual),
          r.dtype,
          r.device,
          r.arch,
          r.is_model ? "True" : "False",
          r.shape,
          r.variant,
          r.status,
          std::to_string(r.samples),
          opt(r.median_us),
          opt(r.min_us),
          opt(r.max_us),
          opt(r.noise_rel),
          opt(r.roofline),
          opt(r.roofline_fraction),
          opt(r.sm_clock_mhz),
          opt(r.mem_clock_mhz),
          r.driver,
          r.cuda,
          r.suite_version,
          r.git_sha,
          r.run_id,
          r.timestamp,
          r.message,
          r.gpu_index,
          r.gpu_uuid,
          r.gpu_bus_id,
          r.host};
}

std::vector<std::string> record_fields(const Record& r, size_t columns) {
  std::vector<std::string> f = record_fields(r);
  if (columns < f.size()) f.resize(columns);
  return f;
}

std::string utc_now(const char* format) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace kb
