// Roofline math: the fastest time the hardware allows for a row's Work
// (version 2 from the target file's measured ladder, version 1 without one),
// and the metrics' values at a time. docs/metrics.md "The roofline".
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics.h"
#include "core/types.h"

namespace kb {

// How far above 1.0 a roofline_fraction may read and still be noise (the
// ideal kernels' process-to-process spread); a row above it says so.
inline constexpr double kRooflineNoise = 1.02;

// One launch of an ideal kernel: rungs of (bytes moved, seconds).
struct Ladder {
  std::vector<std::pair<double, double>> rungs;
  bool empty() const { return rungs.empty(); }
  // Piecewise linear, the end segments extended (floored at 0).
  double seconds(double bytes) const;
};

// "" for a usable ladder (two or more rungs, finite values > 0, bytes
// increasing, seconds non-decreasing), else what is wrong.
std::string ladder_problem(const Ladder& l);

// The byte counts a probe measures: 4 KB x 2^k up to `max_bytes`, from 1 MB
// on 1.5 x 2^k between them.
std::vector<double> ladder_bytes(double max_bytes);

// Each rung's time the fastest at its count or any larger one, so that the
// ladder stays a bound where noise makes it dip.
void make_monotone(Ladder& l);

// The empirical speed of light (`measured.ladder` of a target file).
struct SpeedOfLight {
  Ladder read;                     // the ideal read-only kernel; bytes read
  Ladder copy;                     // the ideal copy kernel; bytes read + written (half each)
  double launch_extra_us = 0;      // each further kernel launch in one run() (the smallest)
  double graph_node_extra_us = 0;  // each further node of a replayed graph (the smallest)
  // The same by the bytes of one link ([link bytes, us]; optional): a
  // further launch costs more the less its kernel moves.
  std::vector<std::pair<double, double>> launch_extra_by_link, graph_node_extra_by_link;
  bool present() const { return !read.empty() && !copy.empty(); }
};

// The cost in us of each further launch (graph node with `graph`) of a
// chain whose kernels move `link_bytes` each (the per-link table where given).
double further_launch_us(const SpeedOfLight& l, bool graph, double link_bytes);

// (chain_s - one_s) / (links - 1), never below 0: the chain's own row gets
// t_min = chain_s. Throws std::invalid_argument for bad input.
double further_launch_seconds(double chain_s, double one_s, int links);

// "" when the cold one-vector read was slower than the empty kernel (the HBM
// round trip is their difference), else why the figure is missing.
std::string unresolved_latency(double cold_read_us, double one_block_us);

// Dense tensor-core peaks of a datasheet (TFLOP/s or TOP/s).
struct FlopPeaks {
  double bf16_tflops = 0, f16_tflops = 0, f32_tflops = 0, int8_tops = 0, fp8_tflops = 0;
  // ops/s of a dtype (f16 falls back to bf16); 0 when unknown.
  double ops(DType d) const;
};

// FlopPeaks: the peaks the roofline uses (measured where known).
struct Ceilings : FlopPeaks {
  double read_gbps = 0;        // read-only kernel bandwidth (GB/s, 1e9)
  double copy_gbps = 0;        // copy bandwidth, bytes read + written
  double launch_us = 0;        // event-timed empty kernel
  double graph_node_us = 0;    // per node of a captured graph
  double mem_latency_us = 0;   // HBM round trip on a cold L2, paid by each launch that moves bytes
  double probe_launch_us = 0;  // this run's probe, 0 if none: the host's targets (decisions/0055)
  FlopPeaks datasheet;         // what flops_utilization divides by (the MFU convention)
  SpeedOfLight ladder;         // roofline version 2 where present

  double bandwidth_gbps(Bound b) const { return b == Bound::copy ? copy_gbps : read_gbps; }
};

enum class Limiter { memory, compute, launch };
const char* limiter_name(Limiter l);  // "memory", "compute", "launch"

struct Roofline {
  double t_min_s = 0;
  Limiter limiter = Limiter::memory;
  int version = 1;  // 2: built from the ladder; 1: the model of suite 0.1
};

// `write_bytes` where declared, else half the bytes for Bound::copy.
double writes_of(const Work& w);

// The ladder's time for one launch's reads and writes (docs/metrics.md).
double ladder_memory_seconds(const SpeedOfLight& l, double reads, double writes);

// Throws std::invalid_argument when the ceilings this work needs are zero.
Roofline roofline(const Work& w, const Ceilings& c);

// What a metric's value is computed from: one run() of `work` that took
// `t_s` (the roofline: its t_min), and what the engine timed beside it.
struct MetricInput {
  const Work& work;
  double t_s = 0;
  const Ceilings& ceilings;
  double setup_s = 0;                     // the Case's construction
  std::optional<double> companion_ratio;  // Case::companion's time / run()'s
};

// A metric of a point's rows: its CSV name (the unit gives its direction)
// and its value from the time and the Work. An experiment may declare its
// own; constant-initialized, so that static registrars may copy them.
struct Metric {
  using Value = std::optional<double> (*)(const MetricInput&);
  constexpr Metric(const char* csv_name, Value f) : name(csv_name), value(f) {}
  // No roofline, so no roofline_fraction (a ratio of two times).
  constexpr Metric without_roofline() const {
    Metric m = *this;
    m.has_roofline = false;
    return m;
  }
  // Not a measure of the timed run() (a setup time): no roofline, and
  // without the mark of an injected slowdown.
  constexpr Metric untimed() const {
    Metric m = without_roofline();
    m.timed = false;
    return m;
  }
  // The roofline is the value at the t_min of `f(work)`, for a metric that
  // counts more than the work's bytes (decode's KV cache).
  constexpr Metric bounded_by(Work (*f)(const Work&)) const {
    Metric m = *this;
    m.roofline_work = f;
    return m;
  }
  // The message of a row whose value is undefined (value() gave nullopt).
  constexpr Metric undefined_means(const char* why) const {
    Metric m = *this;
    m.undefined = why;
    return m;
  }

  const char* name;
  Value value;
  bool has_roofline = true;
  bool timed = true;
  Work (*roofline_work)(const Work&) = nullptr;
  const char* undefined = "metric undefined";

  static const Metric memory_bandwidth;   // bytes / t / 1e9
  static const Metric flops_utilization;  // flops / t / the datasheet's peak of flop_dtype
  static const Metric tflops;             // flops / t / 1e12
  static const Metric latency_us;         // t in us
  static const Metric compilation_time;   // the setup time in s
};

// The metric's value; nullopt where undefined (a timed metric of no time).
std::optional<double> metric_value(const Metric& m, const MetricInput& in);

// The attainable value of `m` (its value at t_min); nullopt without one.
std::optional<double> roofline_value(const Metric& m, const Work& w, const Ceilings& c);

// actual / roofline for rates; roofline / actual for times, so that 1.0 is
// always the limit and larger is closer to it.
std::optional<double> roofline_fraction(const std::string& metric, double actual, double roofline);

}  // namespace kb
