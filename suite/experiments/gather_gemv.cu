// gather_gemv: the seed's MoE expert selection at batch 1. W [E=8, D, D]
// (bf16, or int8 with per-row scales [E, D]); the ids of the 2 chosen
// experts live in device memory (the seed's [3, 5] when timed; every id is
// exercised by the checks); y [2, D] = W[ids] · x.
#include "suite/experiments/gemv_case.h"

namespace {
constexpr int kExperts = 8;
constexpr int kSelected = 2;
}  // namespace

KB_EXPERIMENT(gather_gemv) {
  return kb::Experiment("gather_gemv")
      .doc("y[s] = W[ids[s]]·x over E=8 experts, 2 chosen (ids in device memory); bf16 or int8")
      .axis("D", {1024, 4096, 8192, 16384})
      .dtypes({kb::DType::i8, kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .seed_mean()
      .work([](const kb::Point& p) { return kb::gemv_experiment::gemv_work(p, kSelected); })
      .make([](const kb::Point& p) {
        return std::make_unique<kb::gemv_experiment::GemvCase>(p, kExperts, kSelected,
                                                               std::vector<int32_t>{3, 5});
      });
}
