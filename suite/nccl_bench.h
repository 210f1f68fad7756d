// NCCL collectives as rows: all-reduce and all-gather across the GPUs of one
// run, at the sizes tensor-parallel decode moves (hidden 4096, bf16, 1 to 16
// tokens: 8 to 128 KiB; reported as latency in us) and at 256 MiB and 1 GiB
// (the bus ceiling; algorithm and bus bandwidth as nccl-tests defines them:
// algbw = bytes / time, busbw = algbw * 2(n-1)/n for all-reduce, (n-1)/n for
// all-gather, whose bytes are the gathered whole). Each is measured in one
// worker process driving every GPU of the run (one NCCL rank per GPU), once
// per run, after the per-GPU chains, against a link roofline measured there
// (each GPU writing to the next over peer access, all at once: a ring).
//
// Never a hang: communicators are nonblocking, every wait polls
// ncclCommGetAsyncError against a deadline and aborts them on expiry. NVLink
// multicast (NVLS) stays off: kbench sets NCCL_NVLS_ENABLE=0 in its own
// environment before anything starts, and every worker inherits it.
// Without NCCL at build time, or with one GPU, the rows are `skipped`.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "suite/rows.h"

namespace kb {

// "nccl_all_gather", "nccl_all_reduce".
std::vector<std::string> collective_names();
// Those `filter` selects as --filter selects experiments ("" = all).
std::vector<std::string> collectives_matching(const std::string& filter);
std::string collective_axes_text();  // for `kbench list`

struct CollectivePoint {
  std::string shape;   // "bytes=8192" (rows add ";ranks=N")
  size_t bytes = 0;    // all-reduce: each rank's buffer; all-gather: the gathered whole
  bool small = false;  // latency(us) row; else algorithm and bus bandwidth rows
};
std::vector<CollectivePoint> collective_points(const std::string& name);

// Whether this build has NCCL; `why` says what is missing when not.
bool nccl_built(std::string* why);

// The rows of one collective's points, every one with `status` and
// `message` (skipped: one GPU, no NCCL; failed: the worker died).
std::vector<Record> collective_status_rows(const std::string& name, int ranks,
                                           const std::string& status, const std::string& message,
                                           const RunInfo& info, const GpuIdentity& gpu);

// The worker's side: measures `name` across `devices` and returns its rows
// (and the ring's link_bandwidth roofline_probe row). Throws on an error
// that leaves no row (the caller makes them failed).
std::vector<Record> measure_collective(const std::string& name, const std::vector<int>& devices,
                                       const RunInfo& info, double timeout_s, bool quick);

}  // namespace kb
