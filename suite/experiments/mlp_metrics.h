// mlp_layer_norm_gelu.cu's own metric. CUDA-free, so that the CPU tests pin it.
#pragma once

#include <optional>

#include "core/roofline.h"

namespace kb::mlp_metrics {

inline std::optional<double> companion_ratio(const MetricInput& in) { return in.companion_ratio; }

// The MLP's two GEMMs alone (its Case::companion) over the whole MLP.
inline constexpr Metric kGemmShare =
    Metric("gemm_share", &companion_ratio)
        .without_roofline()
        .undefined_means("metric undefined: no companion was timed");

}  // namespace kb::mlp_metrics
