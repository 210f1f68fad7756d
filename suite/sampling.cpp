#include "suite/sampling.h"

#include <algorithm>

#include "core/record.h"
#include "suite/stats.h"

namespace kb {

EngineOptions effective_options(EngineOptions o) {
  if (o.quick) {
    o.min_samples = std::min(o.min_samples, 5);
    o.max_time_s = std::min(o.max_time_s, 0.15);
    o.max_noise = std::max(o.max_noise, 0.02);
    o.max_buffer_sets = std::min(o.max_buffer_sets, 3);
  }
  return o;
}

bool warmup_done(int runs, double elapsed_s, bool decode) {
  if (decode) return runs >= 1;
  if (runs >= kWarmupMax) return true;
  return runs >= kWarmupMin && elapsed_s >= kWarmupSeconds;
}

bool sample_throttled(std::optional<double> clk, std::optional<double> max_clk) {
  return clk && max_clk && *clk < kThrottleClockFraction * *max_clk;
}

bool point_throttled(size_t throttled, size_t total) { return throttled * 2 > total; }

const std::vector<double>& samples_to_use(const std::vector<double>& good,
                                          const std::vector<double>& all) {
  return !good.empty() && good.size() * 2 >= all.size() ? good : all;
}

double cool_gap_seconds(double sample_s) { return sample_s >= kCoolSampleSeconds ? sample_s : 0; }

bool stop_sampling(const EngineOptions& o, size_t taken, const std::vector<double>& good,
                   double elapsed_s, size_t sets) {
  if (taken >= static_cast<size_t>(o.max_samples)) return true;
  if (elapsed_s > o.max_time_s && taken >= 3) return true;
  sets = std::max<size_t>(sets, 1);
  if (taken % sets != 0) return false;  // only after whole rounds
  const size_t n = good.size();
  const size_t min = std::max(static_cast<size_t>(o.min_samples), 3 * sets);
  return n >= min && summarize(good).median_rel_err <= o.max_noise;
}

int buffer_sets(size_t case_bytes, size_t free_bytes, size_t total_bytes, int max_sets,
                size_t goal_bytes) {
  if (max_sets <= 1) return 1;
  if (case_bytes == 0) return max_sets;  // nothing measurable allocated: small
  const size_t wanted = std::max<size_t>(3, (goal_bytes + case_bytes - 1) / case_bytes);
  const size_t by_total = total_bytes / 4 / case_bytes;
  const size_t by_free = 1 + free_bytes / 2 / case_bytes;  // the first set is already built
  const size_t n = std::min({static_cast<size_t>(max_sets), wanted, by_total, by_free});
  return static_cast<int>(std::max<size_t>(n, 1));
}

std::string inject_field(double fraction) {
  return format_double("inject=%g%%scaled", fraction * 100);
}

}  // namespace kb
