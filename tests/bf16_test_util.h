// Host-side helpers for the tests of bf16 kernels and their checks, shared
// by the CPU and the GPU tests (no CUDA header): bf16 rounding, seeded
// random data rounded to bf16, and the probes that a check's own test
// plants in an output (a value past its rounding, NaN).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace kb::test {

// v rounded to the nearest bf16 (ties to even), as a float; what a
// kernel's bf16 store does to its fp32 result.
inline float round_bf16(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  b = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&v, &b, 4);
  return v;
}

inline std::vector<float> round_bf16(std::vector<float> v) {
  for (auto& x : v) x = round_bf16(x);
  return v;
}

// n values uniform in [lo, hi) from `seed` (the same on every platform's
// std::mt19937; the distribution's mapping is the standard library's),
// each rounded to bf16: inputs as a bf16 kernel reads them.
inline std::vector<float> uniform_bf16(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = round_bf16(u(rng));
  return v;
}

// A value two bf16 ulps and 0.01 away from `ref`: more than the output's
// rounding (half an ulp) and an fp32 computation's error may explain.
inline float past_rounding(float ref) { return ref + std::ldexp(std::fabs(ref), -6) + 0.01f; }

// The probes of an element-wise check (`check(out, ref)` returning a
// kb::AllClose): `out` must pass as it is; one element past its rounding
// at the start, the middle and the end must each be the one bad element,
// and one NaN there the one non-finite element.
template <typename CheckFn>
void expect_check_rejects_each_wrong_element(CheckFn check, const std::vector<float>& out,
                                             const std::vector<float>& ref) {
  const auto good = check(out, ref);
  EXPECT_TRUE(good.ok) << good.text();
  for (size_t i : {size_t{0}, out.size() / 2 + 5, out.size() - 1}) {
    SCOPED_TRACE("element " + std::to_string(i));
    auto wrong = out;
    wrong[i] = past_rounding(ref[i]);
    const auto one = check(wrong, ref);
    EXPECT_FALSE(one.ok);
    EXPECT_EQ(one.bad, 1u) << one.text();
    wrong[i] = NAN;
    const auto nan = check(wrong, ref);
    EXPECT_FALSE(nan.ok);
    EXPECT_EQ(nan.nonfinite, 1u) << nan.text();
  }
}

}  // namespace kb::test
