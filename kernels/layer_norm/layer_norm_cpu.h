// The CPU side of layer_norm (kernels/layer_norm/layer_norm.h): its
// activations, its reference and the check of a kernel's output against
// that reference. No CUDA header: the CPU tests use all three (every
// kernels/*/*_cpu.cpp is compiled into kbench_checks, which they link).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/allclose.h"

namespace kb::layer_norm {

enum class Activation { none, gelu_tanh, gelu_erf };

// CPU reference in fp64 on the same inputs (two-pass statistics), fp32 out.
void layer_norm_ref(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                    int64_t D, float eps, Activation act, const float* bias = nullptr);

// Whether a kernel's bf16 output (as floats) is layer_norm_ref's `ref`,
// element by element: every element finite and within
// 2^-8 · |ref| + 1e-4 · rms(ref) of its reference.
//   2^-8 · |ref|: the output's rounding to bf16 (8 significant bits, round
//                 to nearest: at most half an ulp, 2^-8 of the value);
//   1e-4 · rms:   the kernel's fp32 statistics against the reference's fp64,
//                 which may also move a value across a bf16 rounding
//                 boundary: under 5e-6 of rms(ref) even with sequential fp32
//                 sums over 65544 elements (tests/cpu/test_layer_norm_check.cpp),
//                 the kernel's partial sums err less. It also bounds values
//                 near zero, where the relative term is no bound.
// So a wrong element passes only within about 0.4% of its reference. A
// relative L2 bound (the check before this one: 8e-3) let 270 elements off
// by 1.0 through at BS = 4096, D = 1024 (kb::allclose's header says why).
AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref);

}  // namespace kb::layer_norm
