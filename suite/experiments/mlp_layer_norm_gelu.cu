// mlp_layer_norm_gelu: the seed's MLP block (kernels/mlp/mlp.h) on `tokens`
// rows of width D: one token (the seed's points and `shape=mean` row) on the
// `gemv` path, 16 and 4096 tokens on `cublaslt`. What it counts, gemm_share
// included: docs/notes/mlp.md.
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

// Multiply-adds the CPU reference may spend per check (about a second on 2 cores).
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
  bool has_companion() const override { return true; }  // gemm_share
  void companion(cudaStream_t s) override { mlp_.run_gemms(params(), x_.get(), s); }

  std::string variant() const override { return mlp_.detail(); }
  std::string note() const override { return mlp_.note(); }

  // The timed inputs of a further buffer set (the check's fills, no reference).
  void prepare(cudaStream_t s, uint64_t seed) override { fill(s, seed); }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    kb::mlp::HostParams hp = fill(s, seed);
    y_.poison();
    mlp_.poison_intermediates();
    KB_CUDA_CHECK(cudaDeviceSynchronize());  // the fills ran on `s`
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));

    const auto y = kb::to_float(y_.download());
    size_t nonfinite = 0;  // every token was computed, not only those checked
    for (float v : y) nonfinite += std::isfinite(v) ? 0 : 1;
    if (nonfinite)
      return kb::Check::fail(std::to_string(nonfinite) + " of " + std::to_string(y.size()) +
                             " outputs are NaN/inf (unwritten or overflowed)");

    // Whole tokens (LayerNorm needs full rows), as many as the budget allows.
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
    // The final bf16 rounding plus a 1-ulp flip of an intermediate rounding
    // (the GPU's fp32 sum and ours on either side of a bf16 tie).
    const auto rel = kb::compare(out, ref, 1e-2);
    const auto close = kb::allclose(out, ref, 1.0 / 64, 1e-2 * kb::rms(ref));
    const std::string text = std::to_string(tokens.size()) + " of " + std::to_string(T_) +
                             " tokens vs CPU reference: " + rel.text() + "; " + close.text();
    return rel.ok && close.ok ? kb::Check::pass(text) : kb::Check::fail(text);
  }

 private:
  // Inputs and parameters from `seed`; returns the small host-generated ones.
  kb::mlp::HostParams fill(cudaStream_t s, uint64_t seed) {
    // Every stage O(1) (weights U(±sqrt(3/K))), so that a missing bias, GELU
    // or affine term moves the output by O(1).
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

  kb::mlp::Params params() const {  // in the order of Params' fields
    return {w1_.get(), b1_.get(), ln1_g_.get(), ln1_b_.get(),
            w2_.get(), b2_.get(), ln2_g_.get(), ln2_b_.get()};
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
        // At 4096 tokens the intermediates' writes are a third of the traffic.
        w.bound = writes * 4 >= w.bytes ? kb::Bound::copy : kb::Bound::read;
        w.write_bytes = writes;
        w.launches = kb::mlp::kLaunches;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<MlpCase>(p); });
}
