// The GPU's ceilings (docs/metrics.md "The roofline"): read and copy
// bandwidth, an empty kernel's and graph node's time, the HBM round trip;
// for `kbench probe` and as the first rows of every `kbench run`.
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
