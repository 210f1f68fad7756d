// Reading a buffer once, every 16-byte vector: the L2 flush before each
// timed sample (the engine, the profilers) and the probe's grid-stride read
// ceiling. Reading leaves clean lines, so the timed kernel that follows
// pays no write-back of the flush buffer (a memset leaves dirty lines: a
// GEMV timed after a 100 MB memset ran 10% slower).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace kb {

// Reads `bytes` (a multiple of 16) at `p` on `stream` with `blocks` blocks
// of 512 threads (8 loads in flight each); nothing is written unless the
// xor of all it read hits a value it never takes (then into *sink, if set).
void read_buffer(const void* p, size_t bytes, cudaStream_t stream, unsigned blocks = 1024,
                 int* sink = nullptr);

}  // namespace kb
