// GPU names are compared in one place (core/gpu_name.h): one model
// whatever its case, in target files, the datasheet table and kgate.
#include <gtest/gtest.h>

#include "core/datasheets.h"
#include "core/gpu_name.h"
#include "kgate_test_util.h"
#include "tools/kgate/compare.h"

namespace {

TEST(GpuName, OneModelWhateverItsCase) {
  EXPECT_EQ(kb::gpu_name_key("NVIDIA H100 80GB HBM3"), "nvidia h100 80gb hbm3");
  EXPECT_TRUE(kb::same_gpu_name("NVIDIA H100 80GB HBM3", "nvidia h100 80gb hbm3"));
  EXPECT_FALSE(kb::same_gpu_name("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3 "));
  EXPECT_TRUE(kb::gpu_name_contains("NVIDIA H200", "h200"));
  EXPECT_FALSE(kb::gpu_name_contains("NVIDIA H200", ""));
  // The same rule in the datasheet table's and the tuning file's lookups.
  kb::DatasheetTable t = kb::parse_datasheets(
      R"({"gpus": [{"gpu": "NVIDIA H200 SXM", "driver_names": ["NVIDIA H200"], "source": "s"}]})",
      "d.json");
  EXPECT_NE(kb::find_datasheet(t, "nvidia h200"), nullptr);
}

// Two files that spell one GPU model differently compare raw values, key by
// key, not roofline fractions across "two" GPU models.
TEST(GpuName, CompareTakesBothSpellingsAsOneModel) {
  kb::History base, next;
  base.add_text(kgt::csv(kgt::series("gemv", kgt::steady(5, 1000, 1000))), "base.csv");
  next.add_text(kgt::csv(kgt::series("gemv", kgt::steady(5, 800, 800), "nvidia h100 80gb hbm3")),
                "new.csv");
  base.finish();
  next.finish();
  const kb::CompareReport r = kb::compare_runs(base, next, kb::CompareOptions{});
  EXPECT_FALSE(r.cross_arch);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].verdict, kb::CompareVerdict::slower);
}

}  // namespace
