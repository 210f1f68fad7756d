// swiglu: the SwiGLU of Llama's (F = 11008) and Mixtral's (14336) MLP at
// prefill as a bandwidth experiment, bf16 GU [4096, 2F] -> y [4096, F];
// bytes: GU read once, y written once.
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/device_random.h"
#include "kernels/common/host_math.h"
#include "kernels/swiglu/swiglu.h"
#include "suite/experiment.h"

namespace {

using kb::bf16;

class SwigluCase : public kb::Case {
 public:
  explicit SwigluCase(const kb::Point& p)
      : tokens_(p["tokens"]), f_(p["F"]), gu_(tokens_ * 2 * f_), y_(tokens_ * f_) {}

  void run(cudaStream_t s) override { kb::swiglu::swiglu(gu_.get(), y_.get(), tokens_, f_, s); }

  // A further buffer set's inputs, filled on the GPU: no CPU reference.
  void prepare(cudaStream_t s, uint64_t seed) override {
    kb::fill_uniform_bf16(gu_.get(), gu_.size(), seed, kLo, kHi, s);
  }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    const auto gu = kb::random_bf16(gu_.size(), seed, kLo, kHi);
    gu_.upload(gu);
    y_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto out = kb::to_float(y_.download());
    std::vector<float> ref(out.size());
    const auto guf = kb::to_float(gu);
    kb::swiglu::swiglu_ref(guf.data(), ref.data(), tokens_, f_);
    const auto c = kb::swiglu::check_output(out, ref);  // every element (swiglu_cpu.h)
    const std::string text = std::to_string(out.size()) + " outputs vs CPU reference: " + c.text();
    return c.ok ? kb::Check::pass(text) : kb::Check::fail(text);
  }

 private:
  // g and u alike: silu's curved part and both of its tails.
  static constexpr float kLo = -5.f, kHi = 5.f;
  int64_t tokens_, f_;
  kb::DeviceBuffer<bf16> gu_, y_;
};

}  // namespace

KB_EXPERIMENT(swiglu) {
  return kb::Experiment("swiglu")
      .doc(
          "SwiGLU of the MLP at prefill (Llama, Mixtral): silu(g) * u from one bf16 [tokens, 2F], "
          "fp32 math")
      .axis("tokens", {4096})
      .axis("F", {11008, 14336})
      .dtypes({kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .seed_mean()
      .work([](const kb::Point& p) {
        const double y_bytes = p["tokens"] * p["F"] * kb::dtype_size(p.dtype);
        kb::Work w;
        w.bytes = 3 * y_bytes;  // GU read (2F columns), y written (F)
        w.write_bytes = y_bytes;
        w.bound = kb::Bound::copy;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<SwigluCase>(p); });
}
