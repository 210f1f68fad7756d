#include "suite/point_wire.h"

#include <stdexcept>

namespace kb {

namespace {

using nlohmann::json;

const DType kDTypes[] = {DType::bf16, DType::f16, DType::f32, DType::i8, DType::fp8_e4m3};

DType dtype_of(const std::string& name) {
  for (DType d : kDTypes)
    if (name == dtype_name(d)) return d;
  throw std::invalid_argument("unknown dtype '" + name + "'");
}

}  // namespace

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Summary, n, median, mean, min, max, mad, noise_rel,
                                   median_rel_err)

json measured_point_to_json(const MeasuredPoint& p) {
  const Measurement& t = p.m;
  json j = {{"detail", p.detail},       {"summary", t.summary}, {"value_s", t.value_s},
            {"throttled", t.throttled}, {"total", t.total},     {"setup_s", t.setup_s},
            {"inject", t.inject},       {"note", t.note},       {"buffer_sets", t.buffer_sets}};
  if (t.sm_clock_mhz) j["sm_clock_mhz"] = *t.sm_clock_mhz;
  if (t.mem_clock_mhz) j["mem_clock_mhz"] = *t.mem_clock_mhz;
  if (t.companion_ratio) j["companion_ratio"] = *t.companion_ratio;
  return j;
}

MeasuredPoint measured_point_from_json(const json& j) {
  try {
    MeasuredPoint p;
    Measurement& t = p.m;
    p.detail = j.at("detail").get<std::string>();
    t.summary = j.at("summary").get<Summary>();
    t.value_s = j.at("value_s").get<double>();
    t.throttled = j.at("throttled").get<size_t>();
    t.total = j.at("total").get<size_t>();
    t.setup_s = j.at("setup_s").get<double>();
    t.inject = j.at("inject").get<std::string>();
    t.note = j.at("note").get<std::string>();
    t.buffer_sets = j.at("buffer_sets").get<size_t>();
    if (j.contains("sm_clock_mhz")) t.sm_clock_mhz = j["sm_clock_mhz"].get<double>();
    if (j.contains("mem_clock_mhz")) t.mem_clock_mhz = j["mem_clock_mhz"].get<double>();
    if (j.contains("companion_ratio")) t.companion_ratio = j["companion_ratio"].get<double>();
    return p;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("not a measured point: ") + e.what());
  }
}

std::string points_arg(const std::vector<Point>& points) {
  json a = json::array();
  for (const Point& p : points) {
    json shape = json::array();
    for (const auto& [k, v] : p.shape.items()) shape.push_back({k, v});
    for (const auto& [k, v] : p.shape.labels()) shape.push_back({k, v});  // a text value
    a.push_back({{"shape", shape}, {"dtype", dtype_name(p.dtype)}, {"variant", p.variant}});
  }
  return a.dump();
}

std::vector<Point> parse_points_arg(const std::string& arg) {
  std::vector<Point> out;
  try {
    const json a = json::parse(arg);
    if (!a.is_array()) throw std::invalid_argument("not an array");
    for (const json& j : a) {
      Point p;
      for (const json& kv : j.at("shape")) {
        if (!kv.is_array() || kv.size() != 2) throw std::invalid_argument("a shape item");
        if (kv.at(1).is_string())
          p.shape.set_label(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
        else
          p.shape.set(kv.at(0).get<std::string>(), kv.at(1).get<int64_t>());
      }
      p.dtype = dtype_of(j.at("dtype").get<std::string>());
      p.variant = j.at("variant").get<std::string>();
      out.push_back(p);
    }
  } catch (const std::exception& e) {  // json's, or one of ours above
    throw std::invalid_argument("bad --measure points '" + arg + "': " + e.what());
  }
  return out;
}

json point_time_line(size_t index, const Measurement& t) {
  return {{"measured", index}, {"measurement", measured_point_to_json({"", t})}};
}

json point_error_line(size_t index, const std::string& what) {
  return {{"measured", index}, {"error", what}};
}

std::string point_text(const std::string& experiment, const Point& p) {
  return experiment + " " + p.shape.str() + " " + dtype_name(p.dtype) +
         (p.variant.empty() ? "" : " " + p.variant);
}

std::vector<PointTime> point_times_from_lines(const std::vector<json>& lines,
                                              const std::string& experiment,
                                              const std::vector<Point>& points,
                                              const std::string& worker_why) {
  std::vector<PointTime> out(points.size());
  std::vector<char> have(points.size(), 0);
  std::vector<std::string> error(points.size());
  for (const json& j : lines) {
    if (!j.is_object() || !j.contains("measured") || !j["measured"].is_number_unsigned()) continue;
    const size_t i = j["measured"].get<size_t>();
    if (i >= points.size()) continue;
    if (j.contains("error")) {
      error[i] = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
      continue;
    }
    try {
      const Measurement m = measured_point_from_json(j.at("measurement")).m;
      const PointTime t{m.value_s, m.summary.noise_rel};
      if (!(t.value_s > 0)) {
        error[i] = "a time that is not > 0 (" + std::to_string(t.value_s) + " s)";
        continue;
      }
      out[i] = t;
      have[i] = 1;
    } catch (const std::exception& e) {  // json's, or measured_point_from_json's
      error[i] = std::string("an unreadable result line: ") + e.what();
    }
  }
  for (size_t i = 0; i < points.size(); ++i)
    if (!have[i])
      throw std::runtime_error(point_text(experiment, points[i]) + ": " +
                               (!error[i].empty()
                                    ? error[i]
                                    : (worker_why.empty() ? "the worker stopped without its time"
                                                          : worker_why + ", without its time")));
  return out;
}

}  // namespace kb
