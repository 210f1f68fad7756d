// The decisions GPU tests take where they cannot run (tests/gpu/gpu_policy.h):
// KBENCH_REQUIRE_GPU turns "no GPU" from a skip into a failure, and a
// device below a kernel's compute capability skips its tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "tests/gpu/gpu_policy.h"

namespace {

using kb::test::gpu_required;
using kb::test::has_capability;

TEST(GpuPolicy, RequireGpuFromTheVariablesValue) {
  EXPECT_FALSE(gpu_required(nullptr));  // unset: skip
  EXPECT_FALSE(gpu_required(""));
  EXPECT_FALSE(gpu_required("0"));
  EXPECT_TRUE(gpu_required("1"));  // what tools/gpu-call.sh sets
  EXPECT_TRUE(gpu_required("yes"));
}

// The environment itself, set and unset (restored after).
TEST(GpuPolicy, RequireGpuReadsTheEnvironment) {
  const char* old = std::getenv("KBENCH_REQUIRE_GPU");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ASSERT_EQ(setenv("KBENCH_REQUIRE_GPU", "1", 1), 0);
  EXPECT_TRUE(gpu_required());
  ASSERT_EQ(setenv("KBENCH_REQUIRE_GPU", "0", 1), 0);
  EXPECT_FALSE(gpu_required());
  ASSERT_EQ(unsetenv("KBENCH_REQUIRE_GPU"), 0);
  EXPECT_FALSE(gpu_required());
  if (saved) setenv("KBENCH_REQUIRE_GPU", saved->c_str(), 1);
}

TEST(GpuPolicy, CapabilityComparesMajorThenMinor) {
  EXPECT_TRUE(has_capability(9, 0, 9, 0));
  EXPECT_TRUE(has_capability(10, 0, 9, 0));
  EXPECT_FALSE(has_capability(8, 9, 9, 0));  // an L40S or RTX 4090 runs no bulk kernel
  EXPECT_FALSE(has_capability(8, 6, 8, 9));
  EXPECT_TRUE(has_capability(8, 9, 8, 9));
  EXPECT_TRUE(has_capability(9, 0, 8, 9));  // a higher major with a lower minor
  EXPECT_FALSE(has_capability(7, 5, 8, 0));
}

}  // namespace
