// The CPU side of rms_norm (rms_norm.h): its reference and the check of a
// kernel's output; no CUDA header (the CPU tests link it).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/allclose.h"

namespace kb::rms_norm {

// y[r, i] = x[r, i] / sqrt(mean_i(x[r, i]²) + eps) · w[i] (w nullptr: 1), in fp64,
// fp32 out.
void rms_norm_ref(const float* x, const float* w, float* y, int64_t rows, int64_t D, float eps);

// Whether a kernel's bf16 output (as floats) is rms_norm_ref's `ref`:
// every element finite and within 2^-8 · |ref| + 1e-4 · rms(ref) of it.
//   2^-8 · |ref|: the output's rounding to bf16 (half an ulp);
//   1e-4 · rms:   the kernel's fp32 sums against the reference's fp64 (up
//                 to 6e-6 relative at D = 16384 with sequential fp32
//                 sums), and values near zero.
AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref);

}  // namespace kb::rms_norm
