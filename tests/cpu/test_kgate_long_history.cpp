// kgate on a long history: `noise` and `compare` take every run of a key,
// so their work must grow with the runs, not with their square (a key of
// 200,000 runs here; a million-row history of few keys in practice). The
// bounds are generous: linear work takes a second; the all-pairs work
// takes hours (noise) or more memory than the machine has (compare's Qn).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/gen_history.h"
#include "tests/support/simulate.h"
#include "tools/kgate/compare.h"
#include "tools/kgate/history_rule.h"
#include "tools/kgate/noise.h"

namespace {

// The k-th smallest pairwise distance of Qn, by listing every pair: what
// qn_scale computed before it selected without listing.
double qn_all_pairs(const std::vector<double>& v) {
  const size_t n = v.size();
  if (n < 2) return 0;
  std::vector<double> d;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) d.push_back(std::fabs(v[i] - v[j]));
  const size_t h = n / 2 + 1, k = h * (h - 1) / 2;
  std::nth_element(d.begin(), d.begin() + static_cast<long>(k - 1), d.end());
  static const double small[] = {0, 0, 0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872};
  const double dn = n <= 9 ? small[n] : n % 2 ? n / (n + 1.4) : n / (n + 3.8);
  return dn * 2.2219 * d[k - 1];
}

// `runs` nightly runs of `keys` keys (tests/support gen_history), read.
void read_generated(kb::History& h, int runs, int keys) {
  kb::GenOptions opt;
  opt.runs = runs;
  opt.keys = keys;
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(kb::write_history(f, opt));
  std::fclose(f);
  h.add_text(std::string(buf, size), "long.csv");
  std::free(buf);
  h.finish();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(KgateLongHistory, QnIsTheSameValueAsFromAllPairs) {
  kb::SimRng rng(5);
  for (size_t n : {2, 3, 9, 10, 60, 61, 200, 1500, 3001}) {
    for (int ties : {0, 1}) {
      std::vector<double> v;
      for (size_t i = 0; i < n; ++i) {
        double x = 1000 * (1 + 0.01 * rng.normal());
        // Ties: values on a few levels (two hosts, two clock states).
        v.push_back(ties ? std::round(x / 5) * 5 : x);
      }
      EXPECT_EQ(kb::qn_scale(v), qn_all_pairs(v)) << "n " << n << " ties " << ties;
    }
  }
}

TEST(KgateLongHistory, QnOfAMillionRunsIsSelectedNotListed) {
  kb::SimRng rng(6);
  std::vector<double> v;
  for (int i = 0; i < 1000000; ++i) v.push_back(5 + 2 * rng.normal());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NEAR(kb::qn_scale(v), 2.0, 0.01);  // listing its pairs would take 4 TB
  EXPECT_LT(seconds_since(t0), 30);
}

TEST(KgateLongHistory, NoiseOfOneKeyOver200000RunsIsLinear) {
  kb::History h;
  read_generated(h, 200000, 1);
  const auto t0 = std::chrono::steady_clock::now();
  const kb::NoiseReport r = kb::noise_report(h);
  EXPECT_LT(seconds_since(t0), 30);  // each run against all others: hours
  ASSERT_EQ(r.keys.size(), 1u);
  EXPECT_EQ(r.keys[0].runs, 200000);
  EXPECT_NEAR(r.keys[0].noise, 0.01, 0.001);  // gen-history's noise
}

TEST(KgateLongHistory, CompareOfOneKeyOver200000RunsIsLinear) {
  kb::History base, next;
  read_generated(base, 100000, 1);
  read_generated(next, 100000, 1);
  const auto t0 = std::chrono::steady_clock::now();
  const kb::CompareReport r = kb::compare_runs(base, next, kb::CompareOptions());
  EXPECT_LT(seconds_since(t0), 30);  // Qn over all pairs: 40 GB a key
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].verdict, kb::CompareVerdict::same);
  EXPECT_EQ(r.rows[0].base_runs, 100000);
}

}  // namespace
