// A delay on the GPU: one thread that spins for a number of SM clock
// cycles. The engine enqueues it inside the timed window of a sample to
// make an experiment slower by a set fraction, for validating the gate
// only (kbench run --inject-slowdown; never on by default).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kb {

// Enqueues a <<<1, 1>>> kernel on `stream` that spins for `cycles` SM cycles
// (0: returns at once; the launch itself still costs its gap).
void enqueue_delay(cudaStream_t stream, int64_t cycles);

}  // namespace kb
