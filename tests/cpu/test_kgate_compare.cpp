// `kgate compare`: verdicts judged against both sides' noise (rows' own
// noise_rel/samples, repeats, or the default), the geometric mean, and the
// switch to roofline fractions across GPU models.
#include <gtest/gtest.h>

#include <cmath>

#include "core/metrics.h"
#include "kgate_test_util.h"
#include "tools/kgate/compare.h"

namespace {

using namespace kgt;

kb::CompareReport cmp(const std::string& base, const std::string& next,
                      kb::CompareOptions opt = {}) {
  kb::History b, n;
  b.add_text(base, "base.csv");
  b.finish();
  n.add_text(next, "new.csv");
  n.finish();
  return kb::compare_runs(b, n, opt);
}

const kb::CompareRow& find(const kb::CompareReport& r, const std::string& name) {
  for (const auto& row : r.rows)
    if (row.name == name) return row;
  throw std::runtime_error("no row " + name);
}

TEST(KgateCompare, VerdictsAgainstTheRowsNoise) {
  // noise_rel 0.5% over 50 samples: each side's median is known to ~0.1%.
  auto r = cmp(csv({row("a", 1000, "x"), row("b", 1000, "x"), row("c", 1000, "x")}),
               csv({row("a", 1100, "y"), row("b", 900, "y"), row("c", 1005, "y")}));
  EXPECT_EQ(find(r, "a").verdict, kb::CompareVerdict::faster);
  EXPECT_EQ(find(r, "b").verdict, kb::CompareVerdict::slower);
  EXPECT_EQ(find(r, "c").verdict, kb::CompareVerdict::same);
  EXPECT_NEAR(find(r, "c").noise, std::sqrt(2.0) * 1.2533 * 0.005 / std::sqrt(50.0), 1e-12);
  EXPECT_EQ(find(r, "c").note, "noise from noise_rel, runs 1/1");
  EXPECT_EQ(r.compared, 3u);
  EXPECT_NEAR(r.geomean, std::cbrt(1.1 * 0.9 * 1.005), 1e-12);
  EXPECT_FALSE(r.cross_arch);
}

TEST(KgateCompare, NoisyRowsMakeSmallChangesUnsure) {
  kb::Record b = row("a", 1000, "x"), n = row("a", 1030, "y");
  b.noise_rel = n.noise_rel = 0.2;  // 20% sample noise over 50 samples: +-3.5% each
  auto r = cmp(csv({b}), csv({n}));
  EXPECT_EQ(r.rows[0].verdict, kb::CompareVerdict::unsure);
}

TEST(KgateCompare, DefaultNoiseForGptFastRows) {
  std::string h = "name,metric,target,actual,dtype,device,arch,is_model\n";
  auto r = cmp(h + "gemv,memory_bandwidth(GB/s),870,1000.0,int8,cuda,A,False\n"
                   "Llama-2-7b-chat-hf,token_per_sec,94,100.0,int8,cuda,A,True\n",
               h + "gemv,memory_bandwidth(GB/s),870,1030.0,int8,cuda,A,False\n"
                   "Llama-2-7b-chat-hf,token_per_sec,94,80.0,int8,cuda,A,True\n");
  // Default 2% a side: z * u = 3 * 2.8% = 8.5%; 3% is UNSURE, -20% SLOWER.
  EXPECT_EQ(find(r, "gemv").verdict, kb::CompareVerdict::unsure);
  EXPECT_EQ(find(r, "gemv").note, "noise from default, runs 1/1");
  EXPECT_EQ(find(r, "Llama-2-7b-chat-hf").verdict, kb::CompareVerdict::slower);
}

TEST(KgateCompare, RepeatsGiveTheRunToRunNoise) {
  std::vector<kb::Record> b, n;
  for (int i = 0; i < 5; ++i) {
    b.push_back(row("a", 1000 + 2 * i, "b" + std::to_string(i)));
    n.push_back(row("a", 1030 + 2 * i, "n" + std::to_string(i)));
  }
  auto r = cmp(csv(b), csv(n));
  EXPECT_EQ(r.rows[0].base_runs, 5);
  EXPECT_EQ(r.rows[0].note, "noise from runs, runs 5/5");
  EXPECT_EQ(*r.rows[0].base, 1004);
  EXPECT_EQ(r.rows[0].verdict, kb::CompareVerdict::faster);
}

TEST(KgateCompare, TimesAreBetterWhenLower) {
  kb::Record b = row("a", 10, "x"), n = row("a", 8, "y");
  b.metric = n.metric = "latency(us)";
  auto r = cmp(csv({b}), csv({n}));
  EXPECT_EQ(r.rows[0].verdict, kb::CompareVerdict::faster);
  EXPECT_NEAR(r.rows[0].change, -0.2, 1e-12);
  EXPECT_NEAR(r.geomean, 1.25, 1e-12);
}

TEST(KgateCompare, AcrossGpuModelsComparesRooflineFractions) {
  kb::Record b = row("gemv", 1300, "x", kA100), n = row("gemv", 2600, "y", kH100);
  b.roofline_fraction = 0.84;
  n.roofline_fraction = 0.80;
  kb::Record nb = row("layer_norm", 1000, "x", kA100), nn = row("layer_norm", 2000, "y", kH100);
  nn.roofline_fraction = 0.7;  // nb has none: not compared
  auto r = cmp(csv({b, nb}), csv({n, nn}));
  EXPECT_TRUE(r.cross_arch);
  const auto& g = find(r, "gemv");
  EXPECT_EQ(*g.base, 0.84);
  EXPECT_EQ(*g.next, 0.80);
  EXPECT_EQ(g.verdict, kb::CompareVerdict::slower);
  const auto& l = find(r, "layer_norm");
  EXPECT_EQ(l.verdict, kb::CompareVerdict::not_compared);
  EXPECT_EQ(l.note, "BASE: no roofline_fraction");
  std::string text = kb::compare_console(r);
  EXPECT_TRUE(contains(text, "The GPU models differ: comparing roofline_fraction")) << text;
  EXPECT_TRUE(contains(text, "roofline_fraction of memory_bandwidth(GB/s)")) << text;
}

// Across GPU models keys are matched without the arch: a side of two models
// would give each key the median of two GPUs' fractions (an H100 history
// with an A100 night in it, against the same H100 night: "49% faster").
TEST(KgateCompare, AcrossGpuModelsASideOfSeveralModelsIsRefused) {
  kb::Record h = row("gemv", 2600, "x", kH100), a = row("gemv", 900, "x", kA100);
  h.roofline_fraction = 0.88;
  a.roofline_fraction = 0.30;
  kb::Record same = h;
  same.run_id = "y";
  try {
    cmp(csv({h, a}), csv({same}));
    ADD_FAILURE() << "compared the median of two GPU models";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "base.csv holds 2 GPU models (NVIDIA A100-SXM4-40GB, NVIDIA H100 80GB HBM3) and "
              "new.csv 1 (NVIDIA H100 80GB HBM3): across GPU models each file must hold one; "
              "give the rows of one model a file");
  }
  // One model a side, or the same models on both, is compared as before.
  EXPECT_TRUE(cmp(csv({a}), csv({same})).cross_arch);
  EXPECT_FALSE(cmp(csv({h, a}), csv({same, a})).cross_arch);
}

// Suite 0.1's roofline (bandwidth, peak, launch floor) and 0.2's ladder are
// different rooflines: their fractions are compared only like with like.
TEST(KgateCompare, RooflineFractionsOnlyWithinOneRooflineVersion) {
  auto pair = [](const std::string& name, const std::string& base_version,
                 const std::string& new_version, const std::string& new_message = "") {
    // One run a version (one binary wrote each run).
    kb::Record b = row(name, 1300, "x" + name, kA100), n = row(name, 2600, "y" + name, kH100);
    b.roofline_fraction = 0.84;
    n.roofline_fraction = 0.80;
    b.suite_version = base_version;
    n.suite_version = new_version;
    n.message = new_message;
    return std::pair{b, n};
  };
  auto [b1, n1] = pair("old_vs_new", "0.1.0", "0.2.0");
  auto [b2, n2] = pair("new_vs_new", "0.2.0", "0.2.1");
  auto [b3, n3] = pair("old_vs_model", "0.1.0", "0.2.0", "roofline=model (no measured.ladder)");
  auto r = cmp(csv({b1, b2, b3}), csv({n1, n2, n3}));
  ASSERT_TRUE(r.cross_arch);
  EXPECT_EQ(find(r, "old_vs_new").verdict, kb::CompareVerdict::not_compared);
  EXPECT_EQ(find(r, "old_vs_new").note,
            "roofline versions differ (BASE v1, NEW v2): fractions not compared");
  EXPECT_EQ(find(r, "new_vs_new").verdict, kb::CompareVerdict::slower);
  EXPECT_EQ(find(r, "old_vs_model").verdict, kb::CompareVerdict::slower);  // both version 1
  EXPECT_EQ(r.compared, 2u);
}

TEST(KgateCompare, RooflineVersionOfARow) {
  EXPECT_EQ(kb::roofline_version("0.1.0", ""), 1);
  EXPECT_EQ(kb::roofline_version("0.2.0", ""), 2);
  EXPECT_EQ(kb::roofline_version("0.10.3", ""), 2);
  EXPECT_EQ(kb::roofline_version("1.0.0", ""), 2);
  EXPECT_EQ(kb::roofline_version("0.2.0", "x; roofline=model (no measured.ladder in t.json)"), 1);
  EXPECT_EQ(kb::roofline_version("", ""), 1);           // gpt_fast rows: no suite version
  EXPECT_EQ(kb::roofline_version("synthetic", ""), 1);  // not a version
  EXPECT_EQ(kb::roofline_version("0", ""), 1);
}

TEST(KgateCompare, KeysOnOneSideOrFailedAreNotCompared) {
  kb::Record f = row("b", 1, "y");
  f.status = "failed";
  f.actual.reset();
  auto r = cmp(csv({row("a", 1000, "x"), row("b", 1000, "x")}), csv({row("c", 1000, "y"), f}));
  EXPECT_EQ(find(r, "a").note, "NEW: absent");
  EXPECT_EQ(find(r, "b").note, "NEW: failed");
  EXPECT_EQ(find(r, "c").note, "BASE: absent");
  EXPECT_EQ(r.compared, 0u);
  EXPECT_EQ(r.summary(), "nothing to compare: no key has a value in both files");
}

}  // namespace
