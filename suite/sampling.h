// How the engine samples one point, as pure functions the CPU tests check:
// the options (and what --quick makes of them), which samples count as
// throttled, which samples the statistics use, and when to stop sampling.
// The engine (suite/engine.cpp) only measures and asks these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kb {

inline constexpr size_t kSampledBytesGoal = size_t{4} << 30;

struct EngineOptions {
  bool quick = false;         // smoke run: fewer samples, shorter budget
  double max_noise = 0.0025;  // stop when the median's relative std. error is under this
  double max_time_s = 1.0;    // sampling budget per point (wall clock)
  int min_samples = 20;
  int max_samples = 5000;
  uint64_t seed = 0;  // 0 = derive from the clock (fresh data every run)
  // Kernel-protocol points are sampled round-robin over several
  // independently built cases (own allocations each), as many as it takes
  // to sample kSampledBytesGoal (at least 3, at most this many): where an
  // allocation lands in HBM moves some kernels by up to 10%, and a row
  // averages that placement over many allocations (docs/measuring.md).
  int max_buffer_sets = 32;
  size_t sampled_bytes_goal = kSampledBytesGoal;  // --buffer-mib
  // Check the first buffer set against the CPU before sampling. Off only
  // in the further worker processes of a point the run's first process
  // checked (kbench run --processes, suite/runner.h).
  bool check = true;
  // Validation of the gate only (--inject-slowdown): every sample made this
  // fraction slower; 0 = off.
  double inject_slowdown = 0;
  // --detail: every row's message lists each buffer set's and worker
  // process's median and the NVML slowdown reasons seen after its samples.
  bool detail = false;
};

// --quick: at most 5 samples before the noise test may stop, a 0.15 s
// budget, and a noise bound of at least 2%.
EngineOptions effective_options(EngineOptions o);

// Warm-up runs before sampling: at least 3, then until 20 ms have passed,
// at most 50 (decode: exactly 1, its run is long).
inline constexpr int kWarmupMin = 3;
inline constexpr int kWarmupMax = 50;
inline constexpr double kWarmupSeconds = 0.02;
bool warmup_done(int runs, double elapsed_s, bool decode);

// A sample is throttled when the SM clock read right after it is under this
// fraction of the GPU's maximum SM clock (nvbench uses the same idea).
inline constexpr double kThrottleClockFraction = 0.75;
bool sample_throttled(std::optional<double> sm_clock_mhz, std::optional<double> max_sm_clock_mhz);
// A point is throttled when more than half of its samples were.
bool point_throttled(size_t throttled, size_t total);
// The samples the statistics use: the non-throttled ones, unless they are
// fewer than half of all (then all: the point is reported throttled).
const std::vector<double>& samples_to_use(const std::vector<double>& good,
                                          const std::vector<double>& all);

// Samples of at least kCoolSampleSeconds are each followed by an idle gap
// as long as the sample: compute-bound kernels run back to back reach the
// board's power limit within a point and their clocks sag, at a different
// sample in each run; at half duty each sample starts from the same state.
// Shorter samples stay back to back
// (docs/decisions/0002-idle-gap-after-long-samples.md).
inline constexpr double kCoolSampleSeconds = 100e-6;
double cool_gap_seconds(double sample_s);

// Whether a kernel-protocol point has sampled enough, after `taken` samples
// (round-robin over `sets` buffer sets) of which `good` are not throttled,
// `elapsed_s` into sampling: the budget is spent (and at least 3 samples
// taken), or max_samples reached, or, at the end of a round (every set
// sampled equally often), at least min_samples good ones and 3 per set whose
// median's relative standard error is under max_noise.
bool stop_sampling(const EngineOptions& o, size_t taken, const std::vector<double>& good,
                   double elapsed_s, size_t sets = 1);

// How many buffer sets (independently built cases) a point rotates over,
// given what the first one took of the GPU's memory: enough to sample
// kSampledBytesGoal, at least 3, at most `max_sets`, all of them within a
// quarter of the GPU's memory and half of what is free.
int buffer_sets(size_t case_bytes, size_t free_bytes, size_t total_bytes, int max_sets,
                size_t goal_bytes = kSampledBytesGoal);

// The variant field that marks an injected row: "inject=5%scaled" (each
// sample's time scaled by 1 + fraction;
// docs/decisions/0010-injected-slowdown-scales-samples.md).
std::string inject_field(double fraction);

}  // namespace kb
