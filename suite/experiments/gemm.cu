// gemm: the bare cuBLASLt GEMM (kb::gemm, no epilogue), bf16 or FP8 E4M3
// in, bf16 out, at both GEMMs of every mlp_layer_norm_gelu point (up: M=T,
// N=14336, K=D; down: M=T, N=D, K=14336; their sum is the MLP with
// everything around its GEMMs free) and at the square 8192^3. The algorithm
// is the tuning table's or the heuristic's, named in the variant. Counted:
// flops = 2·M·N·K; bytes = A and W read once + D written once.
#include <cmath>
#include <memory>

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
// The check's sample: kPerBand rows in every band of kBand rows, as many
// columns in every band of kBand columns; kBand is no larger than a
// cuBLASLt tile, so every output tile holds checked outputs
// (docs/decisions/0045).
constexpr int64_t kBand = 128;
constexpr int64_t kPerBand = 2;

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
        gemm_(M, N, K, kb::gemm::Options{kb::gemm::Epilogue::none, input}) {}

  void run(cudaStream_t s) override { gemm_.run(a_.get(), w_.get(), nullptr, d_.get(), s); }

  std::string variant() const override {  // the algorithm and where it came from
    return gemm_.id() + ";src=" + kb::gemm::algo_source_name(gemm_.source());
  }
  std::string note() const override { return gemm_.note(); }

  void prepare(cudaStream_t s, uint64_t seed) override {
    fill(a_, seed + 1, s);
    fill(w_, seed + 2, s);
  }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    prepare(s, seed);
    d_.poison();
    KB_CUDA_CHECK(cudaDeviceSynchronize());  // the fills ran on `s`
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    // Every output written: no NaN/inf (the poison) anywhere.
    const std::vector<bf16> d = d_.download();
    size_t nonfinite = 0;
    for (const bf16& v : d) nonfinite += std::isfinite(kb::bf16_to_float(v)) ? 0 : 1;
    if (nonfinite)
      return kb::Check::fail(std::to_string(nonfinite) + " of " + std::to_string(d.size()) +
                             " outputs are NaN/inf (unwritten)");
    // Values where the sampled rows and columns cross; only those rows of A
    // and W come back for the CPU reference.
    const auto rows = kb::sample_per_band(M_, kBand, M_ <= kBand ? M_ : kPerBand, seed + 3);
    const auto cols = kb::sample_per_band(N_, kBand, kPerBand, seed + 4);
    const auto a = a_.download_rows(rows, static_cast<size_t>(K_));
    const auto w = w_.download_rows(cols, static_cast<size_t>(K_));
    std::string text;
    const bool ok = kb::gemm::check_crossings(d, N_, rows, cols, a.data(), w.data(), K_, &text);
    const std::string share = std::to_string(kPerBand) + " in every " + std::to_string(kBand);
    text += " (" +
            (M_ <= kBand ? "every row, " + share + " columns" : share + " rows and columns") +
            ": every output tile)";
    return ok ? kb::Check::pass(text) : kb::Check::fail(text);
  }

 private:
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
