#include "suite/roofline.h"

#include <algorithm>
#include <stdexcept>

#include "reports/metrics.h"

namespace kb {

double Ceilings::peak_ops(DType d) const {
  switch (d) {
    case DType::bf16:
      return bf16_tflops * 1e12;
    case DType::f16:
      return (f16_tflops > 0 ? f16_tflops : bf16_tflops) * 1e12;
    case DType::f32:
      return f32_tflops * 1e12;
    case DType::i8:
      return int8_tops * 1e12;
    case DType::fp8_e4m3:
      return fp8_tflops * 1e12;
  }
  return 0;
}

const char* limiter_name(Limiter l) {
  switch (l) {
    case Limiter::memory:
      return "memory";
    case Limiter::compute:
      return "compute";
    case Limiter::launch:
      return "launch";
  }
  return "?";
}

Roofline roofline(const Work& w, const Ceilings& c) {
  double t_mem = 0, t_flop = 0;
  if (w.bytes > 0) {
    double bw = c.bandwidth_gbps(w.bound);
    if (bw <= 0) throw std::invalid_argument("no measured bandwidth ceiling for this GPU");
    t_mem = w.bytes / (bw * 1e9);
  }
  if (w.flops > 0) {
    double peak = c.peak_ops(w.flop_dtype);
    if (peak <= 0)
      throw std::invalid_argument(std::string("no peak for ") + dtype_name(w.flop_dtype) +
                                  " on this GPU");
    t_flop = w.flops / peak;
  }
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

std::optional<double> metric_value(Metric m, const Work& w, double t_s, double setup_s,
                                   const Ceilings& c) {
  if (m == Metric::compilation_time) return setup_s;
  if (!(t_s > 0)) return std::nullopt;
  switch (m) {
    case Metric::memory_bandwidth:
      return w.bytes / t_s / 1e9;
    case Metric::memory_bandwidth_kv:
      return (w.bytes + w.kv_bytes) / t_s / 1e9;
    case Metric::flops_utilization: {
      double peak = c.peak_ops(w.flop_dtype);
      if (peak <= 0) return std::nullopt;
      return w.flops / t_s / peak;
    }
    case Metric::tflops:
      return w.flops / t_s / 1e12;
    case Metric::token_per_sec:
      return w.steps / t_s;
    case Metric::latency_us:
      return t_s * 1e6 / std::max(w.steps, 1.0);
    case Metric::compilation_time:
      break;
  }
  return std::nullopt;
}

std::optional<double> roofline_value(Metric m, const Work& w, const Ceilings& c) {
  if (m == Metric::compilation_time) return std::nullopt;
  Work wk = w;
  if (m == Metric::memory_bandwidth_kv) wk.bytes = w.bytes + w.kv_bytes;
  return metric_value(m, w, roofline(wk, c).t_min_s, 0, c);
}

// The direction is the gate's (reports/metrics.h), so the two cannot differ.
bool lower_is_better(Metric m) {
  return metric_direction(metric_csv_name(m)) == Direction::lower_is_better;
}

std::optional<double> roofline_fraction(Metric m, double actual, double roof) {
  if (!(actual > 0) || !(roof > 0)) return std::nullopt;
  return lower_is_better(m) ? roof / actual : actual / roof;
}

}  // namespace kb
