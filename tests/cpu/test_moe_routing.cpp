// The host side of Mixtral's router (kernels/decode/moe_routing.h): the
// top-k and its weights, and the rule by which a check accepts the GPU's
// choice: a near tie passes whichever way rounding decided it, a wrong
// routing fails.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/decode/moe_routing.h"

namespace {

namespace dec = kb::decode;

TEST(MoeRouting, TopTwoRenormalized) {
  const std::vector<float> logits = {0.1f, 1.5f, -0.3f, 2.0f, 0.7f, 1.5f, -2.f, 0.f};
  const dec::Route r = dec::route_ref(logits, 2);
  ASSERT_EQ(r.ids, (std::vector<int>{3, 1}));  // 1.5 twice: the lower id
  // softmax over 8 then renormalized over 2 = softmax over the 2.
  EXPECT_NEAR(r.weights[0], 1.0 / (1.0 + std::exp(-0.5)), 1e-6);
  EXPECT_NEAR(r.weights[0] + r.weights[1], 1.0, 1e-6);
  const dec::Route one = dec::route_ref(logits, 1);
  EXPECT_EQ(one.ids, (std::vector<int>{3}));
  EXPECT_FLOAT_EQ(one.weights[0], 1.f);
  EXPECT_THROW(dec::route_ref(logits, 0), std::invalid_argument);
  EXPECT_THROW(dec::route_ref(logits, 9), std::invalid_argument);
}

TEST(MoeRouting, NearTieAcceptedWrongRoutingRefused) {
  // The CPU's 2nd and 3rd are 0.004 apart: the GPU may pick either.
  const std::vector<float> logits = {1.0f, 0.5f, 0.496f, -1.f};
  EXPECT_EQ(dec::routing_mismatch(logits, {0, 1}, 2, 0.02), "");
  EXPECT_EQ(dec::routing_mismatch(logits, {1, 0}, 2, 0.02), "");  // order is not the choice
  EXPECT_EQ(dec::routing_mismatch(logits, {0, 2}, 2, 0.02), "");  // the near tie, the GPU's way
  // A wrong routing: expert 3 is 1.5 below the CPU's 2nd.
  const std::string wrong = dec::routing_mismatch(logits, {0, 3}, 2, 0.02);
  EXPECT_NE(wrong.find("expert 3 chosen"), std::string::npos) << wrong;
  // The tie within the tolerance only: at 0.001 the choice of 2 is refused.
  EXPECT_NE(dec::routing_mismatch(logits, {0, 2}, 2, 0.001), "");
  // Out of range, duplicated, or the wrong count.
  EXPECT_NE(dec::routing_mismatch(logits, {0, 4}, 2, 0.02).find("outside"), std::string::npos);
  EXPECT_NE(dec::routing_mismatch(logits, {0, -1}, 2, 0.02).find("outside"), std::string::npos);
  EXPECT_NE(dec::routing_mismatch(logits, {1, 1}, 2, 0.02).find("twice"), std::string::npos);
  EXPECT_NE(dec::routing_mismatch(logits, {0}, 2, 0.02), "");
}

TEST(MoeRouting, WeightsOfAGivenChoice) {
  const std::vector<float> logits = {1.0f, 0.5f, 0.496f};
  const dec::Route r = dec::route_with(logits, {0, 2});
  EXPECT_NEAR(r.weights[0], 1.0 / (1.0 + std::exp(0.496 - 1.0)), 1e-6);
  EXPECT_NEAR(r.weights[1], 1.0 - r.weights[0], 1e-6);
}

// Router logits: relative to their norm, with the rms floor of 1. The
// tiny-moe case (rms 0.3, one error of 0.019) passes; the same error on
// logits of rms 3 is 0.3% and passes; an error the routing could feel fails
// at either size, and so does a NaN.
TEST(MoeRouting, RouterLogitsAgreeRelativeToAtLeastRmsOne) {
  const std::vector<float> small = {0.3f, -0.25f, 0.35f, -0.3f};
  std::vector<float> g = small;
  g[1] += 0.019f;
  EXPECT_EQ(dec::router_logits_mismatch(g, small, 3e-2), "");
  g[1] = small[1] + 0.2f;  // 0.2 / 2 = 10%: fails
  EXPECT_NE(dec::router_logits_mismatch(g, small, 3e-2), "");
  const std::vector<float> big = {3.f, -2.5f, 3.5f, -3.f};
  g = big;
  g[2] += 0.019f;
  EXPECT_EQ(dec::router_logits_mismatch(g, big, 3e-2), "");
  g[2] = big[2] + 0.4f;  // 0.4 / 6.1 = 6.5%: fails
  const std::string why = dec::router_logits_mismatch(g, big, 3e-2);
  EXPECT_NE(why.find("max abs error 0.4 at [2]"), std::string::npos) << why;
  g = big;
  g[0] = std::nanf("");
  EXPECT_NE(dec::router_logits_mismatch(g, big, 3e-2), "");
  EXPECT_NE(dec::router_logits_mismatch({1.f}, big, 3e-2), "");
}

}  // namespace
