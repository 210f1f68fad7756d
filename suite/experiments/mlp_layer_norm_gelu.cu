// mlp_layer_norm_gelu: the seed's MLP block, Linear(D -> 14336, +bias) ->
// LayerNorm -> GELU -> Linear(14336 -> D, +bias) -> LayerNorm, bf16 in and
// out, fp32 accumulation (kernels/mlp/mlp.h), on `tokens` rows of width D.
//
// Points: the seed's case is one token (its input is 1-D), so the seed
// axis is D at tokens=1 and the `shape=mean` row averages those four points
// only; tokens=16 and 4096 are extra points. One path per point, named in
// the variant: `gemv` at one token (two weight streams, where cuBLASLt
// reaches about 60% of HBM bandwidth), `cublaslt` at 16 and 4096 tokens
// (bias fused as the GEMMs' epilogue; its rows add the chosen algorithms,
// "up=algo.._tile..;down=..."). The bare cuBLASLt GEMMs of the same shapes,
// one token included, are rows of the `gemm` experiment.
//
// Counted per run() (docs/notes/mlp.md):
//   flops = 4·T·D·F: the two GEMMs. The bias adds, LayerNorms and GELU
//           (about 20 flops per element of h, < 1% at any D) are not counted,
//           as the seed and PyTorch's flop counters do not count them.
//   bytes = both weight matrices (2·D·F·2) + biases and LayerNorm parameters
//           (3·(F + D)·2) + x read and y written (2·T·D·2) + the
//           intermediates each written once and read once: h and g
//           (2·2·T·F·2) and u (2·T·D·2). At one token the weights are
//           99.6% of it (D=1024) or more. Of it, written: h, g, u, y.
//
// gemm_share = the time of the MLP's two GEMMs alone (Mlp::run_gemms: the
// bare cuBLASLt GEMMs, or the two GEMVs at one token) / the time of the
// whole MLP, both sampled in one loop, alternating, each after an L2 flush
// (Case::companion): the fusion cost, free of the GPU's power state. Issue
// 5: at D=1024 and 4096 tokens the LayerNorm needs whole 14336-wide rows
// of h, >= 78 us of extra HBM traffic, so the share is bound by 0.78 there.
#include <cmath>
#include <memory>

#include "kernels/common/allclose.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/common/host_math.h"
#include "kernels/common/index_sample.h"
#include "kernels/mlp/mlp.h"
#include "suite/experiment.h"
#include "suite/experiments/mlp_metrics.h"

namespace {

using kb::bf16;
using kb::mlp::Path;

constexpr int64_t kF = kb::mlp::kHidden;

// Multiply-adds the CPU reference may spend per check. Its fp32 dot
// products vectorize: 2e9 took 0.22 s on 2 cores of the build machine, so
// this is about a second there and a fraction of one on 16.
constexpr double kCheckMacs = 8e9;

class MlpCase : public kb::Case {
 public:
  explicit MlpCase(const kb::Point& p)
      : T_(p["tokens"]),
        D_(p["D"]),
        w1_(static_cast<size_t>(kF * D_)),
        b1_(kF),
        ln1_g_(kF),
        ln1_b_(kF),
        w2_(static_cast<size_t>(D_ * kF)),
        b2_(static_cast<size_t>(D_)),
        ln2_g_(static_cast<size_t>(D_)),
        ln2_b_(static_cast<size_t>(D_)),
        x_(static_cast<size_t>(T_ * D_)),
        y_(static_cast<size_t>(T_ * D_)),
        mlp_(T_, D_, kF, p.variant == "gemv" ? Path::gemv : Path::cublaslt) {}

  void run(cudaStream_t s) override { mlp_.run(params(), x_.get(), y_.get(), s); }
  // gemm_share: its two GEMMs alone, timed by the engine right after each
  // sample of the whole MLP (one loop, alternating, both cold).
  bool has_companion() const override { return true; }
  void companion(cudaStream_t s) override { mlp_.run_gemms(params(), x_.get(), s); }

  std::string variant() const override { return mlp_.detail(); }
  std::string note() const override { return mlp_.note(); }

  // The timed inputs of a further buffer set (the check's fills, no reference).
  void prepare(cudaStream_t s, uint64_t seed) override { fill(s, seed); }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    kb::mlp::HostParams hp = fill(s, seed);
    y_.poison();
    mlp_.poison_intermediates();
    // The fills ran on `s`; the uploads and the poisoning (cudaMemcpy,
    // cudaMemset) on the legacy default stream, which a non-blocking `s`
    // does not wait for: all of it must be done before run() reads it.
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));

    const auto y = kb::to_float(y_.download());
    size_t nonfinite = 0;  // every token was computed, not only those checked
    for (float v : y) nonfinite += std::isfinite(v) ? 0 : 1;
    if (nonfinite)
      return kb::Check::fail(std::to_string(nonfinite) + " of " + std::to_string(y.size()) +
                             " outputs are NaN/inf (unwritten or overflowed)");

    // The reference computes whole tokens (LayerNorm needs the full rows):
    // as many as the budget allows, first and last always.
    const double macs_per_token = 2.0 * static_cast<double>(D_) * kF;  // both Linears
    const int64_t n_check = std::max<int64_t>(
        2, std::min<int64_t>(64, static_cast<int64_t>(kCheckMacs / macs_per_token)));
    const auto tokens = kb::sample_indices(T_, n_check, seed + 10);
    hp.w1 = w1_.download();
    hp.w2 = w2_.download();
    const auto x = x_.download();
    const auto ref = kb::mlp::mlp_ref(hp, x.data(), tokens, D_, kF, mlp_.path());
    std::vector<float> out;
    out.reserve(ref.size());
    for (int64_t t : tokens) out.insert(out.end(), y.begin() + t * D_, y.begin() + (t + 1) * D_);
    // Tolerance: the final bf16 rounding (<= 2^-8 relative) plus a 1-ulp
    // flip of an intermediate rounding where the GPU's fp32 sum and ours
    // straddle a bf16 tie, which LayerNorm carries into its row.
    const auto rel = kb::compare(out, ref, 1e-2);
    const auto close = kb::allclose(out, ref, 1.0 / 64, 1e-2 * kb::rms(ref));
    const std::string text = std::to_string(tokens.size()) + " of " + std::to_string(T_) +
                             " tokens vs CPU reference: " + rel.text() + "; " + close.text();
    return rel.ok && close.ok ? kb::Check::pass(text) : kb::Check::fail(text);
  }

 private:
  // Inputs and parameters from `seed`; returns the small host-generated ones.
  kb::mlp::HostParams fill(cudaStream_t s, uint64_t seed) {
    // Scales that keep every stage O(1): weights U(-sqrt(3/K), sqrt(3/K))
    // give each Linear's output about the variance of its input, and
    // biases/LayerNorm parameters comparable to it, so that a missing bias,
    // GELU or affine term moves the output by O(1).
    const float s1 = std::sqrt(3.f / static_cast<float>(D_));
    const float s2 = std::sqrt(3.f / static_cast<float>(kF));
    kb::fill_uniform_bf16(w1_.get(), w1_.size(), seed + 1, -s1, s1, s);
    kb::fill_uniform_bf16(w2_.get(), w2_.size(), seed + 2, -s2, s2, s);
    kb::fill_uniform_bf16(x_.get(), x_.size(), seed + 3, -1.f, 1.f, s);
    kb::mlp::HostParams hp;
    hp.b1 = kb::random_bf16(kF, seed + 4, -0.5f, 0.5f);
    hp.ln1_g = kb::random_bf16(kF, seed + 5, 0.5f, 1.5f);
    hp.ln1_b = kb::random_bf16(kF, seed + 6, -0.5f, 0.5f);
    hp.b2 = kb::random_bf16(D_, seed + 7, -0.5f, 0.5f);
    hp.ln2_g = kb::random_bf16(D_, seed + 8, 0.5f, 1.5f);
    hp.ln2_b = kb::random_bf16(D_, seed + 9, -0.5f, 0.5f);
    b1_.upload(hp.b1);
    ln1_g_.upload(hp.ln1_g);
    ln1_b_.upload(hp.ln1_b);
    b2_.upload(hp.b2);
    ln2_g_.upload(hp.ln2_g);
    ln2_b_.upload(hp.ln2_b);
    return hp;
  }

  kb::mlp::Params params() const {
    kb::mlp::Params p;
    p.w1 = w1_.get();
    p.b1 = b1_.get();
    p.ln1_g = ln1_g_.get();
    p.ln1_b = ln1_b_.get();
    p.w2 = w2_.get();
    p.b2 = b2_.get();
    p.ln2_g = ln2_g_.get();
    p.ln2_b = ln2_b_.get();
    return p;
  }

  int64_t T_, D_;
  kb::DeviceBuffer<bf16> w1_, b1_, ln1_g_, ln1_b_, w2_, b2_, ln2_g_, ln2_b_, x_, y_;
  kb::mlp::Mlp mlp_;  // last: plans after the buffers exist
};

}  // namespace

KB_EXPERIMENT(mlp_layer_norm_gelu) {
  auto e = kb::Experiment("mlp_layer_norm_gelu")
               .doc(
                   "Linear(D->14336,+bias) -> LayerNorm -> GELU -> Linear(14336->D,+bias) -> "
                   "LayerNorm, bf16, fp32 accumulation; gemv path at 1 token, cuBLASLt with "
                   "fused bias at 16 and 4096")
               .axis("tokens", {1})
               .axis("D", {1024, 4096, 8192, 16384});
  for (int64_t t : {16, 4096})
    for (int64_t d : {1024, 4096, 8192, 16384}) e.point(kb::Shape{{"tokens", t}, {"D", d}});
  return e.dtypes({kb::DType::bf16})
      .variants({"gemv", "cublaslt"})
      // One path per shape: gemv serves one token, cuBLASLt the rest.
      .applies([](const kb::Point& p) { return (p.variant == "gemv") == (p["tokens"] == 1); })
      .metrics({kb::Metric::flops_utilization, kb::Metric::tflops, kb::Metric::memory_bandwidth,
                kb::mlp_metrics::kGemmShare})
      .seed_mean()
      .work([](const kb::Point& p) {
        const double T = p["tokens"], D = p["D"], F = kF, b = 2;  // bf16 bytes
        kb::Work w;
        w.flops = 4.0 * T * D * F;
        const double weights = 2 * D * F * b;
        const double params = 3 * (F + D) * b;  // biases, LayerNorm gammas and betas
        const double io = 2 * T * D * b;        // x read, y written
        const double intermediates = 2 * (2 * T * F * b) + 2 * T * D * b;  // h, g, u: write + read
        w.bytes = weights + params + io + intermediates;
        const double writes = 2 * T * F * b + 2 * T * D * b;  // h, g, u, y
        // Weight streaming at few tokens; at 4096 the intermediates' writes
        // are a third of the traffic, which the copy ceiling describes.
        w.bound = writes * 4 >= w.bytes ? kb::Bound::copy : kb::Bound::read;
        w.write_bytes = writes;
        w.launches = kb::mlp::kLaunches;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<MlpCase>(p); });
}
