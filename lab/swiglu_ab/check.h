// The SwiGLU variants' check (lab; no CUDA call): h from a one-token
// gemv_swiglu whose weights are the GPU fill's (kernels/common/fill.h, so
// the reference recomputes only the rows it checks) against the fp64
// reference of gemv::gemv_swiglu_ref at those rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kb::lab::swiglu {

struct Inputs {
  bool int8 = false;
  uint64_t wseed = 0;        // W [2F, K] = fill_int8 / fill_bf16 from wseed
  std::vector<float> scale;  // int8: [2F]; bf16: empty
  std::vector<float> x;      // [K]
  int64_t F = 0, K = 0;
  float eps = 1e-5f;
};

struct RowsCheck {
  bool ok = false;
  std::string text;
};

// Every output finite (h [F], poisoned before the launch, so that an
// unwritten row shows) and each of `rows` within the bound of its
// reference: bf16 rounding (|ref| / 128) plus the fp32 sums' error
// (1e-4 of the sum of |w·x|, as the gemv rows' check) of g and u carried
// through silu(r·g)·(r·u).
RowsCheck check_rows(const Inputs& in, const std::vector<float>& h,
                     const std::vector<int64_t>& rows);

// Rows 0 and F - 1, then random ones from seed: n in all (every row where F <= n).
std::vector<int64_t> sample_rows(int64_t F, int n, uint64_t seed);

// int8 scales for which r·g and u are O(1) with the fill's weights (|m| <= 127)
// and x uniform in [-1, 1]: silu's curved part, not its tails.
float int8_scale_lo(int64_t K);
float int8_scale_hi(int64_t K);

}  // namespace kb::lab::swiglu
