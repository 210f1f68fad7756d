// The speed-of-light ladder on a real GPU (suite/ladder_probe.h): a usable,
// monotone ladder from the probe (its chains: test_cli.cpp's kbench probe);
// the ideal copy kernels copy; a kernel timed by the engine reads about 1.0
// of the roofline its own ladder defines (it bounds and is attained); and a
// Case's companion gives the gemm_share ratio.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "suite/experiments/mlp_metrics.h"
#include "suite/ideal_kernels.h"
#include "suite/ladder_probe.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

struct LadderTest : ::testing::Test {
  void SetUp() override {
    KB_REQUIRE_GPU();
    dev = kb::query_device(0);
    kb::EngineOptions o;
    o.quick = true;
    engine = std::make_unique<kb::Engine>(dev, nullptr, o, kb::RunInfo{});
  }
  kb::DeviceInfo dev;
  std::unique_ptr<kb::Engine> engine;
};

TEST_F(LadderTest, IdealCopiesCopy) {
  const size_t bytes = size_t(6) << 20;  // 3 MB copied
  kb::DeviceBuffer<char> buf(bytes);
  kb::DeviceBuffer<int> sink(1);
  for (kb::Ideal k : kb::kIdealCopies) {
    std::vector<char> src(bytes / 2);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7 + 3);
    KB_CUDA_CHECK(cudaMemcpy(buf.get(), src.data(), src.size(), cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemset(buf.get() + bytes / 2, 0, bytes / 2));
    kb::launch_ideal(k, buf.get(), buf.get() + bytes / 2, bytes, dev.sm_count, sink.get(), 0);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<char> out(bytes / 2);
    KB_CUDA_CHECK(
        cudaMemcpy(out.data(), buf.get() + bytes / 2, out.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(out, src) << kb::ideal_name(k);
  }
}

// copy_wave at sizes that take each of its vectors a thread (1, 2, 4, 8 on
// an H100; 8 also past 4 blocks per SM) and end in a partial block, and
// launch_copy_wave in every configuration: the copy equals its source (a
// pattern that differs from byte to byte) and nothing past its end is written.
TEST_F(LadderTest, CopyWaveCopiesAtEverySizeAndConfiguration) {
  const size_t guard = 4096;
  auto copies = [&](size_t copied, const std::function<void(const char*, char*)>& launch) {
    kb::DeviceBuffer<char> buf(2 * copied + guard);
    std::vector<char> src(copied);
    for (size_t i = 0; i < copied; ++i) src[i] = static_cast<char>(i * 131 + i / 4093 + 5);
    KB_CUDA_CHECK(cudaMemcpy(buf.get(), src.data(), copied, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemset(buf.get() + copied, 0xff, copied + guard));
    launch(buf.get(), buf.get() + copied);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<char> out(copied + guard);
    KB_CUDA_CHECK(cudaMemcpy(out.data(), buf.get() + copied, out.size(), cudaMemcpyDeviceToHost));
    const bool tail_kept =
        std::all_of(out.begin() + copied, out.end(), [](char c) { return c == char(0xff); });
    out.resize(copied);
    return out == src && tail_kept;
  };
  kb::DeviceBuffer<int> sink(1);
  for (size_t copied : {size_t(16), size_t(32) << 10, (size_t(512) << 10) + 48, size_t(2) << 20,
                        (size_t(5) << 19) + 16, (size_t(9) << 20) + 16})
    EXPECT_TRUE(copies(copied,
                       [&](const char* src, char* dst) {
                         kb::launch_ideal(kb::Ideal::copy_wave, src, dst, 2 * copied, dev.sm_count,
                                          sink.get(), 0);
                       }))
        << "copy_wave of " << copied << " bytes";
  const size_t copied = (size_t(1) << 20) + 16;
  for (int threads : {64, 128, 256, 512})
    for (int vectors : {1, 2, 4, 8})
      for (bool cs : {false, true})
        EXPECT_TRUE(copies(copied,
                           [&](const char* src, char* dst) {
                             kb::launch_copy_wave(src, dst, copied, threads, vectors, cs, 0);
                           }))
            << threads << " threads x " << vectors << " vectors, cs stores " << cs;
  EXPECT_THROW(kb::launch_copy_wave(nullptr, nullptr, 16, 96, 1, false, 0), std::invalid_argument);
  EXPECT_THROW(kb::launch_copy_wave(nullptr, nullptr, 16, 128, 3, false, 0), std::invalid_argument);
}

TEST_F(LadderTest, ProbeGivesAMonotoneLadderThatBoundsAndIsAttained) {
  const kb::LadderProbe lp = kb::probe_ladder(*engine, dev.sm_count, dev.mem_bytes, true);
  EXPECT_EQ(kb::ladder_problem(lp.sol.read), "");
  EXPECT_EQ(kb::ladder_problem(lp.sol.copy), "");
  EXPECT_EQ(lp.read.size(), lp.sol.read.rungs.size());
  EXPECT_EQ(lp.max_bytes, lp.sol.read.rungs.back().first);
  // The chains are not the ladder's: the probe measures them as rows, in a
  // worker (tests/cpu/test_cli.cpp runs `kbench probe`; suite/chain_probe.h).
  EXPECT_TRUE(lp.chain_report.empty());
  EXPECT_TRUE(lp.sol.launch_extra_by_link.empty());
  // Large reads: the last rungs' slope is an HBM bandwidth (100 GB/s .. 20 TB/s).
  const auto& r = lp.sol.read.rungs;
  const double gbps =
      (r.back().first - r[r.size() - 2].first) / (r.back().second - r[r.size() - 2].second) / 1e9;
  EXPECT_GT(gbps, 100);
  EXPECT_LT(gbps, 20000);

  // The ideal read kernel of 64 MB, timed again as the ladder times it
  // (time_as_sample: cold, with the engine's pause after each sample;
  // round-robin over buffers, after a warm-up), against the ladder. Timed
  // back to back on one buffer with time_cold and no warm-up it read 0.86
  // of the rung (H100): not how the rung or any row is measured.
  kb::Ceilings c;
  c.ladder = lp.sol;
  kb::Work w;
  w.bytes = 64.0 * (1 << 20);
  ASSERT_EQ(kb::roofline(w, c).version, 2);
  std::vector<kb::DeviceBuffer<char>> bufs;
  for (int i = 0; i < 4; ++i) bufs.emplace_back(size_t(64) << 20);
  kb::DeviceBuffer<int> sink(1);
  auto sample = [&](int i) {
    return engine->time_as_sample([&](cudaStream_t s) {
      kb::launch_ideal(kb::Ideal::read_chunks, bufs[i % bufs.size()].get(), nullptr,
                       size_t(64) << 20, dev.sm_count, sink.get(), s);
    });
  };
  // Warm-up as the probe's: the GPU out of its idle state first (the
  // allocations above leave it idle; 20 samples, 2 ms, still read 0.857).
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0;
       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 0.3; ++i)
    sample(i);
  std::vector<double> t;
  for (int i = 0; i < 32; ++i) t.push_back(sample(i));
  std::sort(t.begin(), t.end());
  const double t_min = kb::roofline(w, c).t_min_s, fraction = t_min / t[t.size() / 2];
  const std::string times = " (re-timed median " + std::to_string(t[t.size() / 2] * 1e6) +
                            " us, the ladder's bound " + std::to_string(t_min * 1e6) + " us)";
  EXPECT_GT(fraction, 0.9) << "the ideal kernel far from its own ladder" << times;
  EXPECT_LT(fraction, 1.1) << "the ideal kernel far beyond its own ladder" << times;
}

// A case whose companion is the same copy twice: gemm_share about 2.
__global__ void touch(int4* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i].x += 1;
}

class TwiceCase : public kb::Case {
 public:
  TwiceCase() : buf_(size_t(4) << 20) {}
  void run(cudaStream_t s) override {
    touch<<<512, 256, 0, s>>>(buf_.get(), buf_.size());
    KB_CHECK_LAUNCH();
  }
  bool has_companion() const override { return true; }
  void companion(cudaStream_t s) override {
    run(s);
    run(s);
  }
  kb::Check check(cudaStream_t s, uint64_t) override {
    KB_CUDA_CHECK(cudaMemsetAsync(buf_.get(), 0, buf_.size() * sizeof(int4), s));
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    return kb::Check::pass("touched");
  }

 private:
  kb::DeviceBuffer<int4> buf_;
};

TEST_F(LadderTest, CompanionGivesTheRatioOfItsTimeToTheSample) {
  auto e = kb::Experiment("twice")
               .axis("x", {1})
               .metrics({kb::Metric::latency_us, kb::mlp_metrics::kGemmShare})
               .work([](const kb::Point&) {
                 kb::Work w;
                 w.bytes = 2.0 * (size_t(4) << 20) * 16;
                 return w;
               })
               .make([](const kb::Point&) { return std::make_unique<TwiceCase>(); });
  engine->probe();
  auto rows = engine->run(e);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[1].actual) << rows[1].message;
  EXPECT_EQ(rows[1].metric, "gemm_share");
  EXPECT_GT(*rows[1].actual, 1.5);  // two launches against one (the flush outside both)
  EXPECT_LT(*rows[1].actual, 2.5);
  EXPECT_FALSE(rows[1].roofline);
}

}  // namespace
