// Roofline math (docs/metrics.md "The roofline"): the fastest time the hardware
// allows for a row's Work, and each metric's value at a given time.
//
// Two models. Where the GPU's target file has a speed-of-light ladder
// (`measured.ladder`: the probe's ideal read and copy kernels timed as
// experiments are, cold, over a ladder of byte counts), the roofline is built
// from it (version 2, the default since suite 0.2.0):
//
//   t_min = max(t_mem(reads, writes), flops / peak(flop_dtype)) + (launches - 1) * t_extra
//
// t_mem interpolates the ladders (one launch, its launch floor, first HBM
// round trip and, for outputs smaller than L2, the write-back that lands
// after the timed window all included, as the ideal kernels paid them);
// t_extra is what each further launch (or graph node) of ideal kernels
// measured. Without a ladder, the model of suite 0.1 (version 1):
//
//   t_min = max(bytes / bandwidth(bound), flops / peak(flop_dtype)) + t_launch
//
// with the launch floor the event-timed duration of an empty kernel (or one
// graph node) plus, for work that moves bytes, one HBM round trip, times the
// launches in one run.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics.h"
#include "core/types.h"

namespace kb {

// How far above 1.0 a row's roofline_fraction may read and still be noise
// (docs/metrics.md: no row above it; the ideal kernels' process-to-process
// spread, e.g. a 64 KB cudaMemcpy at 0.99-1.02 of its own rung). A row
// above it says so in its message; one at 1.0-1.02 is at the bound.
inline constexpr double kRooflineNoise = 1.02;

// The time one launch of an ideal kernel took, by bytes moved: rungs of
// (bytes, seconds), bytes strictly increasing, seconds non-decreasing.
struct Ladder {
  std::vector<std::pair<double, double>> rungs;
  bool empty() const { return rungs.empty(); }
  // Piecewise linear in bytes between rungs; below the first rung the first
  // segment extended (floored at 0), above the last the last segment
  // extended (its slope is the bandwidth of the largest transfers).
  // Needs at least two rungs (ladder_problem() == "").
  double seconds(double bytes) const;
};

// "" for a usable ladder, else what is wrong: "rung 3: bytes 4096 not above
// the previous rung's 8192". At least two rungs, every value finite and > 0,
// bytes strictly increasing, seconds non-decreasing (more bytes never take
// less time: a probe keeps the faster time for the smaller count).
std::string ladder_problem(const Ladder& l);

// The byte counts a probe measures: 4 KB x 2^k up to `max_bytes`, and from
// 1 MB on 1.5 x 2^k between them.
std::vector<double> ladder_bytes(double max_bytes);

// Makes each rung's time the fastest at its count or any larger one (more
// bytes never take less time: the smaller count could have been moved as
// fast), so that a ladder stays a bound where noise makes it dip.
void make_monotone(Ladder& l);

// The empirical speed of light (`measured.ladder` of a target file).
struct SpeedOfLight {
  Ladder read;                     // the ideal read-only kernel; bytes read
  Ladder copy;                     // the ideal copy kernel; bytes read + written (half each)
  double launch_extra_us = 0;      // each further kernel launch in one run() (the smallest)
  double graph_node_extra_us = 0;  // each further node of a replayed graph (the smallest)
  // The same by the bytes of one link of the chain ([link bytes, us], bytes
  // increasing; optional: files probed by older suites have only the scalars): a
  // further launch costs more the less its kernel moves (H100: +3.6 us a
  // stream launch at 1 MB links, +2.9 at 8-64 MB).
  std::vector<std::pair<double, double>> launch_extra_by_link, graph_node_extra_by_link;
  bool present() const { return !read.empty() && !copy.empty(); }
};

// The cost of each further launch (graph node with `graph`) of a chain whose
// kernels move `link_bytes` each, in us. Without a table, the scalar. With
// one: its values made non-increasing with the bytes (each the smallest at
// its link size or any smaller one), then the first entry at or above
// `link_bytes` (the last entry beyond them). A bound where the cost does not
// grow with the bytes a link moves; equal to the measurement at a measured size
// that is not above a smaller size's.
double further_launch_us(const SpeedOfLight& l, bool graph, double link_bytes);

// What each further launch (graph node) of a chain of `links` costs, from
// the chain's measured time and the ladder's one launch of the chain's
// bytes: (chain_s - one_s) / (links - 1), never below 0. It is measured so
// that the row of that very chain gets t_min = one_s + (links - 1) * extra
// = chain_s: at a measured link size the bound is the probe's median of the
// chain, so the probe must time the chain exactly as the row is timed (the
// ladder probe samples roofline_ideal's own chain points). Throws
// std::invalid_argument for fewer than 2 links or a time that is not > 0.
double further_launch_seconds(double chain_s, double one_s, int links);

// The probe's HBM round trip is a difference of two event-timed medians (a
// one-vector read on a cold L2 minus an empty one-block kernel, each ~3 us
// in 32 ns event steps); where the read was not slower it was not resolved
// (H100: 0 us in 1 of 20 runs, 0.25-0.45 in the others). ""
// when `cold_read_us` > `one_block_us`, else why the figure is missing.
std::string unresolved_latency(double cold_read_us, double one_block_us);

// Dense tensor-core peaks of a datasheet (TFLOP/s or TOP/s).
struct FlopPeaks {
  double bf16_tflops = 0, f16_tflops = 0, f32_tflops = 0, int8_tops = 0, fp8_tflops = 0;
  // ops/s of a dtype (f16 falls back to bf16); 0 when unknown.
  double ops(DType d) const;
};

struct Ceilings {
  double read_gbps = 0;    // read-only kernel bandwidth (GB/s, 1e9)
  double copy_gbps = 0;    // copy bandwidth, bytes read + written
  double bf16_tflops = 0;  // dense tensor-core peaks the roofline uses (measured where known)
  double f16_tflops = 0;
  double f32_tflops = 0;
  double int8_tops = 0;
  double fp8_tflops = 0;
  double launch_us = 0;       // event-timed empty kernel
  double graph_node_us = 0;   // per node of a captured graph
  double mem_latency_us = 0;  // HBM round trip on a cold L2, paid by each launch that moves bytes
  FlopPeaks datasheet;        // what flops_utilization divides by (the MFU convention)
  SpeedOfLight ladder;        // roofline version 2 where present

  double bandwidth_gbps(Bound b) const { return b == Bound::copy ? copy_gbps : read_gbps; }
  // Peak ops/s of a dtype for the roofline; 0 when unknown.
  double peak_ops(DType d) const;
};

enum class Limiter { memory, compute, launch };
const char* limiter_name(Limiter l);  // "memory", "compute", "launch"

struct Roofline {
  double t_min_s = 0;
  Limiter limiter = Limiter::memory;
  int version = 1;  // 2: built from the ladder; 1: the model of suite 0.1
};

// The bytes of `w` that are writes: `write_bytes` where declared, else half
// the bytes for Bound::copy and none for Bound::read.
double writes_of(const Work& w);

// The ladder's time for `reads` bytes read and `writes` bytes written by one
// launch: the read ladder when nothing is written; the copy of the written
// bytes plus what the further reads add on the read ladder when reads >=
// writes; the copy ladder at reads + writes otherwise.
double ladder_memory_seconds(const SpeedOfLight& l, double reads, double writes);

// Throws std::invalid_argument when the ceilings this work needs are zero.
Roofline roofline(const Work& w, const Ceilings& c);

// What a metric's value is computed from: one run() of `work` that took
// `t_s` seconds (for the roofline: its t_min), and what the engine timed
// beside it.
struct MetricInput {
  const Work& work;
  double t_s = 0;
  const Ceilings& ceilings;
  double setup_s = 0;                     // the Case's construction
  std::optional<double> companion_ratio;  // Case::companion's time / run()'s
};

// One metric a point's rows report, one row each (docs/metrics.md), as
// Google Benchmark's counters and nvbench's summaries: a name (its unit in
// it, which also gives its direction: metric_direction) and how its value
// follows from the time and the declared Work. The generic ones are here;
// an experiment declares its own in its file. Plain data and function
// pointers, so that an experiment registered at static initialization may
// copy them.
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
