// A block's timeline (diagnostics, tools/decode_profile --timeline): thread
// 0 of a block writes %globaltimer (ns, the GPU's clock, common to all SMs)
// at four points of the block's life into its line of 4 words:
//   [0] start   [1] the dependency wait returned   [2] its main work done
//   (a gemv: its weights streamed)   [3] end (where thread 0 returns; a
// block whose thread 0 leaves early may lack it). A launch that is not
// traced (a null pointer) writes nothing. Only in a build configured with
// -DKBENCH_TIMELINE=ON: otherwise stamp() is empty and the kernels are the
// same code as without it (with the pointer's test alone the o projection's
// kernel took 64 registers instead of 61, the qkv's 59).
#pragma once

namespace kb {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Stamp k of this block's line in `timeline` (4 words a block, blocks in
// blockIdx.y · gridDim.x + blockIdx.x order), by thread 0; nothing when
// `timeline` is null. It keeps no register live between stamps: the
// pointer is the kernel's parameter, the line is computed again each time.
#ifdef KBENCH_TIMELINE
constexpr bool kTimelineBuilt = true;
__device__ __forceinline__ void stamp(unsigned long long* timeline, int k) {
  if (timeline && threadIdx.x == 0)
    timeline[4 * (size_t(blockIdx.y) * gridDim.x + blockIdx.x) + k] = global_ns();
}
#else
constexpr bool kTimelineBuilt = false;
__device__ __forceinline__ void stamp(unsigned long long*, int) {}
#endif

}  // namespace kb
