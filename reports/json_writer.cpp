#include "reports/json_writer.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kb {

namespace {
nlohmann::json num(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}
}  // namespace

std::string records_to_json(const std::vector<Record>& rows) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) {
    arr.push_back({{"name", r.name},
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
                   {"message", r.message}});
  }
  return arr.dump(2) + "\n";
}

void write_json(const std::string& path, const std::vector<Record>& rows) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write JSON (cannot create " + tmp + ")");
    out << records_to_json(rows);
    if (!out.flush()) throw std::runtime_error(path + ": write failed");
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(path + ": cannot replace: " + ec.message());
}

}  // namespace kb
