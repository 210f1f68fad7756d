// Deterministic random fills generated on the GPU, with the same values
// computable on the host element by element. Large operands (a 4 GiB MoE
// weight) are filled in milliseconds without a host copy, and a CPU
// reference can still recompute any row it checks.
//
// Element i of a fill with `seed` is an integer m in [-127, 127] from a
// 64-bit hash of (seed, i); int8 fills store m, bf16 fills store m / 64
// (exact in bf16: 7 significant bits).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kb {

__host__ __device__ inline int fill_value(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<int>(z % 255) - 127;
}

inline float fill_bf16_value(uint64_t seed, uint64_t i) { return fill_value(seed, i) / 64.f; }

// Throw kb::CudaError on a launch error.
void fill_bf16(__nv_bfloat16* p, size_t n, uint64_t seed, cudaStream_t stream);
void fill_int8(int8_t* p, size_t n, uint64_t seed, cudaStream_t stream);

}  // namespace kb
