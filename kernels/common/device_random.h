// Seeded uniform random fills on the device, for inputs too large to
// generate on the host in a check's time budget (an MLP's weights at
// D=16384 are 470 M elements each: seconds on one CPU core, microseconds
// here). The value of element i depends only on (seed, i), so a fill is
// reproducible and a reference can download exactly what the kernel read.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kb {

// p[i] = round(lo + (hi - lo) * u(seed, i)), u uniform in [0, 1). Enqueued
// on `stream`; throws kb::CudaError on a launch error.
void fill_uniform_bf16(__nv_bfloat16* p, size_t n, uint64_t seed, float lo, float hi,
                       cudaStream_t stream);
void fill_uniform_fp8_e4m3(__nv_fp8_e4m3* p, size_t n, uint64_t seed, float lo, float hi,
                           cudaStream_t stream);

}  // namespace kb
