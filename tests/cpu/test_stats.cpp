#include <gtest/gtest.h>

#include <cmath>

#include "suite/stats.h"

TEST(Stats, MedianAndQuantiles) {
  EXPECT_DOUBLE_EQ(kb::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(kb::median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(kb::quantile({10, 20, 30, 40, 50}, 0.25), 20);
  EXPECT_DOUBLE_EQ(kb::quantile({}, 0.5), 0);
}

TEST(Stats, SummaryIsRobustToOneOutlier) {
  std::vector<double> v(99, 10.0);
  for (size_t i = 0; i < v.size(); ++i) v[i] += (i % 3) * 0.1;  // 10.0, 10.1, 10.2 ...
  v.push_back(1000.0);                                          // one preempted launch
  auto s = kb::summarize(v);
  EXPECT_EQ(s.n, 100u);
  EXPECT_DOUBLE_EQ(s.median, 10.1);
  EXPECT_DOUBLE_EQ(s.max, 1000.0);
  EXPECT_DOUBLE_EQ(s.min, 10.0);
  EXPECT_NEAR(s.mad, 0.1, 1e-12);
  EXPECT_NEAR(s.noise_rel, 1.4826 * 0.1 / 10.1, 1e-12);
  EXPECT_GT(s.mean, 19.0);  // the mean is dragged by the outlier; the median is not
  EXPECT_NEAR(s.median_rel_err, 1.2533 * s.noise_rel / 10.0, 1e-12);
}

TEST(Stats, MedianErrorFallsWithSamples) {
  std::vector<double> few = {1.0, 1.1, 0.9, 1.05, 0.95};
  std::vector<double> many;
  for (int i = 0; i < 20; ++i) many.insert(many.end(), few.begin(), few.end());
  EXPECT_NEAR(kb::summarize(few).noise_rel, kb::summarize(many).noise_rel, 1e-12);
  EXPECT_LT(kb::summarize(many).median_rel_err, kb::summarize(few).median_rel_err / 4);
}
