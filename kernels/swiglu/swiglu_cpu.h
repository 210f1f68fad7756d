// The CPU side of swiglu (swiglu.h): its reference and the check of a
// kernel's output; no CUDA header (the CPU tests link it).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/allclose.h"

namespace kb::swiglu {

// y[t, i] = silu(g[t, i]) · u[t, i], silu(z) = z / (1 + e^-z), where row t
// of gu is [g[t, 0..F), u[t, 0..F)] (gu is [tokens, 2F], y [tokens, F]).
// In fp64, fp32 out.
void swiglu_ref(const float* gu, float* y, int64_t tokens, int64_t F);

// Whether a kernel's bf16 output (as floats) is swiglu_ref's `ref`: every
// element finite and within (2^-8 + 2^-16) · |ref| + 1e-6 · rms(ref) of it.
//   2^-8 · |ref|:  the output's rounding to bf16 (half an ulp);
//   2^-16 · |ref|: the kernel's fp32 arithmetic (about 5 fp32 ulps, relative);
//   1e-6 · rms:    values near zero (below g = -87.3 the kernel gives 0).
AllClose check_output(const std::vector<float>& out, const std::vector<float>& ref);

}  // namespace kb::swiglu
