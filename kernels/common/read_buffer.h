// Reading a buffer once: the L2 flush before each timed sample and the
// probe's read ceiling. Reading leaves clean lines, so the timed kernel pays
// no write-back of the flush buffer (as it would after a memset).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace kb {

// Reads `bytes` (a multiple of 16) at `p` with `blocks` blocks of 512
// threads; nothing is written (*sink only if the xor of all it read hits a
// value it never takes).
void read_buffer(const void* p, size_t bytes, cudaStream_t stream, unsigned blocks = 1024,
                 int* sink = nullptr);

}  // namespace kb
