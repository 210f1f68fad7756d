// _swiglu_ab (lab): the decode step's one-token SwiGLU GEMV alone at
// Llama-2-7B's gate/up shape (F = 11008, K = 4096: 2F rows), by variant
// (lab/swiglu_ab/variants.h): U, 16-byte loads a row and batch (2: the
// product's kernels, 1: the lab's twins); B, blocks an SM it is compiled
// for (0: uncapped). The warps and K split are the decode step's
// (gemv::decode_swiglu_config: the GPU's table, else the rule). Timed as
// the gemv rows are; every point's check recomputes 512 sampled gate/up
// pairs in fp64. The rows' variant names the configuration, its registers,
// local (spilled) bytes and blocks an SM.
// Run with `kbench_lab run --filter _swiglu_ab` (a -DKBENCH_LAB=ON build);
// lab/tools/lease-swiglu-ab.sh runs it in rounds.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/common/host_math.h"
#include "kernels/gemv/dispatch.h"
#include "lab/swiglu_ab/check.h"
#include "lab/swiglu_ab/variants.h"
#include "suite/experiment.h"

namespace {

using kb::bf16;
namespace gemv = kb::gemv;
namespace sw = kb::lab::swiglu;

constexpr float kEps = 1e-5f;
constexpr int kCheckedRows = 512;

// The point's variant of the decode step's configuration.
gemv::General variant_of(const kb::Point& p, bool int8) {
  const gemv::Config c = gemv::decode_swiglu_config(int8, p["F"], p["K"]);
  const gemv::General* base = c.get<gemv::General>();
  if (!base) throw std::invalid_argument("_swiglu_ab: the decode step's SwiGLU is not general");
  gemv::General g = *base;
  g.unroll = static_cast<int>(p["U"]);
  g.min_blocks = static_cast<int>(p["B"]);
  return g;
}

class SwigluAbCase : public kb::Case {
 public:
  explicit SwigluAbCase(const kb::Point& p)
      : int8_(p.dtype == kb::DType::i8),
        F_(p["F"]),
        K_(p["K"]),
        w_(static_cast<size_t>(2 * F_ * K_) * (int8_ ? 1 : 2)),
        scale_(int8_ ? 2 * F_ : 0),
        x_(K_),
        h_(F_) {
    const gemv::General g = variant_of(p, int8_);
    launch_ = sw::launch_of(
        {int8_, w_.get(), int8_ ? scale_.get() : nullptr, x_.get(), h_.get(), F_, K_, kEps}, g);
    variant_ = gemv::kernel_name(g) + ";" +
               sw::text(sw::resources(launch_.func, static_cast<int>(launch_.block.x)));
  }

  std::string variant() const override { return variant_; }

  void run(cudaStream_t s) override { launch_.enqueue(s); }

  void prepare(cudaStream_t s, uint64_t seed) override {
    std::vector<bf16> scale_h, x_h;
    fill_inputs(s, seed, scale_h, x_h);
  }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    std::vector<bf16> scale_h, x_h;
    fill_inputs(s, seed, scale_h, x_h);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    h_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    sw::Inputs in;
    in.int8 = int8_;
    in.wseed = seed | 1;
    in.scale = kb::to_float(scale_h);
    in.x = kb::to_float(x_h);
    in.F = F_;
    in.K = K_;
    in.eps = kEps;
    const sw::RowsCheck c = sw::check_rows(in, kb::to_float(h_.download()),
                                           sw::sample_rows(F_, kCheckedRows, seed + 3));
    return c.ok ? kb::Check::pass(c.text) : kb::Check::fail(c.text);
  }

 private:
  // W on the GPU from seed | 1; the int8 scales and x on the host from
  // seed + 1 and seed + 2, uploaded (their host copies for the reference).
  void fill_inputs(cudaStream_t s, uint64_t seed, std::vector<bf16>& scale_h,
                   std::vector<bf16>& x_h) {
    if (int8_) {
      kb::fill_int8(reinterpret_cast<int8_t*>(w_.get()), w_.size(), seed | 1, s);
      scale_h =
          kb::random_bf16(scale_.size(), seed + 1, sw::int8_scale_lo(K_), sw::int8_scale_hi(K_));
      scale_.upload(scale_h);
    } else {
      kb::fill_bf16(reinterpret_cast<bf16*>(w_.get()), w_.size() / 2, seed | 1, s);
    }
    x_h = kb::random_bf16(K_, seed + 2, -1.f, 1.f);
    x_.upload(x_h);
  }

  bool int8_;
  int64_t F_, K_;
  kb::DeviceBuffer<uint8_t> w_;
  kb::DeviceBuffer<bf16> scale_, x_, h_;
  sw::Launch launch_;
  std::string variant_;
};

}  // namespace

KB_EXPERIMENT(swiglu_ab) {
  return kb::Experiment("_swiglu_ab")
      .doc("the one-token SwiGLU GEMV by loads a batch (U) and register cap (B) (lab)")
      .axis("U", {2, 1})
      .axis("B", {0, 7, 8})
      .axis("F", {11008})
      .axis("K", {4096})
      .dtypes({kb::DType::i8, kb::DType::bf16})
      .metrics({kb::Metric::memory_bandwidth})
      .work([](const kb::Point& p) {
        const bool int8 = p.dtype == kb::DType::i8;
        const double rows = 2.0 * p["F"], K = static_cast<double>(p["K"]);
        kb::Work w;
        w.bytes = rows * K * (int8 ? 1 : 2) + (int8 ? rows * 2 : 0) + K * 2 + p["F"] * 2.0;
        w.flops = 2 * rows * K;
        w.bound = kb::Bound::read;
        w.launches = 1;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<SwigluAbCase>(p); });
}
