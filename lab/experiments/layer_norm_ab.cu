// _ln_ab (lab): the warp-row LayerNorm (D <= 2048) against shorter chains
// of statistics, measured as the layer_norm rows are (same bytes, inputs and
// CPU check), for docs/decisions/0058. Variants (axis v):
//   0  the product's kernel (kb::layer_norm: two butterflies in turn)
//   1  one butterfly of two independent sums of values shifted by the row's
//      first element (no division on the chain), one warp a row
//   2  as 1 with half a warp a row (16 rows a block, a 4-step butterfly)
// Run with `kbench_lab run --filter _ln_ab` (a -DKBENCH_LAB=ON build).
#include <memory>

#include "kernels/common/bf16x8.cuh"
#include "kernels/common/cuda_check.h"
#include "suite/experiments/layer_norm_case.h"

namespace {

using kb::bf16;
constexpr int kVec = kb::kBf16x8;

// LPR lanes a row, VPL vectors a lane; statistics of x - K, K = x[0].
template <int VPL, int LPR>
__global__ void __launch_bounds__(256)
    ln_shifted(const bf16* __restrict__ x, const bf16* __restrict__ gamma,
               const bf16* __restrict__ beta, bf16* __restrict__ y, int64_t rows, int D,
               float eps) {
  const int lane = threadIdx.x % LPR;
  int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / LPR;
  // Lanes past the last row redo it without storing: the shuffles take the
  // whole warp.
  const bool active = row < rows;
  if (!active) row = rows - 1;
  const int nvec = D / kVec;
  const bf16* xr = x + row * D;
  float v[VPL][kVec];
#pragma unroll
  for (int i = 0; i < VPL; ++i) kb::load_row_vec(xr, lane + i * LPR, nvec, v[i]);
  const float k = __bfloat162float(xr[0]);
  float s1 = 0.f, s2 = 0.f;
#pragma unroll
  for (int i = 0; i < VPL; ++i)
    if (lane + i * LPR < nvec)
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float d = v[i][j] - k;
        s1 += d;
        s2 = fmaf(d, d, s2);
      }
#pragma unroll
  for (int o = LPR / 2; o > 0; o >>= 1) {
    s1 += __shfl_xor_sync(0xffffffffu, s1, o);
    s2 += __shfl_xor_sync(0xffffffffu, s2, o);
  }
  const float inv_d = 1.f / static_cast<float>(D);
  const float dm = s1 * inv_d;
  const float mean = k + dm;
  const float rstd = rsqrtf(fmaxf(fmaf(s2, inv_d, -dm * dm), 0.f) + eps);
  bf16* yr = y + row * D;
#pragma unroll
  for (int i = 0; i < VPL; ++i) {
    const int c = lane + i * LPR;
    if (c >= nvec || !active) continue;
    float g[kVec], b[kVec];
    kb::load_param(gamma, c, g);
    kb::load_param(beta, c, b);
    kb::Bf16x8 out;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      out.h[j] =
          __floats2bfloat162_rn(fmaf((v[i][2 * j] - mean) * rstd, g[2 * j], b[2 * j]),
                                fmaf((v[i][2 * j + 1] - mean) * rstd, g[2 * j + 1], b[2 * j + 1]));
    kb::store_stream(yr + int64_t(c) * kVec, out);
  }
}

template <int VPL, int LPR>
void launch_shifted(const bf16* x, const bf16* g, const bf16* b, bf16* y, int64_t rows, int D,
                    float eps, cudaStream_t s) {
  const int64_t blocks = (rows * LPR + 255) / 256;
  ln_shifted<VPL, LPR><<<unsigned(blocks), 256, 0, s>>>(x, g, b, y, rows, D, eps);
  KB_CHECK_LAUNCH();
}

// The layer_norm row's case (inputs, CPU check) with the variant's kernel.
class LnAbCase : public kb::layer_norm_experiment::LayerNormCase {
 public:
  explicit LnAbCase(const kb::Point& p) : LayerNormCase(p), v_(p["v"]) {}

  void run(cudaStream_t s) override {
    const int nvec = int(d_ / kVec);
    if (v_ == 0) return LayerNormCase::run(s);
    const bf16 *x = x_.get(), *g = g_.get(), *b = b_.get();
    bf16* y = y_.get();
    if (v_ == 1) {
      if (nvec <= 64) return launch_shifted<2, 32>(x, g, b, y, rows_, int(d_), kEps, s);
      if (nvec <= 128) return launch_shifted<4, 32>(x, g, b, y, rows_, int(d_), kEps, s);
      return launch_shifted<8, 32>(x, g, b, y, rows_, int(d_), kEps, s);
    }
    if (nvec <= 64) return launch_shifted<4, 16>(x, g, b, y, rows_, int(d_), kEps, s);
    if (nvec <= 128) return launch_shifted<8, 16>(x, g, b, y, rows_, int(d_), kEps, s);
    return launch_shifted<16, 16>(x, g, b, y, rows_, int(d_), kEps, s);
  }

 private:
  int64_t v_;
};

}  // namespace

KB_EXPERIMENT(layer_norm_ab) {
  return kb::Experiment("_ln_ab")
      .doc("the warp-row LayerNorm against one-butterfly shifted statistics (lab, 0058)")
      .axis("v", {0, 1, 2})
      .axis("BS", {4096})
      .axis("D", {512, 1024, 2048})
      .dtypes({kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .work([](const kb::Point& p) {
        kb::Work w;
        w.bytes = 2.0 * p["BS"] * p["D"] * kb::dtype_size(p.dtype);
        w.bound = kb::Bound::copy;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<LnAbCase>(p); });
}
