// _selftest_isolation: proves that the runner survives what kills a
// process. Points 0, 2 and 4 copy a buffer; point 1 faults inside a kernel
// (a sticky CUDA error that poisons the context); point 3 aborts the
// process. Expected rows: ok, failed, ok, failed, ok. Compiled into the
// test-only `kbench_selftest` (kbench's CLI with this experiment alone),
// which the CLI tests run with `--filter _selftest_isolation`.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "suite/experiment.h"

namespace {

__global__ void selftest_copy(const float* __restrict__ a, float* __restrict__ b, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    b[i] = a[i];
}

__global__ void selftest_fault(float* p) { p[int64_t(1) << 40] = 1.f; }

class SelftestCase : public kb::Case {
 public:
  explicit SelftestCase(int64_t kind) : kind_(kind), a_(kN), b_(kN) {}
  void run(cudaStream_t s) override {
    if (kind_ == 1) {
      selftest_fault<<<1, 1, 0, s>>>(b_.get());
    } else {
      selftest_copy<<<256, 256, 0, s>>>(a_.get(), b_.get(), kN);
    }
    KB_CHECK_LAUNCH();
  }
  kb::Check check(cudaStream_t s, uint64_t seed) override {
    if (kind_ == 3) std::abort();
    auto in = kb::random_uniform(kN, seed);
    a_.upload(in);
    b_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    auto c = kb::compare(b_.download(), in, 0);
    return c.ok ? kb::Check::pass(c.text()) : kb::Check::fail(c.text());
  }

 private:
  static constexpr int64_t kN = 1 << 20;
  int64_t kind_;
  kb::DeviceBuffer<float> a_, b_;
};

}  // namespace

KB_EXPERIMENT(selftest_isolation) {
  return kb::Experiment("_selftest_isolation")
      .doc("runner self-test: a kernel fault and a crash among good points")
      .axis("case", {0, 1, 2, 3, 4})
      .dtypes({kb::DType::f32})
      .metrics({kb::Metric::memory_bandwidth})
      .work([](const kb::Point&) {
        kb::Work w;
        w.bytes = 2.0 * (1 << 20) * 4;
        w.bound = kb::Bound::copy;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<SelftestCase>(p["case"]); });
}
