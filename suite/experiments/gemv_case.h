// The Case of the gemv and gather_gemv experiments: one GEMV (or gather-GEMV
// over E experts) at one shape and weight dtype. Weights are filled on the
// GPU from a seed, so the CPU reference recomputes only the rows it checks
// (all when small, else 512 per selected expert); every output is checked
// finite (poisoned with NaN first, so a skipped row shows).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/common/host_math.h"
#include "kernels/gemv/gemv.h"
#include "suite/experiment.h"

namespace kb::gemv_experiment {

// N and K of a point: the seed's square `D`, or explicit `N`/`K`.
inline int64_t rows_of(const Point& p) { return p.shape.has("N") ? p["N"] : p["D"]; }
inline int64_t cols_of(const Point& p) { return p.shape.has("K") ? p["K"] : p["D"]; }

// What one run() moves: the selected experts' weights (and their scales),
// x read once, y written once. The seed counts only the weights
// (D·D·itemsize); the rest is < 0.6% at D = 1024 (docs/metrics.md).
inline Work gemv_work(const Point& p, int n_sel) {
  const double N = static_cast<double>(rows_of(p)), K = static_cast<double>(cols_of(p));
  const bool int8 = p.dtype == DType::i8;
  Work w;
  w.bytes =
      n_sel * N * K * dtype_size(p.dtype) + (int8 ? n_sel * N * 2 : 0) + K * 2 + n_sel * N * 2;
  w.flops = 2.0 * n_sel * N * K;
  w.bound = Bound::read;
  w.launches = 1;
  return w;
}

// The configuration a point names with its `config` label ("config=R2U1W4P1K2":
// `kbench tune gemv` times its finalists as rows are), else none. Throws
// std::invalid_argument for a name that is no GEMV kernel.
inline std::optional<gemv::Config> labelled_config(const Point& p) {
  for (const auto& [key, value] : p.shape.labels())
    if (key == "config") {
      const auto k = gemv::parse_kernel(value);
      if (!k) throw std::invalid_argument("config=" + value + ": not a GEMV kernel name");
      return gemv::Config(*k);
    }
  return std::nullopt;
}

class GemvCase : public Case {
 public:
  // E = 1, n_sel = 1: plain gemv (no expert ids). The kernel: the point's
  // `config` label, else the dispatch's choice (the GPU's table, else the
  // generic rule), which the rows' variant names ("GM4W4K1", "...;generic"
  // where no table entry chose it). `decode_shape`: a decode step runs this
  // GEMV too; where the decoder's choice differs (gemv::Use::decode), the
  // variant says which ("...;decode=R2U1W4P1K2").
  GemvCase(const Point& p, int E, int n_sel, std::vector<int32_t> timed_experts,
           bool decode_shape = false)
      : int8_(p.dtype == DType::i8),
        gather_(!timed_experts.empty()),
        N_(rows_of(p)),
        K_(cols_of(p)),
        E_(E),
        n_sel_(n_sel),
        timed_(std::move(timed_experts)),
        choice_(first_choice(p)),
        w_(static_cast<size_t>(E) * N_ * K_ * (int8_ ? 1 : 2)),
        scale_(int8_ ? static_cast<size_t>(E) * N_ : 0),
        x_(K_),
        y_(static_cast<size_t>(n_sel) * N_),
        ids_(gather_ ? n_sel : 0) {
    if (gather_) {
      gemv::check_experts(timed_, E_);
      ids_.upload(timed_);
    }
    variant_ = gemv::kernel_name(choice_.config.kernel);
    if (!choice_.from_table()) variant_ += ";generic";
    if (decode_shape) {
      const gemv::Config d = gemv::choose(int8_, N_, K_, 1, gemv::Use::decode).config;
      if (gemv::kernel_name(d.kernel) != gemv::kernel_name(choice_.config.kernel))
        variant_ += ";decode=" + gemv::kernel_name(d.kernel);
    }
  }

  std::string variant() const override { return variant_; }

  void run(cudaStream_t s) override { run_config(choice_.config, s); }

  // One launch of `cfg` over this case's buffers (the tuner times every
  // candidate over the same buffer sets as the rows; the variant stays the
  // case's own).
  void run_config(const gemv::Config& cfg, cudaStream_t s) {
    gemv::Operands op;
    op.int8 = int8_;
    op.W = w_.get();
    op.scale = int8_ ? scale_.get() : nullptr;
    op.experts = gather_ ? ids_.get() : nullptr;
    op.n_sel = n_sel_;
    op.E = E_;
    op.x = x_.get();
    op.y = y_.get();
    op.N = N_;
    op.K = K_;
    gemv::launch(op, cfg, s);
  }

  // A further buffer set: the check's inputs, without its run and CPU
  // reference (the default prepare runs the whole check, whose reference
  // over up to 2^25 weights a set was most of a gemv run's time); the
  // expert ids stay the timed ones.
  void prepare(cudaStream_t s, uint64_t seed) override {
    std::vector<bf16> scale_h, x_h;
    fill_inputs(s, seed, scale_h, x_h);  // x's upload waits for the device: the weights too
  }

  Check check(cudaStream_t s, uint64_t seed) override {
    const uint64_t wseed = seed | 1;
    std::vector<bf16> scale_h, x_h;
    fill_inputs(s, seed, scale_h, x_h);
    // Every expert id once across the checks of a gather (a fresh random
    // selection each time), then back to the timed ids.
    std::vector<int32_t> ids = timed_;
    std::mt19937_64 rng(seed);
    if (gather_) {
      std::vector<int32_t> all(E_);
      for (int e = 0; e < E_; ++e) all[e] = e;
      std::shuffle(all.begin(), all.end(), rng);
      for (int i = 0; i < n_sel_; ++i) ids[i] = all[i % E_];
      ids_.upload(ids);
    }
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    y_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto y_h = y_.download();
    if (gather_) ids_.upload(timed_);

    const auto xf = to_float(x_h);
    const bool all_rows = static_cast<double>(N_) * K_ * n_sel_ <= (1 << 25);
    std::vector<int64_t> rows;
    if (all_rows) {
      for (int64_t n = 0; n < N_; ++n) rows.push_back(n);
    } else {
      rows = {0, N_ - 1};
      std::uniform_int_distribution<int64_t> pick(0, N_ - 1);
      while (rows.size() < 512) rows.push_back(pick(rng));
    }
    std::vector<float> wrow(K_);
    double worst = 0;
    std::string where;
    size_t nonfinite = 0;
    for (const bf16& v : y_h)
      if (!std::isfinite(bf16_to_float(v))) ++nonfinite;
    for (int slot = 0; slot < n_sel_; ++slot) {
      const int64_t e = gather_ ? ids[slot] : 0;
      for (int64_t n : rows) {
        const uint64_t base = (static_cast<uint64_t>(e) * N_ + n) * K_;
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < K_; ++k) {
          const double w = int8_ ? fill_value(wseed, base + k) : fill_bf16_value(wseed, base + k);
          acc += w * xf[k];
          mag += std::fabs(w * xf[k]);
        }
        double sc = int8_ ? bf16_to_float(scale_h[e * N_ + n]) : 1.0;
        const double ref = acc * sc, bound = (std::fabs(ref) / 128 + 1e-4 * mag * sc);
        const double out = bf16_to_float(y_h[slot * N_ + n]);
        const double err = std::fabs(out - ref) / bound;  // <= 1 passes
        if (!(err <= worst)) {
          worst = std::isfinite(err) ? err : INFINITY;
          where = "expert " + std::to_string(e) + " row " + std::to_string(n) + ": got " +
                  std::to_string(out) + ", want " + std::to_string(ref);
        }
      }
    }
    char text[256];
    std::snprintf(text, sizeof text,
                  "%zu rows x %d, worst error %.3g of bound (%s), %zu non-finite", rows.size(),
                  n_sel_, worst, where.c_str(), nonfinite);
    return worst <= 1.0 && nonfinite == 0 ? Check::pass(text) : Check::fail(text);
  }

 private:
  gemv::Choice first_choice(const Point& p) const {
    if (auto c = labelled_config(p)) return {*c, "given"};
    return gemv::choose(int8_, N_, K_, n_sel_);
  }

  // The weights (on the GPU, from seed | 1), the int8 scales and x (on the
  // host, from seed + 1 and seed + 2, uploaded; their host copies returned
  // for the reference).
  void fill_inputs(cudaStream_t s, uint64_t seed, std::vector<bf16>& scale_h,
                   std::vector<bf16>& x_h) {
    const uint64_t wseed = seed | 1;
    if (int8_)
      fill_int8(reinterpret_cast<int8_t*>(w_.get()), w_.size(), wseed, s);
    else
      fill_bf16(reinterpret_cast<bf16*>(w_.get()), w_.size() / 2, wseed, s);
    if (int8_) {
      scale_h = random_bf16(scale_.size(), seed + 1, 0.002f, 0.02f);
      scale_.upload(scale_h);
    }
    x_h = random_bf16(K_, seed + 2, -1.f, 1.f);
    x_.upload(x_h);
  }

  bool int8_, gather_;
  int64_t N_, K_;
  int E_, n_sel_;
  std::vector<int32_t> timed_;
  gemv::Choice choice_;
  std::string variant_;
  DeviceBuffer<uint8_t> w_;
  DeviceBuffer<bf16> scale_, x_, y_;
  DeviceBuffer<int32_t> ids_;
};

}  // namespace kb::gemv_experiment
