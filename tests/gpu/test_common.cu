// The shared kernel helpers: device buffers, poisoning, bf16 conversion.
#include <gtest/gtest.h>

#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "tests/gpu/gpu_test_util.h"

TEST(HostMath, Bf16RoundTripAndRounding) {
  EXPECT_EQ(kb::bf16_to_float(kb::float_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(kb::bf16_to_float(kb::float_to_bf16(-2.5f)), -2.5f);
  // 1 + 2^-8 is halfway between two bf16 values: ties go to even (1.0).
  EXPECT_EQ(kb::bf16_to_float(kb::float_to_bf16(1.0f + 1.0f / 256)), 1.0f);
  // Our host conversion agrees with CUDA's for random values.
  auto v = kb::random_uniform(1000, 7, -100.f, 100.f);
  for (float x : v)
    EXPECT_EQ(kb::bf16_to_float(kb::float_to_bf16(x)), __bfloat162float(__float2bfloat16(x)));
}

TEST(HostMath, CompareCatchesNaNAndError) {
  std::vector<float> ref = {1, 2, 3, 4};
  EXPECT_TRUE(kb::compare(ref, ref, 1e-6).ok);
  auto bad = ref;
  bad[2] = std::nanf("");
  EXPECT_FALSE(kb::compare(bad, ref, 1e-2).ok);
  bad[2] = 3.5f;
  EXPECT_FALSE(kb::compare(bad, ref, 1e-2).ok);
  EXPECT_TRUE(kb::compare(bad, ref, 0.2).ok);
}

TEST(DeviceBuffer, UploadDownloadPoison) {
  KB_REQUIRE_GPU();
  auto host = kb::random_bf16(4097, 3);
  kb::DeviceBuffer<kb::bf16> d(host.size());
  d.upload(host);
  auto back = d.download();
  ASSERT_EQ(back.size(), host.size());
  for (size_t i = 0; i < host.size(); ++i)
    ASSERT_EQ(kb::bf16_to_float(back[i]), kb::bf16_to_float(host[i]));
  d.poison();
  auto poisoned = kb::to_float(d.download());
  EXPECT_TRUE(std::isnan(poisoned[0]));
}

// No GPU needed: the count is refused before any CUDA call. count · 8
// bytes wraps past SIZE_MAX to 8 bytes; allocated, kernels would overrun it.
TEST(DeviceBuffer, ACountWhoseBytesWrapIsOutOfMemoryNotASmallBuffer) {
  try {
    kb::DeviceBuffer<uint64_t> wraps(SIZE_MAX / 8 + 2);
    FAIL() << "a count of " << SIZE_MAX / 8 + 2 << " eight-byte elements was allocated";
  } catch (const kb::CudaError& e) {
    EXPECT_EQ(e.code, cudaErrorMemoryAllocation);
    EXPECT_NE(std::string(e.what()).find("out of GPU memory"), std::string::npos) << e.what();
  }
}

TEST(DeviceBuffer, OutOfMemoryThrowsWithSize) {
  KB_REQUIRE_GPU();
  try {
    kb::DeviceBuffer<char> huge(size_t(1) << 50);  // 1 PiB
    FAIL() << "allocation of 1 PiB succeeded";
  } catch (const kb::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("out of GPU memory"), std::string::npos) << e.what();
  }
}
