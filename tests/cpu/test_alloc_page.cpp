// KBENCH_ALLOC_PAGE (kernels/common/alloc_page.h): whole 2 MiB pages when
// asked, the bytes as asked otherwise, and the variable read per call.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/common/alloc_page.h"

TEST(AllocPage, RoundsUpToWholePagesOnlyWhenAsked) {
  constexpr size_t kPage = size_t(2) << 20;
  EXPECT_EQ(kb::allocation_bytes(1, false), 1u);
  EXPECT_EQ(kb::allocation_bytes(1, true), kPage);
  EXPECT_EQ(kb::allocation_bytes(kPage, true), kPage);
  EXPECT_EQ(kb::allocation_bytes(kPage + 1, true), 2 * kPage);
  EXPECT_EQ(kb::allocation_bytes(0, true), 0u);
}

TEST(AllocPage, ReadsTheVariableEachCall) {
  constexpr size_t kPage = size_t(2) << 20;
  unsetenv("KBENCH_ALLOC_PAGE");
  EXPECT_EQ(kb::allocation_bytes(100), 100u);
  setenv("KBENCH_ALLOC_PAGE", "1", 1);
  EXPECT_EQ(kb::allocation_bytes(100), kPage);
  setenv("KBENCH_ALLOC_PAGE", "0", 1);
  EXPECT_EQ(kb::allocation_bytes(100), 100u);
  setenv("KBENCH_ALLOC_PAGE", "", 1);
  EXPECT_EQ(kb::allocation_bytes(100), 100u);
  unsetenv("KBENCH_ALLOC_PAGE");
}
