// rms_norm against its CPU reference on fresh random data, every version.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/rms_norm/rms_norm.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

struct Param {
  int64_t rows, D;
};

void PrintTo(const Param& p, std::ostream* os) { *os << "rows=" << p.rows << " D=" << p.D; }

class RmsNormTest : public ::testing::TestWithParam<Param> {};

TEST_P(RmsNormTest, MatchesReference) {
  KB_REQUIRE_GPU();
  const auto p = GetParam();
  const uint64_t seed = 4321 + p.rows * 7 + p.D;
  const auto xh = kb::random_bf16(p.rows * p.D, seed, -3.f, 5.f);
  const auto wh = kb::random_bf16(p.D, seed + 1, 0.5f, 1.5f);
  kb::DeviceBuffer<kb::bf16> x(xh.size()), w(wh.size()), y(xh.size());
  x.upload(xh);
  w.upload(wh);
  y.poison();  // NaN: an element no thread wrote fails the check
  kb::rms_norm::rms_norm(x.get(), w.get(), y.get(), p.rows, p.D, 1e-5f, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = kb::to_float(y.download());
  const auto xf = kb::to_float(xh), wf = kb::to_float(wh);
  std::vector<float> ref(out.size());
  kb::rms_norm::rms_norm_ref(xf.data(), wf.data(), ref.data(), p.rows, p.D, 1e-5f);
  const auto c = kb::rms_norm::check_output(out, ref);  // what the experiment checks
  EXPECT_TRUE(c.ok) << c.text();
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RmsNormTest,
    ::testing::Values(
        // warp rows: each V, a partial last block, a lane tail, fewer vectors than lanes
        Param{13, 512}, Param{64, 1024}, Param{17, 2048}, Param{9, 1032}, Param{5, 24},
        // block rows: the experiment's D (V = 4), V = 8 (a row that does not fill
        // the block, the largest)
        Param{33, 4096}, Param{17, 8192}, Param{9, 16384}, Param{7, 4104}, Param{3, 32768}),
    [](const ::testing::TestParamInfo<Param>& i) {
      return "rows" + std::to_string(i.param.rows) + "_D" + std::to_string(i.param.D);
    });

TEST(RmsNorm, RefusesBadShapesBeforeLaunch) {
  // No GPU needed: the checks run on the host before any launch.
  kb::bf16* p = reinterpret_cast<kb::bf16*>(uintptr_t(256));
  EXPECT_THROW(kb::rms_norm::rms_norm(p, p, p, 4, 1001, 1e-5f, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::rms_norm::rms_norm(p, p, p, 0, 1024, 1e-5f, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::rms_norm::rms_norm(p, p, p, 4, 32776, 1e-5f, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::rms_norm::rms_norm(p + 1, p, p, 4, 1024, 1e-5f, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::rms_norm::rms_norm(p, nullptr, p, 4, 1024, 1e-5f, nullptr),
               std::invalid_argument);
}

}  // namespace
