// The sibling check (bring-up, and every night of a host with several
// GPUs): in the newest run of each GPU model, each GPU's rows against the
// median of the same rows on its siblings (the other GPUs of that model in
// the run). A GPU is named when it is behind by at least `threshold` on a
// ceiling (a roofline_probe bandwidth or throughput: read, copy, ...) or on
// at least `min_rows` rows: a board that is slow is a finding about the
// board (clocks, power, HBM, PCIe/NVLink), as DCGM's diagnostics would
// report, not a regression of the code. The gate reports it on its own.
#pragma once

#include <string>
#include <vector>

#include "tools/kgate/history.h"

namespace kb {

struct SiblingOptions {
  double threshold = 0.05;  // behind the siblings' median by this much
  size_t min_rows = 3;      // rows behind that name a GPU (one ceiling suffices)
};

struct SiblingRow {
  std::string key;  // "gemv [N=4096;K=4096] int8 memory_bandwidth(GB/s)"
  double value = 0, siblings_median = 0;
  double behind = 0;  // 0.07 = 7% worse than the siblings' median
  bool ceiling = false;
};

struct SiblingGpu {
  std::string gpu;                 // GpuId::label()
  size_t compared = 0;             // rows compared with siblings
  size_t rows_behind = 0;          // rows (not ceilings) behind by >= threshold
  std::vector<SiblingRow> behind;  // every row or ceiling behind, worst first
  double median_behind = 0;        // over every compared row (its typical standing)
  bool named = false;
  std::string why;  // for a named GPU: "behind its 3 siblings on 1 ceiling (...) and 4 rows"
};

struct SiblingReport {
  std::string arch, run;
  size_t siblings = 0;  // GPUs of this model in the run
  std::vector<SiblingGpu> gpus;
};

// One report per GPU model whose newest run has two or more GPUs.
std::vector<SiblingReport> sibling_check(const History& h, const SiblingOptions& opt = {});

// The table, for the console and Markdown (`kgate siblings`).
std::string sibling_text(const std::vector<SiblingReport>& reps, bool markdown);

}  // namespace kb
