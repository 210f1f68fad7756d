// _floor (lab): what the smallest kernels cost when timed as every
// experiment is (after the engine's L2 flush, median of samples), to set
// the launch-and-latency floor of the roofline against what a real
// memory-bound kernel must at least do. Cases:
//   0  empty kernel, 1 block of 32 threads (the probe's launch_us)
//   1  empty kernel, 512 blocks of 128 threads (the grid of gemv D=1024)
//   2  one thread reads one 16-byte vector, writes what depends on it
//      (the probe's cold read: launch_us + mem_latency_us)
//   3  512 blocks of 128 threads: each lane reads one 16-byte vector, each
//      warp reduces and writes one value (a GEMV of one load per lane:
//      1 MB read, the first byte of every warp after a cold L2)
//   4  as 3, and every lane also reads one of 128 vectors (2 KB) that all
//      warps share, as a GEMV's x
//   5  as 3 with 256 blocks and two loads per lane (the same 1 MB)
//   6  as 3, writing into a buffer of its own 2 MB page
//   7  as 3 with 1024 blocks (2 MB, the size of gemv bf16 D=1024)
//   8  as 3, each thread first reading an index (cold, as a gather's expert
//      id) that its address depends on
// Run with `kbench_lab run --filter _floor` (a -DKBENCH_LAB=ON build).
#include <memory>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "suite/experiment.h"

namespace {

__global__ void floor_empty() {}

__global__ void floor_read(const int4* __restrict__ p, int* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int4 v = __ldcs(p + i);
  int s = v.x ^ v.y ^ v.z ^ v.w;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s ^= __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) out[i >> 5] = s;
}

__global__ void floor_read_shared(const int4* __restrict__ p, const int4* __restrict__ x,
                                  int* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int4 v = __ldcs(p + i), w = __ldg(x + (threadIdx.x & 127));
  int s = v.x ^ v.y ^ v.z ^ v.w ^ w.x ^ w.w;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s ^= __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) out[i >> 5] = s;
}

__global__ void floor_read2(const int4* __restrict__ p, int* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x * 2 + threadIdx.x;
  const int4 v = __ldcs(p + i), u = __ldcs(p + i + blockDim.x);
  int s = v.x ^ v.y ^ v.z ^ v.w ^ u.x ^ u.w;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s ^= __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) out[(int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5] = s;
}

__global__ void floor_read_indexed(const int4* __restrict__ p, const int* __restrict__ index,
                                   int* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x + *index;
  const int4 v = __ldcs(p + i);
  int s = v.x ^ v.y ^ v.z ^ v.w;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s ^= __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) out[(i - *index) >> 5] = s;
}

constexpr int kBlocks = 512, kThreads = 128;

class FloorCase : public kb::Case {
 public:
  explicit FloorCase(int64_t kind)
      : kind_(kind),
        in_(size_t(kBlocks) * kThreads * 2),
        x_(128),
        out_(size_t(kBlocks) * kThreads * 2 / 32),
        far_((size_t(4) << 20) / sizeof(int)),
        index_(1) {
    KB_CUDA_CHECK(cudaMemset(index_.get(), 0, sizeof(int)));
    KB_CUDA_CHECK(cudaMemset(in_.get(), 0x11, in_.size() * sizeof(int4)));
    KB_CUDA_CHECK(cudaMemset(x_.get(), 0x22, x_.size() * sizeof(int4)));
  }
  void run(cudaStream_t s) override {
    switch (kind_) {
      case 0:
        floor_empty<<<1, 32, 0, s>>>();
        break;
      case 1:
        floor_empty<<<kBlocks, kThreads, 0, s>>>();
        break;
      case 2:
        floor_read<<<1, 1, 0, s>>>(in_.get(), out_.get());
        break;
      case 3:
        floor_read<<<kBlocks, kThreads, 0, s>>>(in_.get(), out_.get());
        break;
      case 4:
        floor_read_shared<<<kBlocks, kThreads, 0, s>>>(in_.get(), x_.get(), out_.get());
        break;
      case 5:
        floor_read2<<<kBlocks / 2, kThreads, 0, s>>>(in_.get(), out_.get());
        break;
      case 6:
        floor_read<<<kBlocks, kThreads, 0, s>>>(in_.get(),
                                                far_.get() + (size_t(2) << 20) / sizeof(int));
        break;
      case 7:
        floor_read<<<2 * kBlocks, kThreads, 0, s>>>(in_.get(), out_.get());
        break;
      default:
        floor_read_indexed<<<kBlocks, kThreads, 0, s>>>(in_.get(), index_.get(), out_.get());
        break;
    }
    KB_CHECK_LAUNCH();
  }
  kb::Check check(cudaStream_t s, uint64_t) override {
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    return kb::Check::pass("timing only");
  }

 private:
  int64_t kind_;
  kb::DeviceBuffer<int4> in_, x_;
  kb::DeviceBuffer<int> out_, far_, index_;
};

}  // namespace

KB_EXPERIMENT(floor_probe) {
  return kb::Experiment("_floor")
      .doc(
          "the smallest kernels timed as experiments are: empty and one-load, 1 block and a full "
          "grid")
      .axis("case", {0, 1, 2, 3, 4, 5, 6, 7, 8})
      .dtypes({kb::DType::bf16})
      .metrics({kb::Metric::latency_us})
      .work([](const kb::Point& p) {
        kb::Work w;
        const int64_t c = p["case"];
        w.bytes = c == 7   ? 2.0 * kBlocks * kThreads * 16
                  : c >= 3 ? double(kBlocks) * kThreads * 16
                  : c == 2 ? 16
                           : 0;
        w.bound = kb::Bound::read;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<FloorCase>(p["case"]); });
}
