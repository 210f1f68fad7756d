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

// Samples of at least `from_s` (kCoolSampleSeconds) are each followed by an
// idle gap as long as the sample: compute-bound kernels run back to back
// reach the board's power limit within a point and their clocks sag by up
// to 10% (invisible to the SM clock read after the sample), at a different
// sample in each run; at half duty each sample starts from the same state.
// The threshold is low enough to take in the 0.4 ms `mlp tokens=4096;D=1024`
// (with its 0.3 ms companion), which showed the same whole-point slow states
// (H100, 12 runs each way on one board: run-to-run noise 0.72% back to back,
// 0.35% with the gap). Shorter samples stay back to back: a gap after every
// sample left the 18 gemv keys no quieter on the whole (quieter on 5,
// noisier on 9; docs/decisions/0002-idle-gap-after-long-samples.md).
inline constexpr double kCoolSampleSeconds = 100e-6;
double cool_gap_seconds(double sample_s, double from_s = kCoolSampleSeconds);

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

// How an injected slowdown of `fraction` is made for a point whose sample
// takes `base_s`: a spin of `cycles` SM cycles inside the timed window, on
// top of the `overhead_s` an empty delay launch adds; where that overhead
// alone exceeds the slowdown (a few-microsecond kernel), no spin (cycles =
// -1) and each sample is scaled by 1 + fraction instead.
struct InjectPlan {
  int64_t cycles = -1;  // -1: no delay kernel
  double scale = 1;     // applied to each sample's time
};
InjectPlan plan_injection(double fraction, double base_s, double overhead_s, double cycles_per_s);

// Whether a planned spin made samples of `base_s` take `with_spin_s`, within
// a quarter of the slowdown asked for (else the engine scales instead).
bool injection_on_target(double fraction, double base_s, double with_spin_s);

// The variant field that marks an injected row: "inject=5%" (scaled:
// "inject=5%scaled").
std::string inject_field(double fraction, const InjectPlan& plan);

}  // namespace kb
