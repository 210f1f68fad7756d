// Deterministic random fills on the GPU whose values the host computes
// element by element (fill_value): an integer m in [-127, 127] from a hash
// of (seed, i), stored as m (int8) or m / 64 (bf16, exact).
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
