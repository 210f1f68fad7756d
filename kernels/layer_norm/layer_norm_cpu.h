// The CPU side of layer_norm (layer_norm.h): its reference and the check of
// a kernel's output; no CUDA header (the CPU tests link it).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/allclose.h"

namespace kb::layer_norm {

enum class Activation { none, gelu_erf };

// CPU reference in fp64 on the same inputs (two-pass statistics), fp32 out.
void layer_norm_ref(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                    int64_t D, float eps, Activation act, const float* bias = nullptr);

// Whether a kernel's bf16 output (as floats) is layer_norm_ref's `ref`:
// every element finite and within 2^-8 · |ref| + 1e-4 · rms(ref) of it.
//   2^-8 · |ref|: the output's rounding to bf16 (half an ulp);
//   1e-4 · rms:   the kernel's fp32 statistics against the reference's fp64
//                 (under 5e-6 of rms even with sequential fp32 sums over
//                 65544 elements), and values near zero.
AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref);

}  // namespace kb::layer_norm
