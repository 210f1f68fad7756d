// The Case of the layer_norm experiment: bf16 [BS, D] with bf16 weight and
// bias, inputs filled on the GPU from a seed, checked against the CPU
// reference. run() is virtual: a lab variant (lab/experiments) times another
// kernel on the same inputs and check.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/common/host_math.h"
#include "kernels/layer_norm/layer_norm.h"
#include "suite/experiment.h"

namespace kb::layer_norm_experiment {

class LayerNormCase : public Case {
 public:
  explicit LayerNormCase(const Point& p)
      : rows_(p["BS"]), d_(p["D"]), x_(rows_ * d_), y_(rows_ * d_), g_(d_), b_(d_) {}

  void run(cudaStream_t s) override {
    layer_norm::layer_norm(x_.get(), g_.get(), b_.get(), y_.get(), rows_, d_, kEps,
                           layer_norm::Activation::none, s);
  }

  // A further buffer set's inputs, filled on the GPU: no CPU reference.
  void prepare(cudaStream_t s, uint64_t seed) override {
    fill_uniform_bf16(x_.get(), x_.size(), seed, -2.f, 4.f, s);
    fill_uniform_bf16(g_.get(), g_.size(), seed + 1, 0.5f, 1.5f, s);
    fill_uniform_bf16(b_.get(), b_.size(), seed + 2, -0.5f, 0.5f, s);
  }

  Check check(cudaStream_t s, uint64_t seed) override {
    auto x = random_bf16(x_.size(), seed, -2.f, 4.f);
    auto g = random_bf16(d_, seed + 1, 0.5f, 1.5f);
    auto b = random_bf16(d_, seed + 2, -0.5f, 0.5f);
    x_.upload(x);
    g_.upload(g);
    b_.upload(b);
    y_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    auto out = to_float(y_.download());
    std::vector<float> ref(out.size());
    auto xf = to_float(x), gf = to_float(g), bf = to_float(b);
    layer_norm::layer_norm_ref(xf.data(), gf.data(), bf.data(), ref.data(), rows_, d_, kEps,
                               layer_norm::Activation::none);
    const auto c = layer_norm::check_output(out, ref);
    const std::string text = std::to_string(out.size()) + " outputs vs CPU reference: " + c.text();
    return c.ok ? Check::pass(text) : Check::fail(text);
  }

 protected:
  static constexpr float kEps = 1e-5f;
  int64_t rows_, d_;
  DeviceBuffer<bf16> x_, y_, g_, b_;
};

}  // namespace kb::layer_norm_experiment
