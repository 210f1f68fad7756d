// The probe's ideal kernels: the simplest kernels that stream bytes, the
// speed of light of memory-bound work (the target file's `measured.ladder`);
// `roofline_ideal` times them in every run, so that each run shows the
// roofline attained (docs/metrics.md "The roofline").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace kb {

enum class Ideal {
  read_sweep,   // grid-stride read, 4 blocks of 512 threads per SM, 8 loads in flight
  read_chunks,  // one contiguous 32 KB chunk per block of 128 threads, 8 loads in flight
  copy_sweep,   // grid-stride copy, 4 blocks of 512 threads per SM, 4 vectors in flight
  copy_chunks,  // one contiguous 32 KB chunk per block of 128 threads, 8 vectors in flight
  copy_wave,    // one round trip a thread: all its 1-8 vectors loaded, then stored; <= 4 blocks
                // of 128 threads per SM up to 17 MB moved (small and mid-size copies)
  copy_memcpy,  // cudaMemcpyAsync device to device (not ours: the copy ladder's check)
};
inline constexpr Ideal kIdealReads[] = {Ideal::read_sweep, Ideal::read_chunks};
inline constexpr Ideal kIdealCopies[] = {Ideal::copy_sweep, Ideal::copy_chunks, Ideal::copy_wave,
                                         Ideal::copy_memcpy};

const char* ideal_name(Ideal k);  // "read_sweep", ...
bool ideal_writes(Ideal k);       // a copy

// One launch that moves `bytes` (a multiple of 32): a read, or a copy of
// bytes / 2. `sms` sizes the sweeps' grids; `sink` (one int) keeps reads
// from being dropped. Throws kb::CudaError.
void launch_ideal(Ideal k, const void* src, void* dst, size_t bytes, int sms, int* sink,
                  cudaStream_t stream);

// copy_wave's kernel in any configuration (the lab sweeps them): a copy of
// `bytes` (a multiple of 16) by blocks of `threads` (64-512), each thread
// loading its `vectors` (1-8) 16-byte vectors before storing them
// (st.global.cs with `streaming_stores`). Throws std::invalid_argument for
// another configuration, kb::CudaError.
void launch_copy_wave(const void* src, void* dst, size_t bytes, int threads, int vectors,
                      bool streaming_stores, cudaStream_t stream);

// `links` launches of read_chunks, each reading the next bytes / links of
// `src`: the chain that measures what each further launch costs.
void launch_ideal_chain(const void* src, size_t bytes, int links, int sms, int* sink,
                        cudaStream_t stream);

}  // namespace kb
