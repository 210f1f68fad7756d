// Sample statistics for the engine: robust (median/MAD) first, because GPU
// timings have a long right tail (a preempted launch, a clock dip).
#pragma once

#include <cstddef>
#include <vector>

namespace kb {

struct Summary {
  size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0;
  double mad = 0;        // median absolute deviation from the median
  double noise_rel = 0;  // 1.4826 * MAD / median: a robust coefficient of variation
  // Relative standard error of the median, 1.2533 * 1.4826 * MAD / sqrt(n) / median.
  double median_rel_err = 0;
};

// Linear-interpolated quantile (q in [0,1]) of unsorted data; 0 for empty.
double quantile(std::vector<double> v, double q);
double median(std::vector<double> v);
Summary summarize(const std::vector<double>& v);

}  // namespace kb
