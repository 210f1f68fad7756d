#include "reports/json_writer.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/atomic_write.h"

namespace kb {

namespace {

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
