// Which rows and columns the checks of large outputs look at
// (kernels/common/index_sample.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "kernels/common/index_sample.h"

namespace {

TEST(IndexSample, SomeIndicesWithTheEdges) {
  const auto v = kb::sample_indices(1000, 10, 7);
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v.front(), 0);
  EXPECT_EQ(v.back(), 999);
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  EXPECT_EQ(std::set<int64_t>(v.begin(), v.end()).size(), v.size());
  EXPECT_EQ(kb::sample_indices(5, 10, 7), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(kb::sample_indices(1000, 10, 7), v);  // seeded
  EXPECT_NE(kb::sample_indices(1000, 10, 8), v);
  EXPECT_TRUE(kb::sample_indices(0, 10, 7).empty());
}

TEST(IndexSample, EveryBandHasItsShare) {
  // 14336 columns in bands of 128: 2 in each of the 112 bands, and the
  // first and last column (each in a band already, so 224 to 226 in all).
  const auto v = kb::sample_per_band(14336, 128, 2, 3);
  EXPECT_EQ(v.front(), 0);
  EXPECT_EQ(v.back(), 14335);
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  EXPECT_EQ(std::set<int64_t>(v.begin(), v.end()).size(), v.size());
  std::vector<int> per(112, 0);
  for (int64_t i : v) ++per[static_cast<size_t>(i / 128)];
  for (size_t b = 0; b < per.size(); ++b) {
    EXPECT_GE(per[b], 2) << "band " << b;
    EXPECT_LE(per[b], 4) << "band " << b;
  }
  EXPECT_GE(v.size(), 224u);
  EXPECT_LE(v.size(), 226u);
  // A last band narrower than the share, a range narrower than a band, and
  // a band no wider than the share: all of them.
  const auto tail = kb::sample_per_band(129, 128, 2, 3);
  EXPECT_TRUE(std::count(tail.begin(), tail.end(), 128) == 1);
  EXPECT_EQ(kb::sample_per_band(16, 128, 16, 3).size(), 16u);
  EXPECT_EQ(kb::sample_per_band(1, 128, 2, 3), (std::vector<int64_t>{0}));
  EXPECT_EQ(kb::sample_per_band(6, 2, 2, 3), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(kb::sample_per_band(14336, 128, 2, 3), v);  // seeded
  EXPECT_TRUE(kb::sample_per_band(0, 128, 2, 3).empty());
  EXPECT_TRUE(kb::sample_per_band(10, 0, 2, 3).empty());
}

}  // namespace
