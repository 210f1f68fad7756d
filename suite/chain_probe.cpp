#include "suite/chain_probe.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/record.h"

namespace kb {

namespace {

std::string us(double s) { return format_double("%.2f us", s * 1e6); }

}  // namespace

std::vector<double> chain_bytes(double max_bytes) {
  std::vector<double> out;
  for (double b : {8.0 * (1 << 20), 16.0 * (1 << 20), 64.0 * (1 << 20), 512.0 * (1 << 20)})
    if (b <= max_bytes) out.push_back(b);
  return out;
}

std::vector<Point> chain_points(double max_bytes) {
  std::vector<Point> out;
  for (const char* variant : {kStreamChain, kGraphChain})
    for (double b : chain_bytes(max_bytes)) {
      Point p;
      p.shape = Shape{{"bytes", static_cast<int64_t>(b)}};
      p.shape.set_label(kIdealShapeLabel, variant);
      p.dtype = DType::i8;
      p.variant = variant;
      out.push_back(p);
    }
  return out;
}

std::vector<std::string> set_further_launches(SpeedOfLight& sol, const std::vector<Point>& points,
                                              const std::vector<double>& seconds) {
  if (points.size() != seconds.size())
    throw std::invalid_argument("set_further_launches: " + std::to_string(points.size()) +
                                " chains, " + std::to_string(seconds.size()) + " times");
  // Per size: the stream chain's time and the graph chain's (-1: not given).
  struct Size {
    double bytes, stream_s = -1, graph_s = -1;
  };
  std::vector<Size> sizes;
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const bool stream = p.variant == kStreamChain, graph = p.variant == kGraphChain;
    if (!stream && !graph)
      throw std::invalid_argument("set_further_launches: '" + p.variant + "' is not a chain");
    const double b = static_cast<double>(p["bytes"]);
    auto it = std::find_if(sizes.begin(), sizes.end(), [&](const Size& s) { return s.bytes == b; });
    if (it == sizes.end()) it = sizes.insert(sizes.end(), Size{b});
    double& t = stream ? it->stream_s : it->graph_s;
    if (t >= 0)
      throw std::invalid_argument("set_further_launches: " + p.variant +
                                  " bytes=" + std::to_string(p["bytes"]) + " given twice");
    t = seconds[i];
  }
  std::sort(sizes.begin(), sizes.end(),
            [](const Size& a, const Size& b) { return a.bytes < b.bytes; });
  sol.launch_extra_by_link.clear();
  sol.graph_node_extra_by_link.clear();
  double stream_extra = -1, graph_extra = -1;
  std::vector<std::string> report;
  for (const Size& s : sizes) {
    if (s.stream_s < 0 || s.graph_s < 0)
      throw std::invalid_argument(
          "set_further_launches: the chains of " + std::to_string(static_cast<long long>(s.bytes)) +
          " bytes lack their " + (s.stream_s < 0 ? "stream" : "graph") + " chain");
    const double one = sol.read.seconds(s.bytes);
    const double es = further_launch_seconds(s.stream_s, one, kChainLinks);
    const double eg = further_launch_seconds(s.graph_s, one, kChainLinks);
    stream_extra = stream_extra < 0 ? es : std::min(stream_extra, es);
    graph_extra = graph_extra < 0 ? eg : std::min(graph_extra, eg);
    sol.launch_extra_by_link.push_back({s.bytes / kChainLinks, es * 1e6});
    sol.graph_node_extra_by_link.push_back({s.bytes / kChainLinks, eg * 1e6});
    const std::string mb = std::to_string(static_cast<long long>(s.bytes) >> 20) + " MB";
    report.push_back("stream x8 " + mb + ": " + us(s.stream_s) + " (one launch " + us(one) +
                     "): +" + us(es) + " a launch");
    report.push_back("graph x8 " + mb + ": " + us(s.graph_s) + " (one launch " + us(one) + "): +" +
                     us(eg) + " a node");
  }
  sol.launch_extra_us = std::max(0.0, stream_extra) * 1e6;
  sol.graph_node_extra_us = std::max(0.0, graph_extra) * 1e6;
  return report;
}

std::vector<double> mean_over_processes(const std::vector<std::vector<double>>& per_process) {
  if (per_process.empty())
    throw std::invalid_argument("mean_over_processes: no process measured the chains");
  const size_t n = per_process.front().size();
  for (const auto& p : per_process)
    if (p.size() != n)
      throw std::invalid_argument("mean_over_processes: processes measured " +
                                  std::to_string(per_process.front().size()) + " and " +
                                  std::to_string(p.size()) + " points");
  std::vector<double> out(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& p : per_process) out[i] += p[i];
    out[i] /= static_cast<double>(per_process.size());
  }
  return out;
}

std::vector<Point> chain_worker_points(const std::vector<Point>& experiment,
                                       const std::vector<Point>& chains, std::vector<size_t>* at) {
  auto same = [](const Point& a, const Point& b) {
    return a.variant == b.variant && a.dtype == b.dtype && a.shape.items() == b.shape.items();
  };
  std::vector<Point> out = experiment;
  at->clear();
  for (const Point& c : chains) {
    size_t i = 0;
    while (i < out.size() && !same(out[i], c)) ++i;
    if (i == out.size()) out.push_back(c);
    at->push_back(i);
  }
  return out;
}

std::vector<std::string> fold_worker_rungs(SpeedOfLight& sol, const std::vector<Point>& points,
                                           const std::vector<double>& seconds,
                                           const std::vector<std::string>& read_kernels,
                                           const std::vector<std::string>& copy_kernels) {
  if (points.size() != seconds.size())
    throw std::invalid_argument("fold_worker_rungs: " + std::to_string(points.size()) +
                                " points, " + std::to_string(seconds.size()) + " times");
  auto named = [](const std::vector<std::string>& names, const std::string& v) {
    return std::find(names.begin(), names.end(), v) != names.end();
  };
  std::vector<std::string> report;
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const bool read = named(read_kernels, p.variant), copy = named(copy_kernels, p.variant);
    if ((!read && !copy) || !(seconds[i] > 0)) continue;
    Ladder& l = read ? sol.read : sol.copy;
    const double b = static_cast<double>(p["bytes"]);
    for (auto& [bytes, t] : l.rungs) {
      if (bytes != b || seconds[i] >= t) continue;
      char line[160];
      std::snprintf(line, sizeof line, "%s %.0f B: %.3f -> %.3f us (%s, workers)",
                    read ? "read" : "copy", b, t * 1e6, seconds[i] * 1e6, p.variant.c_str());
      report.push_back(line);
      t = seconds[i];
    }
  }
  make_monotone(sol.read);
  make_monotone(sol.copy);
  return report;
}

}  // namespace kb
