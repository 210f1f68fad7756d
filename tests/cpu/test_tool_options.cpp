// lab/decode_profile/options.h: the profilers' "--key value" loop.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lab/decode_profile/options.h"

namespace {

struct Usage {
  std::string why;
};

std::vector<std::pair<std::string, std::string>> pairs_of(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::vector<std::pair<std::string, std::string>> got;
  kb::tools::for_each_option(
      static_cast<int>(argv.size()), argv.data(),
      [&](const std::string& k, const std::string& v) { got.emplace_back(k, v); },
      [](const std::string& why) { throw Usage{why}; });
  return got;
}

TEST(ToolOptions, PairsInOrder) {
  const auto got = pairs_of({"tool", "--D", "1024,4096", "--reps", "5"});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(std::string("--D"), std::string("1024,4096")));
  EXPECT_EQ(got[1], std::make_pair(std::string("--reps"), std::string("5")));
  EXPECT_TRUE(pairs_of({"tool"}).empty());
}

TEST(ToolOptions, KeyWithoutValueGoesToUsage) {
  try {
    pairs_of({"tool", "--D", "1024", "--reps"});
    FAIL() << "no usage call";
  } catch (const Usage& u) {
    EXPECT_EQ(u.why, "missing value after --reps");
  }
}

}  // namespace
