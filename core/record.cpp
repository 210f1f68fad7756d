#include "core/record.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <ctime>

namespace kb {

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> cols = [] {
    std::vector<std::string> c;
    for_each_field(Record{}, [&](const char* name, const auto&) { c.emplace_back(name); });
    return c;
  }();
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

namespace {

// A field as the CSV writes it: numbers shortest, an empty optional empty,
// booleans in Python's spelling (gpt_fast's is_model).
std::string text(const std::string& v) { return v; }
std::string text(const std::optional<double>& v) { return v ? format_number(*v) : std::string(); }
std::string text(bool v) { return v ? "True" : "False"; }
std::string text(int64_t v) { return std::to_string(v); }

}  // namespace

std::vector<std::string> record_fields(const Record& r) {
  std::vector<std::string> f;
  for_each_field(r, [&](const char*, const auto& v) { f.push_back(text(v)); });
  return f;
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
