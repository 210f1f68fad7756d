// Helpers for GPU tests: skip cleanly when this machine has no CUDA device.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace kb::test {

// True when at least one CUDA device can be used.
inline bool have_gpu() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

}  // namespace kb::test

// First line of every GPU test.
#define KB_REQUIRE_GPU()                                       \
  do {                                                         \
    if (!::kb::test::have_gpu()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)
