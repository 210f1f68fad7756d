// Measuring given points of an experiment without rows, in a worker process
// of their own (`kbench __worker --experiment NAME --measure POINTS`:
// Engine::measure_point, the code behind every row, in a process like a
// row's; suite/runner.h's measure_points_isolated): the points as the
// worker's argument, and each point's time as one JSON line back. The
// ladder probe measures roofline_ideal's chains so (suite/chain_probe.h).
// No CUDA here: the CPU tests use it.
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
  double value_s = 0;   // Measurement::value_s: what a row's metrics use (a kernel point's median)
  double median_s = 0;  // the samples' median
  double noise_rel = 0;
  size_t samples = 0;      // the samples the statistics used
  size_t buffer_sets = 0;  // the sets they went round-robin over
};

PointTime point_time_of(const Measurement& t);

// The points as one argument (a JSON array of {"shape": [[key, value], ...],
// "dtype": "int8", "variant": "..."}: an axis's value a number, a label's a
// string), and back. parse_points_arg throws
// std::invalid_argument on anything else (an unknown dtype included).
std::string points_arg(const std::vector<Point>& points);
std::vector<Point> parse_points_arg(const std::string& arg);

// The worker's line for the point at `index` of its argument: its
// measurement (as measured_point_to_json writes it), or why it has none.
nlohmann::json point_time_line(size_t index, const Measurement& t);
nlohmann::json point_error_line(size_t index, const std::string& what);

// A MeasuredPoint (suite/rows.h) as JSON and back: a `kbench run` worker's "measurement" of
// a point beside its rows, and a --measure worker's point_time_line.
nlohmann::json measured_point_to_json(const MeasuredPoint& p);
// Throws std::invalid_argument on a line that is not one.
MeasuredPoint measured_point_from_json(const nlohmann::json& j);

// "roofline_ideal bytes=16777216;kernel=read_chunks_x8_graph int8 read_chunks_x8_graph"
std::string point_text(const std::string& experiment, const Point& p);

// The parent's reading of the worker's lines: the time of every point, in
// the order of `points`. Throws std::runtime_error naming the first point
// without a time and why: the worker's error line for it, else
// `worker_why` (how the worker ended: "worker died of signal 11 ...").
// Lines of another kind, or for an index out of range, are ignored.
std::vector<PointTime> point_times_from_lines(const std::vector<nlohmann::json>& lines,
                                              const std::string& experiment,
                                              const std::vector<Point>& points,
                                              const std::string& worker_why);

}  // namespace kb
