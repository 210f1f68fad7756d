// Seeded uniform random fills on the device, for inputs too large to fill
// on the host; element i depends only on (seed, i), so a fill is reproducible.
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
