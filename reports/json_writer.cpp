#include "reports/json_writer.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "core/atomic_write.h"

namespace kb {

namespace {
nlohmann::json num(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}
}  // namespace

nlohmann::json record_to_json(const Record& r) {
  return {{"name", r.name},
          {"metric", r.metric},
          {"target", num(r.target)},
          {"actual", num(r.actual)},
          {"dtype", r.dtype},
          {"device", r.device},
          {"arch", r.arch},
          {"is_model", r.is_model},
          {"shape", r.shape},
          {"variant", r.variant},
          {"status", r.status},
          {"samples", r.samples},
          {"median_us", num(r.median_us)},
          {"min_us", num(r.min_us)},
          {"max_us", num(r.max_us)},
          {"noise_rel", num(r.noise_rel)},
          {"roofline", num(r.roofline)},
          {"roofline_fraction", num(r.roofline_fraction)},
          {"sm_clock_mhz", num(r.sm_clock_mhz)},
          {"mem_clock_mhz", num(r.mem_clock_mhz)},
          {"driver", r.driver},
          {"cuda", r.cuda},
          {"suite_version", r.suite_version},
          {"git_sha", r.git_sha},
          {"run_id", r.run_id},
          {"timestamp", r.timestamp},
          {"message", r.message},
          {"gpu_index", r.gpu_index},
          {"gpu_uuid", r.gpu_uuid},
          {"gpu_bus_id", r.gpu_bus_id},
          {"host", r.host}};
}

namespace {
std::optional<double> opt(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (v.is_null()) return std::nullopt;
  return v.get<double>();
}
}  // namespace

Record record_from_json(const nlohmann::json& j) {
  Record r;
  r.name = j.at("name").get<std::string>();
  r.metric = j.at("metric").get<std::string>();
  r.target = opt(j, "target");
  r.actual = opt(j, "actual");
  r.dtype = j.at("dtype").get<std::string>();
  r.device = j.at("device").get<std::string>();
  r.arch = j.at("arch").get<std::string>();
  r.is_model = j.at("is_model").get<bool>();
  r.shape = j.at("shape").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.samples = j.at("samples").get<int64_t>();
  r.median_us = opt(j, "median_us");
  r.min_us = opt(j, "min_us");
  r.max_us = opt(j, "max_us");
  r.noise_rel = opt(j, "noise_rel");
  r.roofline = opt(j, "roofline");
  r.roofline_fraction = opt(j, "roofline_fraction");
  r.sm_clock_mhz = opt(j, "sm_clock_mhz");
  r.mem_clock_mhz = opt(j, "mem_clock_mhz");
  r.driver = j.at("driver").get<std::string>();
  r.cuda = j.at("cuda").get<std::string>();
  r.suite_version = j.at("suite_version").get<std::string>();
  r.git_sha = j.at("git_sha").get<std::string>();
  r.run_id = j.at("run_id").get<std::string>();
  r.timestamp = j.at("timestamp").get<std::string>();
  r.message = j.at("message").get<std::string>();
  // Schema v2's GPU identity: absent from JSON written before it.
  for (auto [key, field] :
       {std::pair{"gpu_index", &r.gpu_index}, std::pair{"gpu_uuid", &r.gpu_uuid},
        std::pair{"gpu_bus_id", &r.gpu_bus_id}, std::pair{"host", &r.host}})
    if (j.contains(key) && j[key].is_string()) *field = j[key].get<std::string>();
  return r;
}

std::string records_to_json(const std::vector<Record>& rows) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) arr.push_back(record_to_json(r));
  return arr.dump(2) + "\n";
}

void write_json(const std::string& path, const std::vector<Record>& rows) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  atomic_write(path, records_to_json(rows));
}

}  // namespace kb
