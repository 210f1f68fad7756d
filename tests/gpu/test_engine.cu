// The measurement engine on a real GPU: a good experiment gives an `ok` row
// with a sane roofline fraction; an out-of-memory and a failing check give a
// `failed` and an `incorrect` row, and the engine goes on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "suite/device.h"
#include "suite/engine.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    b[i] = a[i];
}

class CopyCase : public kb::Case {
 public:
  explicit CopyCase(size_t n, bool wrong = false) : n_(n), a_(n), b_(n), wrong_(wrong) {}
  void run(cudaStream_t s) override {
    copy_kernel<<<1024, 256, 0, s>>>(a_.get(), b_.get(), n_);
    KB_CHECK_LAUNCH();
  }
  kb::Check check(cudaStream_t s, uint64_t seed) override {
    auto host = kb::random_uniform(n_ * 4, seed);
    std::vector<float4> in(n_);
    std::memcpy(in.data(), host.data(), n_ * sizeof(float4));
    a_.upload(in);
    b_.poison();
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    auto out = b_.download();
    std::vector<float> got(n_ * 4);
    std::memcpy(got.data(), out.data(), n_ * sizeof(float4));
    if (wrong_) host[0] += 1.f;  // a reference that disagrees
    auto c = kb::compare(got, host, 0);
    return c.ok ? kb::Check::pass(c.text()) : kb::Check::fail(c.text());
  }

 private:
  size_t n_;
  kb::DeviceBuffer<float4> a_, b_;
  bool wrong_;
};

kb::Experiment copy_experiment(const char* name, size_t mib, bool wrong = false) {
  return kb::Experiment(name)
      .axis("MiB", {static_cast<int64_t>(mib)})
      .dtypes({kb::DType::f32})
      .metrics({kb::Metric::memory_bandwidth, kb::Metric::latency_us})
      .seed_mean()
      .work([](const kb::Point& p) {
        kb::Work w;
        w.bytes = 2.0 * p["MiB"] * (1 << 20);
        w.bound = kb::Bound::copy;
        return w;
      })
      .make([wrong](const kb::Point& p) {
        return std::make_unique<CopyCase>(size_t(p["MiB"]) * (1 << 20) / sizeof(float4), wrong);
      });
}

struct EngineTest : ::testing::Test {
  void SetUp() override {
    KB_REQUIRE_GPU();
    dev = kb::query_device(0);
    kb::EngineOptions o;
    o.quick = true;
    kb::RunInfo info;
    info.run_id = "test";
    engine = std::make_unique<kb::Engine>(dev, nullptr, o, info);
    engine->probe();
  }
  kb::DeviceInfo dev;
  std::unique_ptr<kb::Engine> engine;
};

TEST_F(EngineTest, GoodExperimentGivesOkRowsAndMean) {
  auto rows = engine->run(copy_experiment("copy", 256));
  ASSERT_EQ(rows.size(), 4u);  // 2 metrics + 2 mean rows
  const auto& bw = rows[0];
  EXPECT_EQ(bw.status == kb::status::ok || bw.status == kb::status::below_target, true)
      << bw.message;
  ASSERT_TRUE(bw.actual && bw.roofline && bw.roofline_fraction);
  EXPECT_GT(*bw.roofline_fraction, 0.3);
  EXPECT_LT(*bw.roofline_fraction, 1.2);
  EXPECT_GE(bw.samples, 5);
  EXPECT_TRUE(bw.target.has_value());  // unknown GPU: the roofline fallback target
  EXPECT_EQ(rows[2].shape, "mean");
  EXPECT_DOUBLE_EQ(*rows[2].actual, *bw.actual);
}

TEST_F(EngineTest, OutOfMemoryIsAFailedRowAndTheRunGoesOn) {
  // 2^40 MiB: far more than any GPU has.
  auto rows = engine->run(copy_experiment("huge", size_t(1) << 30));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].status, kb::status::failed);
  EXPECT_NE(rows[0].message.find("out of GPU memory"), std::string::npos) << rows[0].message;
  EXPECT_FALSE(rows[0].actual.has_value());
  EXPECT_EQ(rows.back().shape, "mean");
  EXPECT_EQ(rows.back().status, kb::status::failed);
  auto next = engine->run(copy_experiment("after", 64));
  EXPECT_TRUE(next[0].actual.has_value()) << next[0].message;
}

TEST_F(EngineTest, FailedCheckIsIncorrectNeverATiming) {
  auto rows = engine->run(copy_experiment("wrong", 16, /*wrong=*/true));
  EXPECT_EQ(rows[0].status, kb::status::incorrect);
  EXPECT_FALSE(rows[0].actual.has_value());
  EXPECT_FALSE(rows[0].median_us.has_value());
  EXPECT_NE(rows[0].message.find("output check failed"), std::string::npos);
}

// A kernel fault poisons the process's CUDA context for good, so it cannot
// be tested in this process: tests/cpu/test_cli.cpp (CliIsolation) runs the
// _selftest_isolation experiment through kbench_selftest's worker processes.

TEST(Device, QueryAndClocks) {
  KB_REQUIRE_GPU();
  auto d = kb::query_device(0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0u);
  kb::ClockMonitor m(d.pci_bus_id);
  if (m.available()) {
    EXPECT_GT(m.sm_clock_mhz().value_or(0), 0u);
    EXPECT_GT(m.max_sm_clock_mhz().value_or(0), 0u);
  }
}

}  // namespace
