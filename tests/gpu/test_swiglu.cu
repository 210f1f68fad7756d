// swiglu against its CPU reference on fresh random data: the experiment's
// F, a partial last block, rows that split a block, silu's far tails, and
// the refusals of bad shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/host_math.h"
#include "kernels/swiglu/swiglu.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

struct Param {
  int64_t tokens, F;
  float range;  // GU uniform in [-range, range)
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << "tokens=" << p.tokens << " F=" << p.F << " range=" << p.range;
}

class SwigluTest : public ::testing::TestWithParam<Param> {};

TEST_P(SwigluTest, MatchesReference) {
  KB_REQUIRE_GPU();
  const auto p = GetParam();
  const uint64_t seed = 4321 + p.tokens * 7 + p.F;
  const auto guh = kb::random_bf16(p.tokens * 2 * p.F, seed, -p.range, p.range);
  kb::DeviceBuffer<kb::bf16> gu(guh.size()), y(p.tokens * p.F);
  gu.upload(guh);
  y.poison();  // NaN: an element no thread wrote fails the check
  kb::swiglu::swiglu(gu.get(), y.get(), p.tokens, p.F, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = kb::to_float(y.download());
  const auto guf = kb::to_float(guh);
  std::vector<float> ref(out.size());
  kb::swiglu::swiglu_ref(guf.data(), ref.data(), p.tokens, p.F);
  const auto c = kb::swiglu::check_output(out, ref);  // what the experiment checks
  EXPECT_TRUE(c.ok) << c.text();
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SwigluTest,
    ::testing::Values(
        // the experiment's F (blocks of 512 vectors end mid-row; a partial last block)
        Param{33, 11008, 5}, Param{17, 14336, 5},
        // one vector; fewer vectors than a block; rows of one vector; exactly one block
        Param{1, 8, 5}, Param{3, 24, 5}, Param{100, 8, 5}, Param{8, 512, 5},
        // a row that is not a multiple of a warp's vectors, many blocks
        Param{129, 1000, 5},
        // silu's tails: e^-g overflows fp32 below g = -88.7
        Param{7, 4096, 120}),
    [](const ::testing::TestParamInfo<Param>& i) {
      return "tokens" + std::to_string(i.param.tokens) + "_F" + std::to_string(i.param.F) +
             "_range" + std::to_string(static_cast<int>(i.param.range));
    });

TEST(Swiglu, RefusesBadShapesBeforeLaunch) {
  // No GPU needed: the checks run on the host before any launch.
  kb::bf16* p = reinterpret_cast<kb::bf16*>(uintptr_t(256));
  EXPECT_THROW(kb::swiglu::swiglu(p, p, 4, 1001, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::swiglu::swiglu(p, p, 0, 1024, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::swiglu::swiglu(p, p, 4, 0, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::swiglu::swiglu(p, p, int64_t(1) << 20, 16384, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::swiglu::swiglu(p + 1, p, 4, 1024, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::swiglu::swiglu(p, p + 1, 4, 1024, nullptr), std::invalid_argument);
  EXPECT_THROW(kb::swiglu::swiglu(nullptr, p, 4, 1024, nullptr), std::invalid_argument);
}

}  // namespace
