// GPU names are compared in one place (suite/gpu_name.h): one model
// whatever its case, in target files, the datasheet table and kgate.
#include <gtest/gtest.h>

#include "suite/datasheets.h"
#include "suite/gpu_name.h"

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

}  // namespace
