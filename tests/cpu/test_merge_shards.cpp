// tools/merge-shards.sh checks headers against copies of kbench's own
// (the script has no other way to know them): they must stay the same.
// Its behaviour is tested by tests/merge_shards_test.sh (ctest merge_shards).
#include <gtest/gtest.h>

#include "kgate_test_util.h"

namespace {

using namespace kgt;

TEST(MergeShards, ItsHeadersAreKbenchs) {
  const std::string script = slurp(std::string(KBENCH_SOURCE_DIR) + "/tools/merge-shards.sh");
  const std::string v1 = kb::csv_header_v1();
  const std::string v2 = kb::csv_header();
  ASSERT_EQ(v2.rfind(v1 + ",", 0), 0u);
  EXPECT_TRUE(contains(script, "\nv1_header=\"" + v1 + "\"\n")) << v1;
  EXPECT_TRUE(contains(script, "\nv2_header=\"$v1_header," + v2.substr(v1.size() + 1) + "\"\n"))
      << v2;
}

}  // namespace
