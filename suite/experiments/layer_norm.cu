// layer_norm: the seed's LayerNorm bandwidth experiment, bf16 [BS=4096, D]
// with bf16 weight and bias; bytes as the seed counts them: 2·BS·D·2.
#include <memory>

#include "suite/experiments/layer_norm_case.h"

KB_EXPERIMENT(layer_norm) {
  return kb::Experiment("layer_norm")
      .doc("LayerNorm over the last dim, bf16 in/out with bf16 weight+bias, fp32 statistics")
      .axis("BS", {4096})
      .axis("D", {1024, 4096, 8192, 16384})
      .dtypes({kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .seed_mean()
      .work([](const kb::Point& p) {
        kb::Work w;
        w.bytes = 2.0 * p["BS"] * p["D"] * kb::dtype_size(p.dtype);
        w.bound = kb::Bound::copy;  // reads and writes the same amount
        return w;
      })
      .make([](const kb::Point& p) {
        return std::make_unique<kb::layer_norm_experiment::LayerNormCase>(p);
      });
}
