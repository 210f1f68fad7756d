// The further-launch part of the speed-of-light ladder (docs/metrics.md "The
// roofline"): which chains `kbench probe` measures, and how their times
// become the target file's launch_extra_by_link / graph_node_extra_by_link.
// The chains are points of the experiment roofline_ideal (8 ideal reads of
// bytes / 8: stream launches, or one replayed graph of 8 nodes), measured as
// that experiment's rows are: in worker processes of their own (`kbench
// __worker --measure`, suite/runner.h's measure_points_isolated), each
// measuring the whole experiment as a run's worker does, three of them and
// the mean per chain (as a row's time is the mean of its processes'). A row
// of such a chain gets t_min = the probe's time of that very chain, so
// the bound is only as good as that time is the row's.
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
// The label under which roofline_ideal's shapes name their kernel
// (Experiment::variant_in_shape): `bytes=16777216;kernel=read_chunks_x8_stream`.
inline constexpr const char kIdealShapeLabel[] = "kernel";

// The chains' bytes: 8, 16, 64 and 512 MB (links of 1, 2, 8 and 64 MB), those
// not above `max_bytes` (the ladder's largest rung), ascending.
std::vector<double> chain_bytes(double max_bytes);

// roofline_ideal's chain points at chain_bytes(max_bytes) (dtype int8, the
// kernel in the shape as the experiment's points have it), in
// the order a `kbench run` worker measures that experiment's chains (its
// variants outermost): every stream chain, smallest first, then every graph
// chain. Not all are points of the experiment (it has no 8 MB chain): the
// worker measures whatever points it is given.
std::vector<Point> chain_points(double max_bytes);

// What a chain worker measures: `experiment` (roofline_ideal's points that
// this GPU runs, in the experiment's order: what a `kbench run` worker of
// that experiment measures before and around its chains), then the chains
// that are not among them (the 8 MB ones); `*at` gets each chain's index in
// the result: the chains measured as rows are, in the same process history
// (docs/decisions/0009-chains-probed-in-worker-processes.md).
std::vector<Point> chain_worker_points(const std::vector<Point>& experiment,
                                       const std::vector<Point>& chains, std::vector<size_t>* at);

// Worker processes the probe measures the chains in, as many as a `kbench
// run` measures each row in, and the mean over them per point, as a row's
// time is: a stream launch's cost is a state of the process, so one
// process's time, or the fastest of several, gives a bound the rows do not
// attain (docs/decisions/0009-chains-probed-in-worker-processes.md).
inline constexpr int kChainProcesses = 3;

// Per point, the mean over the processes of its times (`per_process[i]`
// holds process i's times, every process the same points in the same
// order). Throws std::invalid_argument with no process or when the counts
// differ.
std::vector<double> mean_over_processes(const std::vector<std::vector<double>>& per_process);

// From each chain's measured time (`seconds`, in the order of `points`,
// as chain_points gives them or any other order) and the read ladder's one
// launch of the same bytes (sol.read, at least two rungs): per chain size,
// what each further launch and graph node costs (further_launch_seconds),
// as sol's launch_extra_by_link / graph_node_extra_by_link ([link bytes,
// us], ascending) and, the smallest over the sizes, launch_extra_us /
// graph_node_extra_us (0 with no chain). Returns the report's lines, per
// size the stream then the graph chain ("stream x8 16 MB: 32.35 us (one
// launch 9.60 us): +3.25 us a launch"). Throws std::invalid_argument when
// the counts differ, a point is not one of the two chains, or a size lacks
// one of them or has it twice.
std::vector<std::string> set_further_launches(SpeedOfLight& sol, const std::vector<Point>& points,
                                              const std::vector<double>& seconds);

// The single-launch rungs measured as rows are. The chain workers measure
// every point of roofline_ideal, its single launches too; where they timed
// one of the ladder's kernels (`read_kernels` / `copy_kernels`: the probe's
// ideal kernel names) at exactly a rung's bytes faster than the probe's own
// process timed that rung, the rung takes the workers' time (`seconds`, in
// the order of `points`), and the ladder is made monotone again: a bound
// must hold for the rows, and a launch-bound rung timed in the probe's
// process is that process's launch cost (0009). Points that are
// chains, other kernels or off-rung sizes are left alone. Returns a line per
// rung changed ("copy 65536 B: 3.456 -> 3.330 us (copy_memcpy, workers)").
// Throws std::invalid_argument when the counts differ.
std::vector<std::string> fold_worker_rungs(SpeedOfLight& sol, const std::vector<Point>& points,
                                           const std::vector<double>& seconds,
                                           const std::vector<std::string>& read_kernels,
                                           const std::vector<std::string>& copy_kernels);

}  // namespace kb
