#include "core/roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/metrics.h"

namespace kb {

double FlopPeaks::ops(DType d) const {
  const double by_dtype[] = {bf16_tflops, f16_tflops > 0 ? f16_tflops : bf16_tflops, f32_tflops,
                             int8_tops, fp8_tflops};  // in the order of DType
  return by_dtype[static_cast<int>(d)] * 1e12;
}

const char* limiter_name(Limiter l) {
  static const char* const names[] = {"memory", "compute", "launch"};
  return names[static_cast<int>(l)];
}

std::string ladder_problem(const Ladder& l) {
  if (l.rungs.size() < 2) return "expected at least 2 rungs, got " + std::to_string(l.rungs.size());
  for (size_t i = 0; i < l.rungs.size(); ++i) {
    const auto [b, t] = l.rungs[i];
    const std::string at = "rung " + std::to_string(i) + ": ";
    if (!std::isfinite(b) || !(b > 0)) return at + "bytes must be a finite number > 0";
    if (!std::isfinite(t) || !(t > 0)) return at + "time must be a finite number > 0";
    if (i == 0) continue;
    if (!(b > l.rungs[i - 1].first))
      return at + "bytes not above the previous rung's (the rungs must be in increasing bytes)";
    if (t < l.rungs[i - 1].second)
      return at + "faster than the previous, smaller rung (more bytes never take less time)";
  }
  return "";
}

std::vector<double> ladder_bytes(double max_bytes) {
  // From 1 MB on, a rung at 1.5x between the powers of two: where a copy's
  // output outgrows the L2 its time bends upwards (convex), and a straight
  // line between rungs far apart would lie above it, no longer a bound.
  std::vector<double> out;
  for (double b = 4096; b <= max_bytes; b *= 2) {
    out.push_back(b);
    if (b >= (1 << 20) && 1.5 * b <= max_bytes) out.push_back(1.5 * b);
  }
  return out;
}

void make_monotone(Ladder& l) {
  for (size_t i = l.rungs.size(); i-- > 1;)
    l.rungs[i - 1].second = std::min(l.rungs[i - 1].second, l.rungs[i].second);
}

double Ladder::seconds(double bytes) const {
  if (rungs.size() < 2) throw std::invalid_argument("a ladder needs at least 2 rungs");
  // The segment that holds `bytes`, or the first/last one extended.
  size_t hi = 1;
  while (hi + 1 < rungs.size() && bytes > rungs[hi].first) ++hi;
  const auto [b0, t0] = rungs[hi - 1];
  const auto [b1, t1] = rungs[hi];
  const double t = t0 + (t1 - t0) * (bytes - b0) / (b1 - b0);
  return std::max(0.0, t);
}

double writes_of(const Work& w) {
  if (w.write_bytes >= 0) return std::min(w.write_bytes, w.bytes);
  return w.bound == Bound::copy ? w.bytes / 2 : 0;
}

double ladder_memory_seconds(const SpeedOfLight& l, double reads, double writes) {
  reads = std::max(0.0, reads);
  if (!(writes > 0)) return l.read.seconds(reads);
  if (reads >= writes)
    return l.copy.seconds(2 * writes) +
           std::max(0.0, l.read.seconds(reads) - l.read.seconds(writes));
  return l.copy.seconds(reads + writes);
}

double further_launch_us(const SpeedOfLight& l, bool graph, double link_bytes) {
  const auto& t = graph ? l.graph_node_extra_by_link : l.launch_extra_by_link;
  if (t.empty()) return graph ? l.graph_node_extra_us : l.launch_extra_us;
  double envelope = t.front().second;
  for (const auto& [bytes, us] : t) {
    envelope = std::min(envelope, us);
    if (bytes >= link_bytes) return envelope;
  }
  return envelope;
}

double further_launch_seconds(double chain_s, double one_s, int links) {
  if (links < 2)
    throw std::invalid_argument("a chain needs at least 2 links, got " + std::to_string(links));
  if (!(chain_s > 0) || !(one_s > 0) || !std::isfinite(chain_s) || !std::isfinite(one_s))
    throw std::invalid_argument("chain and one-launch times must be finite and > 0");
  return std::max(0.0, (chain_s - one_s) / (links - 1));
}

namespace {

double flop_seconds(const Work& w, const Ceilings& c) {
  if (!(w.flops > 0)) return 0;
  const double peak = c.ops(w.flop_dtype);
  if (peak <= 0)
    throw std::invalid_argument(std::string("no peak for ") + dtype_name(w.flop_dtype) +
                                " on this GPU");
  return w.flops / peak;
}

// Version 2: the ideal kernels' measured times.
Roofline ladder_roofline(const Work& w, const Ceilings& c) {
  const SpeedOfLight& l = c.ladder;
  const double writes = writes_of(w);
  const double t_mem = ladder_memory_seconds(l, w.bytes - writes, writes);
  const double t_flop = flop_seconds(w, c);
  const double links = std::max(1.0, w.launches);
  const double extra =
      std::max(0.0, w.launches - 1) * further_launch_us(l, w.graph, w.bytes / links) * 1e-6;
  // The fixed part: a launch that moves (almost) nothing, and the further launches.
  const double t_fixed = l.read.seconds(0) + extra;
  Roofline r;
  r.version = 2;
  r.t_min_s = std::max(t_mem, t_flop) + extra;
  if (t_flop > t_mem)
    r.limiter = Limiter::compute;
  else
    r.limiter = t_fixed > r.t_min_s - t_fixed ? Limiter::launch : Limiter::memory;
  return r;
}

// Version 1: bandwidth, peak and launch floor (suite 0.1).
Roofline model_roofline(const Work& w, const Ceilings& c) {
  double t_mem = 0;
  if (w.bytes > 0) {
    double bw = c.bandwidth_gbps(w.bound);
    if (bw <= 0) throw std::invalid_argument("no measured bandwidth ceiling for this GPU");
    t_mem = w.bytes / (bw * 1e9);
  }
  const double t_flop = flop_seconds(w, c);
  double per_launch =
      (w.graph ? c.graph_node_us : c.launch_us) + (w.bytes > 0 ? c.mem_latency_us : 0);
  double t_launch = w.launches * per_launch * 1e-6;
  Roofline r;
  double t_work = std::max(t_mem, t_flop);
  r.t_min_s = t_work + t_launch;
  if (t_launch > t_work)
    r.limiter = Limiter::launch;
  else
    r.limiter = t_flop > t_mem ? Limiter::compute : Limiter::memory;
  return r;
}

std::optional<double> bytes_per_second(const MetricInput& in) {
  return in.work.bytes / in.t_s / 1e9;
}

// The datasheet's dense peak of the dtype, as MFU and the seed's 312 mean
// it; the roofline's (measured) peak is only its ceiling.
std::optional<double> of_datasheet_peak(const MetricInput& in) {
  const double peak = in.ceilings.datasheet.ops(in.work.flop_dtype);
  if (peak <= 0) return std::nullopt;
  return in.work.flops / in.t_s / peak;
}

std::optional<double> tflops_of(const MetricInput& in) { return in.work.flops / in.t_s / 1e12; }
std::optional<double> microseconds(const MetricInput& in) { return in.t_s * 1e6; }
std::optional<double> setup_seconds(const MetricInput& in) { return in.setup_s; }

}  // namespace

Roofline roofline(const Work& w, const Ceilings& c) {
  return c.ladder.present() ? ladder_roofline(w, c) : model_roofline(w, c);
}

const Metric Metric::memory_bandwidth{metric_name::memory_bandwidth, &bytes_per_second};
const Metric Metric::flops_utilization =
    Metric(metric_name::flops_utilization, &of_datasheet_peak)
        .undefined_means("metric undefined for this GPU (no peak for the dtype in the datasheet)");
const Metric Metric::tflops{metric_name::tflops, &tflops_of};
const Metric Metric::latency_us{metric_name::latency_us, &microseconds};
const Metric Metric::compilation_time =
    Metric(metric_name::compilation_time, &setup_seconds).untimed();

std::optional<double> metric_value(const Metric& m, const MetricInput& in) {
  if (m.timed && !(in.t_s > 0)) return std::nullopt;
  return m.value(in);
}

std::optional<double> roofline_value(const Metric& m, const Work& w, const Ceilings& c) {
  if (!m.has_roofline) return std::nullopt;
  return metric_value(m, {w, roofline(m.roofline_work ? m.roofline_work(w) : w, c).t_min_s, c});
}

std::optional<double> roofline_fraction(const std::string& metric, double actual, double roof) {
  if (!(actual > 0) || !(roof > 0)) return std::nullopt;
  return lower_is_better(metric) ? roof / actual : actual / roof;
}

std::string unresolved_latency(double cold_read_us, double one_block_us) {
  if (cold_read_us > one_block_us) return "";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "not resolved this run: the cold one-vector read (%.3f us) was not slower than an "
                "empty one-block kernel (%.3f us); the roofline takes the target file's "
                "measured.mem_latency_us, else none",
                cold_read_us, one_block_us);
  return buf;
}

}  // namespace kb
