// The CPU side of rms_norm (kernels/rms_norm/rms_norm.h): its reference
// and the check of a kernel's output against it. No CUDA header: the CPU
// tests use both (every kernels/*/*_cpu.cpp is compiled into kbench_checks).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/allclose.h"

namespace kb::rms_norm {

// y[r, i] = x[r, i] / sqrt(mean_i(x[r, i]²) + eps) · w[i] (w nullptr: 1), in fp64,
// fp32 out.
void rms_norm_ref(const float* x, const float* w, float* y, int64_t rows, int64_t D, float eps);

// Whether a kernel's bf16 output (as floats) is rms_norm_ref's `ref`,
// element by element: every element finite and within
// 2^-8 · |ref| + 1e-4 · rms(ref) of its reference.
//   2^-8 · |ref|: the output's rounding to bf16 (half an ulp);
//   1e-4 · rms:   the kernel's fp32 sum of squares and products against
//                 the reference's fp64, which may move a value across a
//                 rounding boundary (relative errors up to 6e-6 at
//                 D = 16384 and 3e-5 at 65544 with sequential fp32 sums,
//                 tests/cpu/test_rms_norm_check.cpp; the kernel's partial
//                 sums err less), and values near zero.
AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref);

}  // namespace kb::rms_norm
