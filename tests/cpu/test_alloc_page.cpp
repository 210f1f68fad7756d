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

TEST(AllocPage, ACountPastTheLastPageStaysAsAskedInsteadOfWrapping) {
  // Rounded up it would wrap to 0 and cudaMalloc would hand back nothing to
  // a caller that asked for everything; as asked, cudaMalloc refuses it.
  EXPECT_EQ(kb::allocation_bytes(SIZE_MAX, true), SIZE_MAX);
  EXPECT_EQ(kb::allocation_bytes(SIZE_MAX - 5, true), SIZE_MAX - 5);
  constexpr size_t kPage = size_t(2) << 20;
  const size_t last = SIZE_MAX / kPage * kPage;  // the largest whole-page count
  EXPECT_EQ(kb::allocation_bytes(last, true), last);
  EXPECT_EQ(kb::allocation_bytes(last - kPage + 1, true), last);
}
