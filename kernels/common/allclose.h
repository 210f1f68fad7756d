// Comparisons of an output with its CPU reference (no CUDA header). A
// relative L2 error (compare) hides a few wrong elements, an element-wise
// bound (allclose) does not: a check that decides correctness uses allclose.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kb {

struct Compare {
  bool ok = false;
  double rel_l2 = 0;     // ||out - ref|| / ||ref||
  double max_abs = 0;    // max |out - ref|
  size_t worst = 0;      // index of max_abs
  size_t nonfinite = 0;  // NaN/inf outputs (unwritten poisoned elements show here)
  std::string text() const;
};
// ok when every output is finite and ||out - ref|| / ||ref|| <= rel_tol.
Compare compare(const std::vector<float>& out, const std::vector<float>& ref, double rel_tol);

struct AllClose {
  bool ok = false;
  size_t bad = 0;        // elements with |out - ref| > atol + rtol * |ref|
  size_t nonfinite = 0;  // NaN/inf outputs (unwritten poisoned elements)
  size_t worst = 0;      // index of the largest excess over the bound
  double worst_out = 0, worst_ref = 0;
  std::string text() const;
};

// ok when every output is finite and |out[i] - ref[i]| <= atol + rtol * |ref[i]|.
AllClose allclose(const std::vector<float>& out, const std::vector<float>& ref, double rtol,
                  double atol);

// Root mean square of v (to scale an absolute tolerance to the data).
double rms(const std::vector<float>& v);

}  // namespace kb
