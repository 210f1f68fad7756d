#include <algorithm>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_random.h"

namespace kb {

namespace {

// splitmix64 of (seed, i): a counter-based generator, so every thread draws
// its elements independently of the grid shape.
__device__ __forceinline__ float uniform01(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // 24 bits: exact in fp32
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);  // round to nearest, saturating to the finite range
}

template <typename T>
__global__ void fill_uniform(T* __restrict__ p, size_t n, uint64_t seed, float lo, float span) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = from_float<T>(lo + span * uniform01(seed, i));
}

template <typename T>
void launch_fill(T* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s) {
  if (n == 0) return;
  const size_t blocks = std::min<size_t>((n + 255) / 256, 65536);
  fill_uniform<T><<<static_cast<unsigned>(blocks), 256, 0, s>>>(p, n, seed, lo, hi - lo);
  KB_CHECK_LAUNCH();
}

}  // namespace

void fill_uniform_bf16(__nv_bfloat16* p, size_t n, uint64_t seed, float lo, float hi,
                       cudaStream_t stream) {
  launch_fill(p, n, seed, lo, hi, stream);
}

void fill_uniform_fp8_e4m3(__nv_fp8_e4m3* p, size_t n, uint64_t seed, float lo, float hi,
                           cudaStream_t stream) {
  launch_fill(p, n, seed, lo, hi, stream);
}

}  // namespace kb
