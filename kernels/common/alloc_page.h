// KBENCH_ALLOC_PAGE=1 (a diagnostic, docs/decisions/0004-sub-allocated-buffers.md): every
// DeviceBuffer rounded up to whole 2 MiB pages, so that small buffers (a
// GEMV's x, y, scales, ids) each get pages of their own instead of sharing
// the pages the driver sub-allocates them from, and one buffer set's small
// inputs land independently of another's. For the A/B of the hypothesis
// that the int8 GEMVs' per-process state is where those small, every-block
// read buffers landed (lab/tools/env-ab.sh). Plain C++: tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace kb {

inline constexpr size_t kAllocPage = size_t(2) << 20;

// `bytes` rounded up to whole pages when `page`, else as asked.
// A count so large that rounding it up would wrap around stays as asked
// (cudaMalloc then refuses it: out of memory, never a small buffer).
inline size_t allocation_bytes(size_t bytes, bool page) {
  if (!page || bytes > SIZE_MAX - (kAllocPage - 1)) return bytes;
  return (bytes + kAllocPage - 1) / kAllocPage * kAllocPage;
}

// As above, `page` from KBENCH_ALLOC_PAGE (set and not "0"), read per call:
// an allocation costs far more than a getenv.
inline size_t allocation_bytes(size_t bytes) {
  const char* v = std::getenv("KBENCH_ALLOC_PAGE");
  return allocation_bytes(bytes, v && *v && !(v[0] == '0' && v[1] == 0));
}

}  // namespace kb
