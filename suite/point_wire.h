// What crosses between the parent and a worker about points: the points of
// a worker's `measure` request as an argument, each point's measurement as a
// JSON line back. No CUDA here: the CPU tests use it.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/types.h"
#include "suite/rows.h"

namespace kb {

// What the parent reads back of one point's Measurement.
struct PointTime {
  double value_s = 0;  // Measurement::value_s: what a row's metrics use (a kernel point's median)
  double noise_rel = 0;
};

// The points as one JSON argument, and back (std::invalid_argument).
std::string points_arg(const std::vector<Point>& points);
std::vector<Point> parse_points_arg(const std::string& arg);

// The worker's line for the point at `index`: its measurement, or why none.
nlohmann::json point_time_line(size_t index, const Measurement& t);
nlohmann::json point_error_line(size_t index, const std::string& what);

// A MeasuredPoint as JSON and back (std::invalid_argument).
nlohmann::json measured_point_to_json(const MeasuredPoint& p);
MeasuredPoint measured_point_from_json(const nlohmann::json& j);

// "roofline_ideal bytes=16777216;kernel=read_chunks_x8_graph int8 read_chunks_x8_graph"
std::string point_text(const std::string& experiment, const Point& p);

// The time of every point from the worker's lines. Throws
// std::runtime_error naming the first point without one and why (its error
// line, else `worker_why`: how the worker ended).
std::vector<PointTime> point_times_from_lines(const std::vector<nlohmann::json>& lines,
                                              const std::string& experiment,
                                              const std::vector<Point>& points,
                                              const std::string& worker_why);

}  // namespace kb
