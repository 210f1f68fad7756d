#include "kernels/common/allclose.h"

#include <cmath>
#include <cstdio>

namespace kb {

std::string Compare::text() const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "rel L2 err %.3g, max abs err %.3g at [%zu], %zu non-finite",
                rel_l2, max_abs, worst, nonfinite);
  return buf;
}

Compare compare(const std::vector<float>& out, const std::vector<float>& ref, double rel_tol) {
  Compare c;
  if (out.size() != ref.size()) {
    c.nonfinite = out.size() > ref.size() ? out.size() - ref.size() : ref.size() - out.size();
    return c;
  }
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      ++c.nonfinite;
      continue;
    }
    double d = static_cast<double>(out[i]) - ref[i];
    num += d * d;
    den += static_cast<double>(ref[i]) * ref[i];
    if (std::fabs(d) > c.max_abs) {
      c.max_abs = std::fabs(d);
      c.worst = i;
    }
  }
  c.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  c.ok = c.nonfinite == 0 && c.rel_l2 <= rel_tol;
  return c;
}

std::string AllClose::text() const {
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "%zu elements out of tolerance, %zu non-finite; worst at [%zu]: %.6g vs ref %.6g",
                bad, nonfinite, worst, worst_out, worst_ref);
  return buf;
}

AllClose allclose(const std::vector<float>& out, const std::vector<float>& ref, double rtol,
                  double atol) {
  AllClose c;
  if (out.size() != ref.size()) {
    c.bad = out.size() > ref.size() ? out.size() - ref.size() : ref.size() - out.size();
    return c;
  }
  double worst_excess = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      if (c.nonfinite++ == 0 && worst_excess < 0) {
        c.worst = i;
        c.worst_out = out[i];
        c.worst_ref = ref[i];
      }
      continue;
    }
    const double excess = std::fabs(double(out[i]) - ref[i]) - (atol + rtol * std::fabs(ref[i]));
    if (excess > 0) ++c.bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      c.worst = i;
      c.worst_out = out[i];
      c.worst_ref = ref[i];
    }
  }
  c.ok = c.bad == 0 && c.nonfinite == 0;
  return c;
}

double rms(const std::vector<float>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

}  // namespace kb
