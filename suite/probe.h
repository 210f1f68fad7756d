// Measures the ceilings of the GPU a run is on (docs/metrics.md "The roofline"): the
// read-only and copy bandwidth of streaming kernels, the event-timed
// duration of an empty kernel with a grid that can stream (4 blocks of 128
// threads per SM) and of one such node of a captured graph, and the HBM
// round trip of a one-vector read on a cold L2. Used by
// `kbench probe` (to draft a target file) and at the start of `kbench run`
// (as rows, so each CSV carries the ceilings measured in the same run).
#pragma once

#include <cuda_runtime.h>

#include "core/roofline.h"
#include "kernels/common/read_buffer.h"  // read_buffer: the engine's L2 flush

namespace kb {

struct ProbeResult {
  double read_gbps = 0, copy_gbps = 0, memcpy_gbps = 0;
  double launch_us = 0, graph_node_us = 0;
  double mem_latency_us = 0;                  // cold one-vector read minus a one-block empty kernel
  double cold_read_us = 0, one_block_us = 0;  // its two medians (not sent to workers)
  double bytes = 0;                           // buffer size used for the bandwidth probes
};

// `quick` uses fewer repetitions. Throws kb::CudaError.
ProbeResult probe_ceilings(cudaStream_t stream, size_t mem_bytes, bool quick);

}  // namespace kb
