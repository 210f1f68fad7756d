// Helpers for GPU tests: skip cleanly where there is no CUDA device (fail
// instead with KBENCH_REQUIRE_GPU set), and skip, naming it, where the
// device lacks the compute capability a kernel needs: a test must not pass
// having run a fallback instead of what it tests.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/gpu/gpu_policy.h"

namespace kb::test {

// Why no CUDA device can be used here, or "" when one can.
inline std::string gpu_unavailable() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device (") + cudaGetErrorName(err) + ": " +
           cudaGetErrorString(err) + ")";
  }
  return n > 0 ? "" : "no CUDA device";
}

// True when at least one CUDA device can be used.
inline bool have_gpu() { return gpu_unavailable().empty(); }

// The current device's compute capability as major.minor (false if unknown).
inline bool device_capability(int& major, int& minor) {
  int dev = 0;
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess;
}

}  // namespace kb::test

// First line of every GPU test (or its fixture's SetUp): skips without a
// usable device, fails instead where KBENCH_REQUIRE_GPU is set.
#define KB_REQUIRE_GPU()                                                      \
  do {                                                                        \
    const std::string kb_unavailable_ = ::kb::test::gpu_unavailable();        \
    if (!kb_unavailable_.empty()) {                                           \
      if (::kb::test::gpu_required())                                         \
        GTEST_FAIL() << kb_unavailable_ << ", and KBENCH_REQUIRE_GPU is set"; \
      GTEST_SKIP() << kb_unavailable_;                                        \
    }                                                                         \
  } while (0)

// KB_REQUIRE_GPU, then a skip naming the capability where the current
// device has less than major.minor (the library runs a general kernel
// there instead of the one the test is about).
#define KB_REQUIRE_CC(major, minor)                                                    \
  do {                                                                                 \
    KB_REQUIRE_GPU();                                                                  \
    int kb_major_ = 0, kb_minor_ = 0;                                                  \
    ASSERT_TRUE(::kb::test::device_capability(kb_major_, kb_minor_));                  \
    if (!::kb::test::has_capability(kb_major_, kb_minor_, major, minor))               \
      GTEST_SKIP() << "needs compute capability " << (major) << "." << (minor)         \
                   << " or higher; this device has " << kb_major_ << "." << kb_minor_; \
  } while (0)
