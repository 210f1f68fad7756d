#include <stdexcept>
#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/common/read_buffer.h"
#include "suite/ideal_kernels.h"

namespace kb {

namespace {

constexpr int kChunkVectors = 2048;  // 32 KB per block of 128 threads
constexpr int kChunkUnroll = 8;      // loads in flight per thread

// Each block of 128 threads streams one contiguous 32 KB chunk, blocks
// scheduled as they come, as a GEMV reads its rows (faster than the sweep).
__global__ void __launch_bounds__(128)
    read_chunks_kernel(const int4* __restrict__ p, size_t n, int* __restrict__ sink) {
  const size_t base = static_cast<size_t>(blockIdx.x) * kChunkVectors;
  int acc = 0;
  for (int r = 0; r < kChunkVectors; r += 128 * kChunkUnroll) {
    int4 v[kChunkUnroll];
#pragma unroll
    for (int u = 0; u < kChunkUnroll; ++u) {
      const size_t i = base + r + u * 128 + threadIdx.x;
      v[u] = i < n ? __ldcs(p + i) : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kChunkUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x7a3c91e5 && sink) *sink = acc;
}

// The same chunks, copied: 8 vectors loaded, then stored, per thread.
__global__ void __launch_bounds__(128)
    copy_chunks_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  const size_t base = static_cast<size_t>(blockIdx.x) * kChunkVectors;
  for (int r = 0; r < kChunkVectors; r += 128 * kChunkUnroll) {
    int4 v[kChunkUnroll];
#pragma unroll
    for (int u = 0; u < kChunkUnroll; ++u) {
      const size_t i = base + r + u * 128 + threadIdx.x;
      if (i < n) v[u] = __ldcs(src + i);
    }
#pragma unroll
    for (int u = 0; u < kChunkUnroll; ++u) {
      const size_t i = base + r + u * 128 + threadIdx.x;
      if (i < n) __stcs(dst + i, v[u]);
    }
  }
}

__global__ void __launch_bounds__(512)
    copy_sweep_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  constexpr int kUnroll = 4;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) __stcs(dst + i, __ldcs(src + i));
}

// copy_wave: small and mid-size copies are launch- and round-trip-bound, so
// every thread makes one round trip (all its V loads before its first
// store), V the fewest of 1, 2, 4, 8 that keeps the grid within 4 blocks of
// 128 threads per SM; streaming stores (docs/decisions/0011).
constexpr int kWaveThreads = 128;
constexpr int kWaveBlocksPerSm = 4;

template <int T, int V, bool kStreamingStores>
__global__ void __launch_bounds__(T)
    copy_wave_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  const size_t base = static_cast<size_t>(blockIdx.x) * (T * V) + threadIdx.x;
  int4 v[V];
#pragma unroll
  for (int u = 0; u < V; ++u)
    if (base + u * T < n) v[u] = __ldcs(src + base + u * T);
#pragma unroll
  for (int u = 0; u < V; ++u)
    if (base + u * T < n) {
      if (kStreamingStores)
        __stcs(dst + base + u * T, v[u]);
      else
        dst[base + u * T] = v[u];
    }
}

template <int T, int V>
void launch_wave(const int4* in, int4* out, size_t n, bool streaming, cudaStream_t s) {
  const size_t blocks = (n + T * V - 1) / (T * V);
  if (blocks == 0) return;
  if (streaming)
    copy_wave_kernel<T, V, true><<<static_cast<unsigned>(blocks), T, 0, s>>>(in, out, n);
  else
    copy_wave_kernel<T, V, false><<<static_cast<unsigned>(blocks), T, 0, s>>>(in, out, n);
  KB_CHECK_LAUNCH();
}

template <int T>
void launch_wave_v(const int4* in, int4* out, size_t n, int v, bool streaming, cudaStream_t s) {
  switch (v) {
    case 1:
      return launch_wave<T, 1>(in, out, n, streaming, s);
    case 2:
      return launch_wave<T, 2>(in, out, n, streaming, s);
    case 4:
      return launch_wave<T, 4>(in, out, n, streaming, s);
    case 8:
      return launch_wave<T, 8>(in, out, n, streaming, s);
  }
  throw std::invalid_argument("copy_wave: vectors a thread must be 1, 2, 4 or 8, got " +
                              std::to_string(v));
}

// copy_wave's vectors a thread for `n` vectors on `sms` SMs (above).
int wave_vectors(size_t n, int sms) {
  const size_t max_blocks = static_cast<size_t>(sms > 0 ? sms : 1) * kWaveBlocksPerSm;
  for (int v : {1, 2, 4})
    if ((n + size_t(kWaveThreads) * v - 1) / (size_t(kWaveThreads) * v) <= max_blocks) return v;
  return 8;
}

unsigned chunks(size_t vectors) {
  return static_cast<unsigned>((vectors + kChunkVectors - 1) / kChunkVectors);
}

}  // namespace

const char* ideal_name(Ideal k) {
  static const char* const names[] = {"read_sweep",  "read_chunks", "copy_sweep",
                                      "copy_chunks", "copy_wave",   "copy_memcpy"};
  return names[static_cast<int>(k)];
}

bool ideal_writes(Ideal k) { return k != Ideal::read_sweep && k != Ideal::read_chunks; }

void launch_ideal(Ideal k, const void* src, void* dst, size_t bytes, int sms, int* sink,
                  cudaStream_t s) {
  const unsigned grid = static_cast<unsigned>(sms > 0 ? sms : 1) * 4;
  const auto* in = static_cast<const int4*>(src);
  auto* out = static_cast<int4*>(dst);
  const size_t half = bytes / 2 / sizeof(int4);  // vectors copied
  switch (k) {
    case Ideal::read_sweep:
      read_buffer(src, bytes / sizeof(int4) * sizeof(int4), s, grid, sink);
      return;
    case Ideal::read_chunks:
      read_chunks_kernel<<<chunks(bytes / sizeof(int4)), 128, 0, s>>>(in, bytes / sizeof(int4),
                                                                      sink);
      KB_CHECK_LAUNCH();
      return;
    case Ideal::copy_sweep:
      copy_sweep_kernel<<<grid, 512, 0, s>>>(in, out, half);
      KB_CHECK_LAUNCH();
      return;
    case Ideal::copy_chunks:
      copy_chunks_kernel<<<chunks(half), 128, 0, s>>>(in, out, half);
      KB_CHECK_LAUNCH();
      return;
    case Ideal::copy_wave:
      launch_wave_v<kWaveThreads>(in, out, half, wave_vectors(half, sms), true, s);
      return;
    case Ideal::copy_memcpy:
      KB_CUDA_CHECK(cudaMemcpyAsync(dst, src, half * sizeof(int4), cudaMemcpyDeviceToDevice, s));
      return;
  }
}

void launch_copy_wave(const void* src, void* dst, size_t bytes, int threads, int vectors,
                      bool streaming_stores, cudaStream_t s) {
  const auto* in = static_cast<const int4*>(src);
  auto* out = static_cast<int4*>(dst);
  const size_t n = bytes / sizeof(int4);
  switch (threads) {
    case 64:
      return launch_wave_v<64>(in, out, n, vectors, streaming_stores, s);
    case 128:
      return launch_wave_v<128>(in, out, n, vectors, streaming_stores, s);
    case 256:
      return launch_wave_v<256>(in, out, n, vectors, streaming_stores, s);
    case 512:
      return launch_wave_v<512>(in, out, n, vectors, streaming_stores, s);
  }
  throw std::invalid_argument("copy_wave: threads a block must be 64, 128, 256 or 512, got " +
                              std::to_string(threads));
}

void launch_ideal_chain(const void* src, size_t bytes, int links, int sms, int* sink,
                        cudaStream_t s) {
  const size_t part = bytes / static_cast<size_t>(links);
  for (int i = 0; i < links; ++i)
    launch_ideal(Ideal::read_chunks, static_cast<const char*>(src) + i * part, nullptr, part, sms,
                 sink, s);
}

}  // namespace kb
