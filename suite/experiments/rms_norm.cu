// rms_norm: Llama's and Mixtral's RMSNorm as a bandwidth experiment, bf16
// [BS=4096, D] with a bf16 weight; bytes: x and w read once, y written once.
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/common/host_math.h"
#include "kernels/rms_norm/rms_norm.h"
#include "suite/experiment.h"

namespace {

using kb::bf16;

class RmsNormCase : public kb::Case {
 public:
  explicit RmsNormCase(const kb::Point& p)
      : rows_(p["BS"]), d_(p["D"]), x_(rows_ * d_), y_(rows_ * d_), w_(d_) {}

  void run(cudaStream_t s) override {
    kb::rms_norm::rms_norm(x_.get(), w_.get(), y_.get(), rows_, d_, kEps, s);
  }

  // A further buffer set's inputs, filled on the GPU: no CPU reference.
  void prepare(cudaStream_t s, uint64_t seed) override {
    kb::fill_uniform_bf16(x_.get(), x_.size(), seed, -2.f, 4.f, s);
    kb::fill_uniform_bf16(w_.get(), w_.size(), seed + 1, 0.5f, 1.5f, s);
  }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    const auto x = kb::random_bf16(x_.size(), seed, -2.f, 4.f);
    const auto w = kb::random_bf16(w_.size(), seed + 1, 0.5f, 1.5f);
    x_.upload(x);
    w_.upload(w);
    y_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto out = kb::to_float(y_.download());
    std::vector<float> ref(out.size());
    const auto xf = kb::to_float(x), wf = kb::to_float(w);
    kb::rms_norm::rms_norm_ref(xf.data(), wf.data(), ref.data(), rows_, d_, kEps);
    const auto c = kb::rms_norm::check_output(out, ref);  // every element (rms_norm_cpu.h)
    const std::string text = std::to_string(out.size()) + " outputs vs CPU reference: " + c.text();
    return c.ok ? kb::Check::pass(text) : kb::Check::fail(text);
  }

 private:
  static constexpr float kEps = 1e-5f;  // Llama 2's and Mixtral's rms_norm_eps
  int64_t rows_, d_;
  kb::DeviceBuffer<bf16> x_, y_, w_;
};

}  // namespace

KB_EXPERIMENT(rms_norm) {
  return kb::Experiment("rms_norm")
      .doc("RMSNorm over the last dim (Llama, Mixtral), bf16 in/out with bf16 weight, fp32 math")
      .axis("BS", {4096})
      .axis("D", {1024, 4096, 8192, 16384})
      .dtypes({kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .seed_mean()
      .work([](const kb::Point& p) {
        const double row_bytes = p["BS"] * p["D"] * kb::dtype_size(p.dtype);
        kb::Work w;
        w.bytes = 2 * row_bytes + p["D"] * kb::dtype_size(p.dtype);  // x, y; w
        w.write_bytes = row_bytes;
        w.bound = kb::Bound::copy;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<RmsNormCase>(p); });
}
