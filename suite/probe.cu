#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/graph.h"
#include "suite/ideal_kernels.h"
#include "suite/probe.h"
#include "suite/stats.h"

namespace kb {

namespace {

__global__ void empty_kernel() {}

// A CUDA handle destroyed on every way out.
template <typename T>
using Owned = std::unique_ptr<T, cudaError_t (*)(T*)>;

// Keeps the GPU busy for about `cycles` SM clocks: queued before a timed
// call, it makes the GPU wait, not the CPU, as the engine's L2 flush does;
// else an empty kernel's time includes the host's launch latency.
__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// Event-timed median of `reps` calls of f (after 2 warm-up calls), in s.
// Each call is queued behind a ~20 us spin kernel (see spin_kernel).
template <typename F, typename B>
double time_median(cudaStream_t s, int reps, F&& f, B&& before) {
  cudaEvent_t a, b;
  KB_CUDA_CHECK(cudaEventCreate(&a));
  const Owned<CUevent_st> own_a(a, cudaEventDestroy);
  KB_CUDA_CHECK(cudaEventCreate(&b));
  const Owned<CUevent_st> own_b(b, cudaEventDestroy);
  std::vector<double> t;
  for (int i = 0; i < 2; ++i) f();
  for (int i = 0; i < reps; ++i) {
    before(i);
    spin_kernel<<<1, 1, 0, s>>>(40000);
    KB_CHECK_LAUNCH();
    KB_CUDA_CHECK(cudaEventRecord(a, s));
    f();
    KB_CUDA_CHECK(cudaEventRecord(b, s));
    KB_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    KB_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e-3);
  }
  return median(t);
}
template <typename F>
double time_median(cudaStream_t s, int reps, F&& f) {
  return time_median(s, reps, std::forward<F>(f), [](int) {});
}

// One thread reads one 16-byte vector: on a cold L2 (and cold TLB), the
// event-timed duration is the launch floor plus one HBM round trip.
__global__ void read_one_kernel(const int4* __restrict__ p, int* __restrict__ sink) {
  const int4 v = __ldcg(p);
  if ((v.x ^ v.y ^ v.z ^ v.w) == 0x7a3c91e5) *sink = v.x;
}

void launch_empty_kernel(cudaStream_t stream, unsigned blocks, unsigned threads) {
  empty_kernel<<<blocks, threads, 0, stream>>>();
  KB_CHECK_LAUNCH();
}

// A different 2 MiB page of the buffer for each cold read.
size_t pending_offset(size_t n_vectors) {
  static size_t k = 0;
  const size_t page = (size_t(2) << 20) / 16;
  return (++k * 7919 * page) % (n_vectors / page * page);
}
// One graph of 100 empty kernels of `blocks` x 128, replayed: the cost of a
// node, in us.
double graph_node_us(cudaStream_t s, unsigned blocks, bool quick) {
  constexpr int kNodes = 100;
  const CudaGraph g = capture_graph([&](cudaStream_t cap) {
    for (int i = 0; i < kNodes; ++i) launch_empty_kernel(cap, blocks, 128);
  });
  const double t = time_median(s, quick ? 10 : 50, [&] { g.launch(s); });
  return t * 1e6 / kNodes;
}

}  // namespace

ProbeResult probe_ceilings(cudaStream_t s, size_t mem_bytes, bool quick) {
  ProbeResult r;
  int dev = 0, sms = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  KB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  // Large enough to dwarf any L2 (2 GiB), small enough to leave room: <= 1/8 of memory.
  size_t bytes = std::min<size_t>(size_t(2) << 30, mem_bytes / 8);
  bytes = bytes / 4096 * 4096;
  r.bytes = static_cast<double>(bytes);
  const size_t n = bytes / sizeof(int4);
  DeviceBuffer<int4> a(n), b(n);
  DeviceBuffer<int> sink(1);
  KB_CUDA_CHECK(cudaMemsetAsync(a.get(), 0x5a, bytes, s));
  KB_CUDA_CHECK(cudaMemsetAsync(b.get(), 0, bytes, s));
  const int reps = quick ? 5 : 20;

  // The faster of the two read patterns (suite/ideal_kernels.h).
  auto ideal = [&](Ideal k, size_t moved) {
    return time_median(s, reps,
                       [&] { launch_ideal(k, a.get(), b.get(), moved, sms, sink.get(), s); });
  };
  double t = ideal(Ideal::read_sweep, bytes);
  r.read_gbps = bytes / t / 1e9;
  t = ideal(Ideal::read_chunks, bytes);
  r.read_gbps = std::max(r.read_gbps, bytes / t / 1e9);
  // Copies of `bytes` from a to b: 2 * bytes moved.
  t = ideal(Ideal::copy_sweep, 2 * bytes);
  r.copy_gbps = 2.0 * bytes / t / 1e9;
  t = ideal(Ideal::copy_memcpy, 2 * bytes);
  r.memcpy_gbps = 2.0 * bytes / t / 1e9;

  // The launch floor: an empty kernel with a grid that can stream (4 blocks
  // of 128 threads per SM; a memory-bound kernel cannot use fewer SMs).
  const unsigned grid_blocks = static_cast<unsigned>(sms) * 4;
  r.launch_us =
      time_median(s, quick ? 50 : 200, [&] { launch_empty_kernel(s, grid_blocks, 128); }) * 1e6;
  const double one_block_us =
      time_median(s, quick ? 50 : 200, [&] { launch_empty_kernel(s, 1, 32); }) * 1e6;

  // The HBM round trip a kernel pays before its first byte arrives: a
  // one-vector read after an L2 flush (2x the L2, read from b), at a new
  // offset of a each time (a different page: cold TLB too, as in a sample).
  int l2 = 0;
  KB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  const size_t flush =
      std::min<size_t>(std::max<size_t>(size_t(l2) * 2, size_t(8) << 20), bytes) / 16 * 16;
  const double cold_read_us =
      time_median(
          s, quick ? 20 : 100,
          [&] {
            read_one_kernel<<<1, 1, 0, s>>>(a.get() + pending_offset(n), sink.get());
            KB_CHECK_LAUNCH();
          },
          [&](int) { read_buffer(b.get(), flush, s); }) *
      1e6;
  r.mem_latency_us = std::max(0.0, cold_read_us - one_block_us);  // both one block
  r.cold_read_us = cold_read_us;
  r.one_block_us = one_block_us;

  r.graph_node_us = graph_node_us(s, grid_blocks, quick);
  return r;
}

}  // namespace kb
