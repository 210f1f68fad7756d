// An element-wise closeness check, to go with kb::compare's relative L2
// error: a norm hides a handful of wrong elements (one bad tile edge in a
// large output), a per-element bound does not.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kb {

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
