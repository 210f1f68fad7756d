// Host-side helpers for CPU references and checks: bf16 conversion and
// seeded random data (the comparisons are in allclose.h).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

#include "kernels/common/allclose.h"

namespace kb {

using bf16 = __nv_bfloat16;

float bf16_to_float(bf16 v);
bf16 float_to_bf16(float v);  // round to nearest even

// Deterministic uniform random data from `seed` (splitmix64).
std::vector<float> random_uniform(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f);
std::vector<bf16> random_bf16(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f);
std::vector<int8_t> random_int8(size_t n, uint64_t seed);  // uniform in [-127, 127]
std::vector<float> to_float(const std::vector<bf16>& v);
std::vector<bf16> to_bf16(const std::vector<float>& v);  // round to nearest even

}  // namespace kb
