// How the engine samples a point, as pure functions the CPU tests check.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kb {

// Wall-clock seconds since `t0`.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline constexpr size_t kSampledBytesGoal = size_t{4} << 30;

struct EngineOptions {
  bool quick = false;         // smoke run: fewer samples, shorter budget
  double max_noise = 0.0025;  // stop when the median's relative std. error is under this
  double max_time_s = 1.0;    // sampling budget per point (wall clock)
  int min_samples = 20;
  int max_samples = 5000;
  uint64_t seed = 0;  // 0 = derive from the clock (fresh data every run)
  // Buffer sets a kernel point rotates over at most: where an allocation
  // lands in HBM moves some kernels by up to 10% (docs/measuring.md).
  int max_buffer_sets = 32;
  size_t sampled_bytes_goal = kSampledBytesGoal;  // --buffer-mib
  bool check = true;           // off in a point's further processes: the first checked
  double inject_slowdown = 0;  // --inject-slowdown: each sample this fraction slower
  bool detail = false;         // --detail: the sets', processes' medians and NVML reasons
};

// --quick: 5 samples, a 0.15 s budget, a noise bound of at least 2%.
EngineOptions effective_options(EngineOptions o);

// Warm-up: at least 3 runs, then until 20 ms, at most 50 (decode: 1).
inline constexpr int kWarmupMin = 3;
inline constexpr int kWarmupMax = 50;
inline constexpr double kWarmupSeconds = 0.02;
bool warmup_done(int runs, double elapsed_s, bool decode);

// A sample is throttled when the SM clock after it is under this fraction
// of the maximum (as nvbench).
inline constexpr double kThrottleClockFraction = 0.75;
bool sample_throttled(std::optional<double> sm_clock_mhz, std::optional<double> max_sm_clock_mhz);
// A point is throttled when more than half of its samples were.
bool point_throttled(size_t throttled, size_t total);
// The non-throttled samples, unless fewer than half (then all).
const std::vector<double>& samples_to_use(const std::vector<double>& good,
                                          const std::vector<double>& all);

// Samples of at least kCoolSampleSeconds are followed by an idle gap as
// long (the same power state for each: docs/decisions/0002).
inline constexpr double kCoolSampleSeconds = 100e-6;
double cool_gap_seconds(double sample_s);

// Enough samples: the budget spent (3 at least), max_samples, or at the end
// of a round over the `sets` min_samples good ones (3 a set) under max_noise.
bool stop_sampling(const EngineOptions& o, size_t taken, const std::vector<double>& good,
                   double elapsed_s, size_t sets = 1);

// Buffer sets for a point whose first took `case_bytes`: enough for
// `goal_bytes`, 3 to `max_sets`, within a quarter of memory and half the free.
int buffer_sets(size_t case_bytes, size_t free_bytes, size_t total_bytes, int max_sets,
                size_t goal_bytes = kSampledBytesGoal);

// "inject=5%scaled": the variant field of an injected row (docs/decisions/0010).
std::string inject_field(double fraction);

}  // namespace kb
