// gemv: the seed's batch-1 GEMV, y = W·x with W [N, K] in bf16 or int8
// weight-only (per-row bf16 scale), x and y bf16, fp32 accumulation, at the
// seed's square D and the Llama-2-7B decode step's shapes (their variant
// adds the decoder's choice where it differs: "decode=R2U1W4P1K2").
#include "suite/experiments/gemv_case.h"

KB_EXPERIMENT(gemv) {
  using kb::Shape;
  return kb::Experiment("gemv")
      .doc("y = W·x, W [N,K] bf16 or int8 weight-only with per-row scale; fp32 accumulation")
      .axis("D", {1024, 4096, 8192, 16384})
      .point(Shape{{"N", 4096}, {"K", 4096}})   // Llama-2-7B attention output
      .point(Shape{{"N", 12288}, {"K", 4096}})  // fused QKV
      .point(Shape{{"N", 22016}, {"K", 4096}})  // fused gate + up
      .point(Shape{{"N", 4096}, {"K", 11008}})  // down
      .point(Shape{{"N", 32000}, {"K", 4096}})  // LM head
      .dtypes({kb::DType::i8, kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .seed_mean()
      .work([](const kb::Point& p) { return kb::gemv_experiment::gemv_work(p, 1); })
      .make([](const kb::Point& p) {
        return std::make_unique<kb::gemv_experiment::GemvCase>(p, 1, 1, std::vector<int32_t>{},
                                                               p.shape.has("N"));
      });
}
