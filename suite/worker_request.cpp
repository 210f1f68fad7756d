#include "suite/worker_request.h"

#include <cstdlib>
#include <stdexcept>

#include "core/record.h"

namespace kb {

namespace {

template <typename T>
std::string join(const std::vector<T>& v) {
  std::string s;
  for (const T& x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

template <typename T>
std::vector<T> split(const std::string& list) {
  std::vector<T> out;
  for (size_t pos = 0; pos < list.size();) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    out.push_back(static_cast<T>(std::strtoll(list.substr(pos, end - pos).c_str(), nullptr, 10)));
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> worker_argv(const std::string& exe, const WorkerRequest& r) {
  const EngineOptions& o = r.engine;
  std::vector<std::string> a = {exe, "__worker"};
  auto add = [&](const char* flag, const std::string& v) {
    if (!v.empty()) a.insert(a.end(), {flag, v});
  };
  add("--device", std::to_string(r.device));
  add("--label", r.info.device_label);
  add("--run-id", r.info.run_id);
  add("--timestamp", r.info.timestamp);
  add("--max-noise", format_number(o.max_noise));
  add("--max-time", format_number(o.max_time_s));
  add("--seed", std::to_string(o.seed));
  add("--buffer-sets", std::to_string(o.max_buffer_sets));
  add("--buffer-mib", std::to_string(o.sampled_bytes_goal >> 20));
  if (o.quick) a.push_back("--quick");
  if (!o.check) a.push_back("--no-check");
  if (o.detail) a.push_back("--detail");
  if (o.inject_slowdown > 0) add("--inject", format_number(o.inject_slowdown));
  if (r.probe) a.push_back("--probe");
  add("--targets", r.targets_dir);
  add("--experiment", r.experiment);
  if (r.from > 0) add("--from", std::to_string(r.from));
  add("--points", join(r.points));
  add("--measure", r.measure);
  add("--devices", join(r.devices));
  add("--probed", r.probed);
  add("--out", r.out);
  return a;
}

WorkerRequest parse_worker_request(int argc, char** argv) {
  WorkerRequest r;
  EngineOptions& o = r.engine;
  for (int i = 2; i < argc; ++i) {
    const std::string f = argv[i];
    auto v = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument("worker option " + f + " needs a value");
      return argv[++i];
    };
    if (f == "--device")
      r.device = std::atoi(v().c_str());
    else if (f == "--label")
      r.info.device_label = v();
    else if (f == "--run-id")
      r.info.run_id = v();
    else if (f == "--timestamp")
      r.info.timestamp = v();
    else if (f == "--max-noise")
      o.max_noise = std::atof(v().c_str());
    else if (f == "--max-time")
      o.max_time_s = std::atof(v().c_str());
    else if (f == "--seed")
      o.seed = std::strtoull(v().c_str(), nullptr, 10);
    else if (f == "--buffer-sets")
      o.max_buffer_sets = std::atoi(v().c_str());
    else if (f == "--buffer-mib")  // whole MiB: what a pass's share of the bytes rounds to
      o.sampled_bytes_goal = static_cast<size_t>(std::atoll(v().c_str())) << 20;
    else if (f == "--quick")
      o.quick = true;
    else if (f == "--no-check")
      o.check = false;
    else if (f == "--detail")
      o.detail = true;
    else if (f == "--inject")
      o.inject_slowdown = std::atof(v().c_str());
    else if (f == "--probe")
      r.probe = true;
    else if (f == "--targets")
      r.targets_dir = v();
    else if (f == "--experiment")
      r.experiment = v();
    else if (f == "--from")
      r.from = std::strtoull(v().c_str(), nullptr, 10);
    else if (f == "--points")
      r.points = split<size_t>(v());
    else if (f == "--measure")
      r.measure = v();
    else if (f == "--devices")
      r.devices = split<int>(v());
    else if (f == "--probed")
      r.probed = v();
    else if (f == "--out")
      r.out = v();
    else
      throw std::invalid_argument("unknown worker option " + f);
  }
  return r;
}

}  // namespace kb
