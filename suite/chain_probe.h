// The further-launch part of the speed-of-light ladder: which chains of
// roofline_ideal `kbench probe` measures as rows are measured, and how their
// times become the target file's *_extra_by_link (docs/decisions/0009).
// No CUDA here: the CPU tests use it.
#pragma once

#include <string>
#include <vector>

#include "core/roofline.h"
#include "core/types.h"

namespace kb {

inline constexpr int kChainLinks = 8;  // kernels in a chain: roofline_ideal's read_chunks_x8_*
inline constexpr const char kChainExperiment[] = "roofline_ideal";
inline constexpr const char kStreamChain[] = "read_chunks_x8_stream";
inline constexpr const char kGraphChain[] = "read_chunks_x8_graph";
// The label of roofline_ideal's kernel in its shapes (variant_in_shape).
inline constexpr const char kIdealShapeLabel[] = "kernel";

// The chains' bytes: 8, 16, 64 and 512 MB, those not above `max_bytes`.
std::vector<double> chain_bytes(double max_bytes);

// The chain points at chain_bytes(max_bytes) in the order a run's worker
// measures them: every stream chain, smallest first, then every graph one.
std::vector<Point> chain_points(double max_bytes);

// What a chain worker measures: roofline_ideal's points as a run's worker
// does, then the chains not among them; `*at` gets each chain's index.
std::vector<Point> chain_worker_points(const std::vector<Point>& experiment,
                                       const std::vector<Point>& chains, std::vector<size_t>* at);

// The chains' worker processes, as many as a row's (a launch's cost is a
// state of the process).
inline constexpr int kChainProcesses = 3;

// Per point, the mean of `per_process[i][point]` over i. Throws
// std::invalid_argument with no process or when the counts differ.
std::vector<double> mean_over_processes(const std::vector<std::vector<double>>& per_process);

// sol's *_extra_by_link and *_extra_us from each chain's time (in the order
// of `points`); a report line per chain. std::invalid_argument for counts
// that differ or a missing or double chain.
std::vector<std::string> set_further_launches(SpeedOfLight& sol, const std::vector<Point>& points,
                                              const std::vector<double>& seconds);

// A rung the chain workers timed faster takes their time (a bound must hold
// for rows); a line per rung changed. std::invalid_argument for counts that differ.
std::vector<std::string> fold_worker_rungs(SpeedOfLight& sol, const std::vector<Point>& points,
                                           const std::vector<double>& seconds,
                                           const std::vector<std::string>& read_kernels,
                                           const std::vector<std::string>& copy_kernels);

}  // namespace kb
