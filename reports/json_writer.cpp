#include "reports/json_writer.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "core/atomic_write.h"

namespace kb {

namespace {

// Every column of a Record with its JSON key: f(key, member).
template <class R, class F>
void for_each_field(R& r, F f) {
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

nlohmann::json value(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}
template <class T>
nlohmann::json value(const T& v) {
  return v;
}

void read(const nlohmann::json& v, std::optional<double>& out) {
  out = v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
}
template <class T>
void read(const nlohmann::json& v, T& out) {
  out = v.get<T>();
}

}  // namespace

nlohmann::json record_to_json(const Record& r) {
  nlohmann::json j = nlohmann::json::object();
  for_each_field(r, [&](const char* key, const auto& v) { j[key] = value(v); });
  return j;
}

Record record_from_json(const nlohmann::json& j) {
  Record r;
  for_each_field(r, [&](const char* key, auto& field) {
    // Schema v2's GPU identity: absent from JSON written before it.
    const std::string_view k = key;
    if (k.rfind("gpu_", 0) == 0 || k == "host") {
      if (j.contains(key) && j[key].is_string()) read(j[key], field);
    } else {
      read(j.at(key), field);
    }
  });
  return r;
}

void write_json(const std::string& path, const std::vector<Record>& rows) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) arr.push_back(record_to_json(r));
  atomic_write(path, arr.dump(2) + "\n");
}

}  // namespace kb
