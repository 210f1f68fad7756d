// The one-token SwiGLU variants (lab/swiglu_ab/variants.h) against the CPU
// reference: U2 (the product's kernels) and U1 (the lab's twins), uncapped
// and compiled for 7 and 8 blocks an SM, int8 and bf16, K over 1 and 4
// warps, at shapes that fill no whole block and at Llama-2-7B's gate/up
// (sampled rows); the graph swap the decode profiler makes; the caps'
// registers and blocks an SM. The names and refusals need no GPU (the
// refusal comes before any CUDA call).
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/common/graph.h"
#include "kernels/common/host_math.h"
#include "lab/swiglu_ab/check.h"
#include "lab/swiglu_ab/variants.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using kb::bf16;
namespace gemv = kb::gemv;
namespace sw = kb::lab::swiglu;

gemv::General step_config(int warps, int k_split) {
  gemv::General g;
  g.rows_per_warp = 2;
  g.unroll = 2;
  g.warps = warps;
  g.pipeline = true;
  g.k_split = k_split;
  return g;
}

std::string name(const gemv::General& g) { return gemv::kernel_name(g); }

TEST(SwigluVariants, SixNamedVariantsOfTheStepsConfiguration) {
  std::vector<std::string> names;
  for (const gemv::General& g : sw::variants_of(step_config(4, 1))) {
    names.push_back(name(g));
    EXPECT_EQ(sw::refusal(g), "") << name(g);
    const auto parsed = gemv::parse_kernel(name(g));
    ASSERT_TRUE(parsed) << name(g);
    EXPECT_EQ(gemv::kernel_name(*parsed), name(g));
    EXPECT_EQ(sw::product_twin(g).unroll, 2);
    EXPECT_EQ(sw::product_twin(g).min_blocks, g.min_blocks);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"R2U2W4P1K1", "R2U2W4P1K1B7", "R2U2W4P1K1B8",
                                             "R2U1W4P1K1", "R2U1W4P1K1B7", "R2U1W4P1K1B8"}));
}

TEST(SwigluVariants, RefusesWhatTheProductHasNoTwinFor) {
  auto refused = [](auto change) {
    gemv::General g = step_config(4, 1);
    change(g);
    return !sw::refusal(g).empty();
  };
  EXPECT_TRUE(refused([](gemv::General& g) { g.unroll = 4; }));
  EXPECT_TRUE(refused([](gemv::General& g) { g.rows_per_warp = 1; }));
  EXPECT_TRUE(refused([](gemv::General& g) { g.pipeline = false; }));
  EXPECT_TRUE(refused([](gemv::General& g) { g.min_blocks = 6; }));
  EXPECT_TRUE(refused([](gemv::General& g) { g.warps = 8, g.min_blocks = 7; }));
  EXPECT_FALSE(refused([](gemv::General& g) { g.warps = 8, g.unroll = 1; }));
  EXPECT_THROW(sw::unroll1_kernel(true, 6), std::invalid_argument);
  gemv::General bad = step_config(4, 1);
  bad.unroll = 4;
  EXPECT_THROW(sw::launch_of(sw::Operands{}, bad), std::invalid_argument);
}

// A problem's inputs as _swiglu_ab makes them (W filled on the GPU), and
// their host copies for the reference.
struct Buffers {
  sw::Inputs in;
  kb::DeviceBuffer<uint8_t> w;
  kb::DeviceBuffer<bf16> scale, x, h;

  Buffers(bool int8, int64_t F, int64_t K, uint64_t seed)
      : w(static_cast<size_t>(2 * F * K) * (int8 ? 1 : 2)), scale(int8 ? 2 * F : 0), x(K), h(F) {
    in.int8 = int8;
    in.wseed = seed | 1;
    in.F = F;
    in.K = K;
    if (int8) {
      kb::fill_int8(reinterpret_cast<int8_t*>(w.get()), w.size(), in.wseed, nullptr);
      const auto s = kb::random_bf16(2 * F, seed + 1, sw::int8_scale_lo(K), sw::int8_scale_hi(K));
      scale.upload(s);
      in.scale = kb::to_float(s);
    } else {
      kb::fill_bf16(reinterpret_cast<bf16*>(w.get()), w.size() / 2, in.wseed, nullptr);
    }
    const auto xs = kb::random_bf16(K, seed + 2, -1.f, 1.f);
    x.upload(xs);
    in.x = kb::to_float(xs);
  }
  sw::Operands operands() {
    return {in.int8, w.get(), in.int8 ? scale.get() : nullptr, x.get(), h.get(), in.F,
            in.K,    in.eps};
  }
  // h after `enqueue` (on the legacy stream), poisoned first.
  template <typename Enqueue>
  std::vector<float> output(Enqueue&& enqueue) {
    h.poison();
    enqueue();
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    return kb::to_float(h.download());
  }
};

TEST(SwigluVariants, EachMatchesTheReference) {
  KB_REQUIRE_GPU();
  struct Shape {
    int64_t F, K;
    bool int8;
  };
  for (const Shape& p :
       {Shape{1100, 4112, true}, Shape{19, 12288, true}, Shape{11008, 4096, true},
        Shape{1100, 4104, false}, Shape{37, 264, false}, Shape{11008, 4096, false}})
    for (int ks : {1, 4}) {
      const uint64_t seed = 500 + p.F + p.K;
      Buffers b(p.int8, p.F, p.K, seed);
      const auto rows = sw::sample_rows(p.F, 512, seed);
      for (const gemv::General& g : sw::variants_of(step_config(4, ks))) {
        SCOPED_TRACE(std::string(p.int8 ? "int8 " : "bf16 ") + name(g) +
                     " F=" + std::to_string(p.F) + " K=" + std::to_string(p.K));
        const sw::Launch l = sw::launch_of(b.operands(), g);
        const sw::RowsCheck c = sw::check_rows(b.in, b.output([&] { l.enqueue(nullptr); }), rows);
        EXPECT_TRUE(c.ok) << c.text;
      }
    }
}

// Without a K split a lane reads the same vectors in the same order in
// batches of one or two, and a cap changes registers, not arithmetic.
TEST(SwigluVariants, WithoutKSplitEveryVariantGivesTheSameBits) {
  KB_REQUIRE_GPU();
  for (bool int8 : {true, false}) {
    Buffers b(int8, 1100, 4112, 71);
    std::vector<float> first;
    for (const gemv::General& g : sw::variants_of(step_config(4, 1))) {
      const sw::Launch l = sw::launch_of(b.operands(), g);
      const auto h = b.output([&] { l.enqueue(nullptr); });
      if (first.empty()) first = h;
      EXPECT_EQ(h, first) << (int8 ? "int8 " : "bf16 ") << name(g);
    }
  }
}

// What the profiler does to a captured step: every node of the product's
// kernel runs the twin, with the product's grid and arguments.
TEST(SwigluVariants, SwapRunsTheTwinInEveryNode) {
  KB_REQUIRE_GPU();
  Buffers b(true, 1100, 4112, 72);
  gemv::General u2 = step_config(4, 1), u1 = u2;
  u2.min_blocks = u1.min_blocks = 7;
  u1.unroll = 1;
  const sw::Launch l2 = sw::launch_of(b.operands(), u2);
  EXPECT_EQ(l2.func, sw::product_kernel(true, 1100, 4112, u2));
  EXPECT_EQ(sw::launch_of(b.operands(), u1).func, sw::unroll1_kernel(true, 7));
  kb::CudaGraph g = kb::capture_graph([&](cudaStream_t s) {
    for (int i = 0; i < 3; ++i) l2.enqueue(s);
  });
  EXPECT_EQ(sw::swap_kernel(g.graph.get(), l2.func, sw::unroll1_kernel(true, 7)), 3);
  EXPECT_EQ(sw::swap_kernel(g.graph.get(), l2.func, sw::unroll1_kernel(true, 7)), 0);
  cudaGraphExec_t e = nullptr;
  KB_CUDA_CHECK(cudaGraphInstantiate(&e, g.graph.get(), 0));
  g.exec.reset(e);
  const auto swapped = b.output([&] { g.launch(nullptr); });
  const sw::RowsCheck c = sw::check_rows(b.in, swapped, sw::sample_rows(1100, 1100, 1));
  EXPECT_TRUE(c.ok) << c.text;
  EXPECT_EQ(swapped, b.output([&] { l2.enqueue(nullptr); }));
}

// A cap of n blocks an SM holds n blocks of 4 warps (at most 65536 / (128·n)
// registers a thread); printed, the registers of every variant.
TEST(SwigluVariants, CapsHoldTheirBlocks) {
  KB_REQUIRE_GPU();
  for (bool int8 : {true, false}) {
    Buffers b(int8, 64, 4096, 73);
    for (const gemv::General& g : sw::variants_of(step_config(4, 1))) {
      const sw::Launch l = sw::launch_of(b.operands(), g);
      const sw::Resources r = sw::resources(l.func, 128);
      std::printf("  %s %-14s %s\n", int8 ? "int8" : "bf16", name(g).c_str(), sw::text(r).c_str());
      EXPECT_GT(r.regs, 0);
      if (g.min_blocks == 0) continue;
      EXPECT_LE(r.regs, 65536 / (128 * g.min_blocks)) << name(g);
      EXPECT_GE(r.blocks_per_sm, g.min_blocks) << name(g);
    }
  }
}

}  // namespace
