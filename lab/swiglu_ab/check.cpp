// The SwiGLU variants' check (check.h).
#include "lab/swiglu_ab/check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "kernels/common/fill.h"

namespace kb::lab::swiglu {

namespace {

// One row's dot product with x in fp64 and the sum of its terms' magnitudes.
struct Dot {
  double sum = 0, mag = 0;
};

Dot row_dot(const Inputs& in, int64_t row) {
  Dot d;
  const uint64_t base = static_cast<uint64_t>(row) * in.K;
  for (int64_t k = 0; k < in.K; ++k) {
    const double w = in.int8 ? fill_value(in.wseed, base + k) : fill_bf16_value(in.wseed, base + k);
    d.sum += w * in.x[k];
    d.mag += std::fabs(w * in.x[k]);
  }
  return d;
}

double rms_factor(const Inputs& in) {
  double ss = 0;
  for (float v : in.x) ss += double(v) * v;
  return 1.0 / std::sqrt(ss / in.K + in.eps);
}

}  // namespace

RowsCheck check_rows(const Inputs& in, const std::vector<float>& h,
                     const std::vector<int64_t>& rows) {
  size_t nonfinite = 0;
  for (float v : h)
    if (!std::isfinite(v)) ++nonfinite;
  const double r = rms_factor(in);
  double worst = 0;
  char where[160] = "";
  for (int64_t i : rows) {
    const Dot dg = row_dot(in, i), du = row_dot(in, in.F + i);
    const double sg = in.int8 ? in.scale[i] : 1.0, su = in.int8 ? in.scale[in.F + i] : 1.0;
    const double g = r * dg.sum * sg, u = r * du.sum * su;  // r·g and r·u
    const double ref = g / (1 + std::exp(-g)) * u;
    const double eg = r * 1e-4 * dg.mag * sg, eu = r * 1e-4 * du.mag * su;
    // |silu'| <= 1.1 and |silu(g)| <= |g| + 0.28.
    const double bound =
        std::fabs(ref) / 128 + 1.1 * std::fabs(u) * eg + (std::fabs(g) + 0.28) * eu + 1e-6;
    const double err = std::fabs(h[i] - ref) / bound;  // <= 1 passes
    if (!(err <= worst)) {
      worst = std::isfinite(err) ? err : INFINITY;
      std::snprintf(where, sizeof where, "row %lld: got %.6g, want %.6g", (long long)i, h[i], ref);
    }
  }
  char text[320];
  std::snprintf(text, sizeof text,
                "%zu rows of %lld, worst error %.3g of bound (%s), %zu non-finite", rows.size(),
                (long long)in.F, worst, where, nonfinite);
  return {worst <= 1.0 && nonfinite == 0, text};
}

std::vector<int64_t> sample_rows(int64_t F, int n, uint64_t seed) {
  std::vector<int64_t> rows;
  if (F <= n) {
    for (int64_t i = 0; i < F; ++i) rows.push_back(i);
    return rows;
  }
  rows = {0, F - 1};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, F - 1);
  while (static_cast<int>(rows.size()) < n) rows.push_back(pick(rng));
  return rows;
}

// The fill's m has E[m²] = 127·128/3 and x uniform in [-1, 1] has r² =
// 1 / E[x²], so r·(W[i]·x) has a standard deviation of sqrt(K·E[m²]) =
// 73.6·sqrt(K) per unit of scale: scales of 0.2 to 1.2 over that.
float int8_scale_lo(int64_t K) { return 0.2f / (73.6f * std::sqrt(float(K))); }
float int8_scale_hi(int64_t K) { return 1.2f / (73.6f * std::sqrt(float(K))); }

}  // namespace kb::lab::swiglu
