#include "kernels/common/cuda_check.h"
#include "kernels/common/fill.h"

namespace kb {

namespace {

template <typename T, bool kBf16>
__global__ void fill_kernel(T* p, size_t n, uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int m = fill_value(seed, i);
    if constexpr (kBf16)
      p[i] = __float2bfloat16_rn(m / 64.f);
    else
      p[i] = static_cast<T>(m);
  }
}

unsigned grid_for(size_t n) {
  const size_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 8192 ? (blocks ? blocks : 1) : 8192);
}

}  // namespace

void fill_bf16(__nv_bfloat16* p, size_t n, uint64_t seed, cudaStream_t stream) {
  fill_kernel<__nv_bfloat16, true><<<grid_for(n), 256, 0, stream>>>(p, n, seed);
  KB_CHECK_LAUNCH();
}

void fill_int8(int8_t* p, size_t n, uint64_t seed, cudaStream_t stream) {
  fill_kernel<int8_t, false><<<grid_for(n), 256, 0, stream>>>(p, n, seed);
  KB_CHECK_LAUNCH();
}

}  // namespace kb
