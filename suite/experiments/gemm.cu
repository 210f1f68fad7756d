// gemm: the bare cuBLASLt GEMM (kb::gemm, no epilogue), the reference the
// mlp_layer_norm_gelu rows are read against: its two GEMMs at every point
// of that experiment,
//   up    D[T, 14336] = x[T, D] · W1[14336, D]^T      (M=T, N=14336, K=D)
//   down  D[T, D]     = g[T, 14336] · W2[D, 14336]^T  (M=T, N=D, K=14336)
// for T in {1, 16, 4096} and D in {1024, 4096, 8192, 16384}, plus the square
// 8192^3 the anchors measured (800-822 TFLOP/s on H100). The sum of the up
// and down times at a point is what the MLP would take if everything around
// its GEMMs were free; at one token they show cuBLASLt's GEMV, the path the
// MLP replaces with kb::gemv.
//
// bf16 (the MLP's dtype) and FP8 E4M3 inputs (bf16 output) on GPUs with FP8
// tensor cores. The algorithm is the heuristic's first usable one, chosen
// once per point; the row's variant names it.
//
// Counted: flops = 2·M·N·K; bytes = A and W read once (M·K + N·K elements)
// + D written once (M·N·2).
#include <cmath>
#include <memory>
#include <type_traits>

#include "kernels/common/allclose.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/common/host_math.h"
#include "kernels/common/index_sample.h"
#include "kernels/gemm/gemm.h"
#include "suite/experiment.h"

namespace {

using kb::bf16;
using kb::gemm::fp8;

constexpr int64_t kF = 14336;  // the MLP's hidden width
// Multiply-adds the CPU reference may spend on the sampled rows, and as
// many on the sampled columns (about 2e9 per 0.2 s on 2 cores).
constexpr double kCheckMacs = 4e9;

template <typename T>
class GemmCase : public kb::Case {
 public:
  GemmCase(int64_t M, int64_t N, int64_t K, kb::gemm::Input input)
      : M_(M),
        N_(N),
        K_(K),
        a_(static_cast<size_t>(M * K)),
        w_(static_cast<size_t>(N * K)),
        d_(static_cast<size_t>(M * N)),
        gemm_(M, N, K, options(input)) {}

  void run(cudaStream_t s) override { gemm_.run(a_.get(), w_.get(), nullptr, d_.get(), s); }

  // The algorithm that ran and where it came from (the GPU's tuning table,
  // or the heuristic where the table has no entry or this cuBLASLt refused it).
  std::string variant() const override {
    return gemm_.id() + ";src=" + kb::gemm::algo_source_name(gemm_.source());
  }
  std::string note() const override { return gemm_.note(); }

  void prepare(cudaStream_t s, uint64_t seed) override {
    fill(a_, seed + 1, s);
    fill(w_, seed + 2, s);
  }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    fill(a_, seed + 1, s);
    fill(w_, seed + 2, s);
    d_.poison();
    // The fills ran on `s`, the poisoning (cudaMemset) on the legacy default
    // stream, which a non-blocking `s` does not wait for.
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto d = kb::to_float(d_.download());
    size_t nonfinite = 0;
    for (float v : d) nonfinite += std::isfinite(v) ? 0 : 1;
    if (nonfinite)
      return kb::Check::fail(std::to_string(nonfinite) + " of " + std::to_string(d.size()) +
                             " outputs are NaN/inf (unwritten)");
    const auto a = a_.download();
    const auto w = w_.download();
    // Whole rows cover every N tile, whole columns every M tile.
    const double k = static_cast<double>(K_);
    const auto rows = kb::sample_indices(M_, budget(N_ * k), seed + 3);
    const auto cols = kb::sample_indices(N_, budget(M_ * k), seed + 4);
    const auto E = kb::gemm::Epilogue::none;
    std::vector<float> out, ref = kb::gemm::ref_rows(rows, a.data(), w.data(), nullptr, N_, K_, E);
    for (int64_t r : rows) out.insert(out.end(), d.begin() + r * N_, d.begin() + (r + 1) * N_);
    const bool all_rows = static_cast<int64_t>(rows.size()) == M_;
    if (!all_rows) {
      const auto ref_c = kb::gemm::ref_cols(cols, a.data(), w.data(), nullptr, M_, K_, E);
      ref.insert(ref.end(), ref_c.begin(), ref_c.end());
      for (int64_t m = 0; m < M_; ++m)
        for (int64_t c : cols) out.push_back(d[static_cast<size_t>(m * N_ + c)]);
    }
    // bf16 output rounding (<= 2^-8 relative); the absolute term covers
    // outputs near zero, where fp32 summation order shows.
    const auto rel = kb::compare(out, ref, 5e-3);
    const auto close = kb::allclose(out, ref, 1.0 / 128, 4e-3 * kb::rms(ref));
    const std::string text =
        std::to_string(rows.size()) + " rows" +
        (all_rows ? std::string() : " and " + std::to_string(cols.size()) + " columns") +
        " vs CPU reference: " + rel.text() + "; " + close.text();
    return rel.ok && close.ok ? kb::Check::pass(text) : kb::Check::fail(text);
  }

 private:
  static kb::gemm::Options options(kb::gemm::Input input) {
    kb::gemm::Options o;
    o.input = input;
    return o;
  }
  static int64_t budget(double macs_per_line) {
    return std::max<int64_t>(
        2, std::min<int64_t>(32, static_cast<int64_t>(kCheckMacs / macs_per_line)));
  }
  static void fill(kb::DeviceBuffer<bf16>& b, uint64_t seed, cudaStream_t s) {
    kb::fill_uniform_bf16(b.get(), b.size(), seed, -1.f, 1.f, s);
  }
  static void fill(kb::DeviceBuffer<fp8>& b, uint64_t seed, cudaStream_t s) {
    kb::fill_uniform_fp8_e4m3(b.get(), b.size(), seed, -1.f, 1.f, s);
  }

  int64_t M_, N_, K_;
  kb::DeviceBuffer<T> a_, w_;
  kb::DeviceBuffer<bf16> d_;
  kb::gemm::Gemm gemm_;
};

}  // namespace

KB_EXPERIMENT(gemm) {
  auto e = kb::Experiment("gemm").doc(
      "bare cuBLASLt GEMM D[M,N] = A[M,K] W[N,K]^T, bf16 or fp8_e4m3 in, bf16 out, fp32 "
      "accumulation: both GEMMs of mlp_layer_norm_gelu at each of its points, and 8192^3");
  for (int64_t t : {1, 16, 4096})
    for (int64_t d : {1024, 4096, 8192, 16384}) {
      e.point(kb::Shape{{"M", t}, {"N", kF}, {"K", d}});  // up
      e.point(kb::Shape{{"M", t}, {"N", d}, {"K", kF}});  // down
    }
  e.point(kb::Shape{{"M", 8192}, {"N", 8192}, {"K", 8192}});
  return e.dtypes({kb::DType::bf16, kb::DType::fp8_e4m3})
      .metrics({kb::Metric::tflops, kb::Metric::flops_utilization, kb::Metric::memory_bandwidth})
      .supported([](const kb::Point& p, const cudaDeviceProp& prop) -> std::string {
        if (p.dtype == kb::DType::fp8_e4m3 && prop.major * 10 + prop.minor < 89)
          return "FP8 E4M3 tensor cores need compute capability 8.9 or newer (this GPU has " +
                 std::to_string(prop.major) + "." + std::to_string(prop.minor) + ")";
        return "";
      })
      .work([](const kb::Point& p) {
        const double M = p["M"], N = p["N"], K = p["K"], in = kb::dtype_size(p.dtype);
        kb::Work w;
        w.flops = 2 * M * N * K;
        w.flop_dtype = p.dtype;
        const double writes = M * N * 2;  // bf16 out
        w.bytes = (M * K + N * K) * in + writes;
        w.bound = writes * 4 >= w.bytes ? kb::Bound::copy : kb::Bound::read;
        w.write_bytes = writes;
        return w;
      })
      .make([](const kb::Point& p) -> std::unique_ptr<kb::Case> {
        if (p.dtype == kb::DType::fp8_e4m3)
          return std::make_unique<GemmCase<fp8>>(p["M"], p["N"], p["K"], kb::gemm::Input::fp8_e4m3);
        return std::make_unique<GemmCase<bf16>>(p["M"], p["N"], p["K"], kb::gemm::Input::bf16);
      });
}
