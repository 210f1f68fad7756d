#include "kernels/common/cuda_check.h"
#include "kernels/common/read_buffer.h"

namespace kb {

namespace {

// Reads every 16-byte vector once with 8 loads in flight per thread. The
// xor of what was read is stored only if it equals a value it never takes,
// so the loads cannot be dropped and nothing is written.
__global__ void __launch_bounds__(512)
    read_kernel(const int4* __restrict__ p, size_t n, int* __restrict__ sink) {
  constexpr int kUnroll = 8;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int acc = 0;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    int4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7a3c91e5 && sink) *sink = acc;
}

}  // namespace

void read_buffer(const void* p, size_t bytes, cudaStream_t stream, unsigned blocks, int* sink) {
  read_kernel<<<blocks, 512, 0, stream>>>(static_cast<const int4*>(p), bytes / sizeof(int4), sink);
  KB_CHECK_LAUNCH();
}

}  // namespace kb
