// The sibling check: in the newest run of each GPU model, each GPU's rows
// against the median of its siblings'; one behind names a board, not the
// code (docs/gate.md "Several GPUs, siblings and shards").
#pragma once

#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

struct SiblingOptions {
  double threshold = 0.05;  // behind the siblings' median by this much
  size_t min_points = 3;    // measured points behind that name a GPU (one ceiling suffices)
};

// What a row of the run is to the sibling check.
enum class SiblingRole {
  not_the_board,  // not compared: compilation_time(s), the probe's times
  ceiling,        // the probe's bandwidths and throughputs: one behind names the GPU
  point_metric,   // a metric of a measured point (its name, shape and dtype)
};
SiblingRole sibling_role(const Key& k);

struct SiblingRow {
  std::string key;  // "gemv [N=4096;K=4096] int8 memory_bandwidth(GB/s)"
  double value = 0, siblings_median = 0;
  double behind = 0;  // 0.07 = 7% worse than the siblings' median
};

// A measured point (name, shape, dtype: one timing) behind on some metric.
struct SiblingPoint {
  std::string point;             // "gemm [M=4096;N=4096;K=14336] bfloat16"
  double behind = 0;             // its worst row's
  std::vector<SiblingRow> rows;  // its rows behind by >= threshold, worst first
};

struct SiblingGpu {
  std::string gpu;                          // GpuId::label()
  size_t points_compared = 0;               // measured points with siblings
  size_t ceilings_compared = 0;             // ceiling rows with siblings
  std::vector<SiblingPoint> points_behind;  // by >= threshold, worst first
  std::vector<SiblingRow> ceilings_behind;  // by >= threshold, worst first
  double median_behind = 0;                 // over its points (each its rows' median)
  bool named = false;
  std::string why;  // for a named GPU: "behind its 3 sibling(s) ... on 1 ceiling(s) ..."
};

struct SiblingReport {
  std::string arch, run;
  size_t siblings = 0;           // GPUs of this model in the run
  size_t rows_not_compared = 0;  // rows of those GPUs that are not the board's
  std::vector<SiblingGpu> gpus;
};

// One report per GPU model whose newest run has two or more GPUs.
std::vector<SiblingReport> sibling_check(const History& h, const SiblingOptions& opt = {});

std::string sibling_text(const std::vector<SiblingReport>& reps, bool markdown);

}  // namespace kb
