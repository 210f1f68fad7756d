#include "kernels/common/cuda_check.h"
#include "kernels/common/delay.h"

namespace kb {

namespace {

__global__ void spin_cycles(int64_t cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

}  // namespace

void enqueue_delay(cudaStream_t stream, int64_t cycles) {
  spin_cycles<<<1, 1, 0, stream>>>(cycles);
  KB_CHECK_LAUNCH();
}

}  // namespace kb
