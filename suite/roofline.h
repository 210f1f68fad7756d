// Roofline math (docs/metrics.md "The roofline"): the fastest time the hardware
// allows for a row's Work, and each metric's value at a given time.
//
//   t_min = max(bytes / bandwidth(bound), flops / peak(flop_dtype)) + t_launch
//
// with the measured ceilings of the GPU's target file. The launch floor is
// the event-timed duration of an empty kernel (or of one graph node for
// graph-launched work) plus, for work that moves bytes, one HBM round trip
// (no kernel gets its first byte sooner), times the launches in one run.
#pragma once

#include <optional>
#include <string>

#include "suite/types.h"

namespace kb {

struct Ceilings {
  double read_gbps = 0;    // read-only kernel bandwidth (GB/s, 1e9)
  double copy_gbps = 0;    // copy bandwidth, bytes read + written
  double bf16_tflops = 0;  // dense tensor-core peaks (TFLOP/s or TOP/s)
  double f16_tflops = 0;
  double f32_tflops = 0;
  double int8_tops = 0;
  double fp8_tflops = 0;
  double launch_us = 0;       // event-timed empty kernel
  double graph_node_us = 0;   // per node of a captured graph
  double mem_latency_us = 0;  // HBM round trip on a cold L2, paid by each launch that moves bytes

  double bandwidth_gbps(Bound b) const { return b == Bound::copy ? copy_gbps : read_gbps; }
  // Peak ops/s of a dtype; 0 when unknown.
  double peak_ops(DType d) const;
};

enum class Limiter { memory, compute, launch };
const char* limiter_name(Limiter l);  // "memory", "compute", "launch"

struct Roofline {
  double t_min_s = 0;
  Limiter limiter = Limiter::memory;
};

// Throws std::invalid_argument when the ceilings this work needs are zero.
Roofline roofline(const Work& w, const Ceilings& c);

// The value of `metric` for one run() that took `t_s` seconds; `setup_s` is
// the case's setup time (compilation_time). nullopt when undefined (e.g.
// flops_utilization without a peak for the dtype).
std::optional<double> metric_value(Metric m, const Work& w, double t_s, double setup_s,
                                   const Ceilings& c);

// The attainable value of `metric` (the metric at t_min); nullopt for
// metrics that have no roofline (compilation_time).
std::optional<double> roofline_value(Metric m, const Work& w, const Ceilings& c);

bool lower_is_better(Metric m);

// actual / roofline for rates; roofline / actual for times, so that 1.0 is
// always the limit and larger is closer to it.
std::optional<double> roofline_fraction(Metric m, double actual, double roofline);

}  // namespace kb
