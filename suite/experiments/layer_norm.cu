// layer_norm: the seed's LayerNorm bandwidth experiment, bf16 [BS=4096, D]
// with bf16 weight and bias; bytes as the seed counts them: 2·BS·D·2.
#include <memory>
#include <string>

#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/common/host_math.h"
#include "kernels/layer_norm/layer_norm.h"
#include "suite/experiment.h"

namespace {

using kb::bf16;

class LayerNormCase : public kb::Case {
 public:
  explicit LayerNormCase(const kb::Point& p)
      : rows_(p["BS"]), d_(p["D"]), x_(rows_ * d_), y_(rows_ * d_), g_(d_), b_(d_) {}

  void run(cudaStream_t s) override {
    kb::layer_norm::layer_norm(x_.get(), g_.get(), b_.get(), y_.get(), rows_, d_, kEps,
                               kb::layer_norm::Activation::none, s);
  }

  // A further buffer set's inputs, filled on the GPU: no CPU reference.
  void prepare(cudaStream_t s, uint64_t seed) override {
    kb::fill_uniform_bf16(x_.get(), x_.size(), seed, -2.f, 4.f, s);
    kb::fill_uniform_bf16(g_.get(), g_.size(), seed + 1, 0.5f, 1.5f, s);
    kb::fill_uniform_bf16(b_.get(), b_.size(), seed + 2, -0.5f, 0.5f, s);
  }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    auto x = kb::random_bf16(x_.size(), seed, -2.f, 4.f);
    auto g = kb::random_bf16(d_, seed + 1, 0.5f, 1.5f);
    auto b = kb::random_bf16(d_, seed + 2, -0.5f, 0.5f);
    x_.upload(x);
    g_.upload(g);
    b_.upload(b);
    y_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    auto out = kb::to_float(y_.download());
    std::vector<float> ref(out.size());
    auto xf = kb::to_float(x), gf = kb::to_float(g), bf = kb::to_float(b);
    kb::layer_norm::layer_norm_ref(xf.data(), gf.data(), bf.data(), ref.data(), rows_, d_, kEps,
                                   kb::layer_norm::Activation::none);
    const auto c = kb::layer_norm::check_output(out, ref);
    const std::string text = std::to_string(out.size()) + " outputs vs CPU reference: " + c.text();
    return c.ok ? kb::Check::pass(text) : kb::Check::fail(text);
  }

 private:
  static constexpr float kEps = 1e-5f;
  int64_t rows_, d_;
  kb::DeviceBuffer<bf16> x_, y_, g_, b_;
};

}  // namespace

KB_EXPERIMENT(layer_norm) {
  return kb::Experiment("layer_norm")
      .doc("LayerNorm over the last dim, bf16 in/out with bf16 weight+bias, fp32 statistics")
      .axis("BS", {4096})
      .axis("D", {1024, 4096, 8192, 16384})
      .dtypes({kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .seed_mean()
      .work([](const kb::Point& p) {
        kb::Work w;
        w.bytes = 2.0 * p["BS"] * p["D"] * kb::dtype_size(p.dtype);
        w.bound = kb::Bound::copy;  // reads and writes the same amount
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<LayerNormCase>(p); });
}
