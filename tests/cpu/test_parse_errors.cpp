// Bytes that the parsers of the files a user hands over must refuse with
// their own error (naming the file), never with an exception of the JSON
// library or undefined behaviour: each case was found by a harness of
// tests/fuzz/ and is kept here so that it runs in every build.
#include <gtest/gtest.h>

#include <string>

#include "core/datasheets.h"
#include "core/suspects.h"
#include "core/targets.h"
#include "core/tuning.h"

namespace {

// The message of the error `parse` throws; "no error" or "other: <what>"
// when it throws something else.
template <typename Error, typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "no error";
}

TEST(TargetFileParse, NumberOutOfRangeIsATargetError) {
  const std::string text = R"J({"gpu": "x", "peaks": {"hbm_gbps": 1e400}, "targets": []})J";
  const std::string e =
      error_of<kb::TargetError>([&] { kb::parse_target_file(text, "targets/x.json"); });
  EXPECT_EQ(e.rfind("targets/x.json:", 0), 0u) << e;
}

TEST(TuningFileParse, NumberOutOfRangeIsATuningError) {
  const std::string text = R"J({"gpu": "x", "cublaslt": [{"M": 1e999}]})J";
  const std::string e =
      error_of<kb::TuningError>([&] { kb::parse_tuning_file(text, "tuning/x.json"); });
  EXPECT_EQ(e.rfind("tuning/x.json:", 0), 0u) << e;
}

TEST(TuningFileParse, InputOrEpilogueNotAStringNamesTheEntry) {
  const std::string algo =
      R"J("algo": {"id": 1, "tile": 1, "stages": 1, "splitk": 1, "reduction": 0, "swizzle": 0,
                   "custom": 0, "cluster": 0})J";
  for (const char* field : {R"J("input": 5)J", R"J("epilogue": ["none"])J"}) {
    const std::string text = R"J({"gpu": "x", "cublaslt": [{"M": 1, "N": 1, "K": 1, )J" +
                             std::string(field) + ", " + algo + "}]}";
    const std::string e =
        error_of<kb::TuningError>([&] { kb::parse_tuning_file(text, "tuning/x.json"); });
    EXPECT_NE(e.find(": cublaslt[0]."), std::string::npos) << e;
    EXPECT_NE(e.find("expected a string"), std::string::npos) << e;
  }
}

TEST(DatasheetsParse, NumberOutOfRangeIsADatasheetError) {
  const std::string text = R"J({"gpus": [{"gpu": "G", "hbm_gbps": -1e400}]})J";
  const std::string e =
      error_of<kb::DatasheetError>([&] { kb::parse_datasheets(text, "datasheets/n.json"); });
  EXPECT_EQ(e.rfind("datasheets/n.json:", 0), 0u) << e;
}

TEST(SuspectsAttempts, ASuffixBeyondAnAttemptIsNotCounted) {
  // Past INT_MAX the next number would overflow; past 1,000,000 it is no
  // attempt at all (core/attempts.h).
  EXPECT_EQ(kb::next_attempt("x,R1/2147483647,y\n", "R1"), 2);
  EXPECT_EQ(kb::next_attempt("x,R1/99999999999,y\nx,R1/3,y\n", "R1"), 4);
  EXPECT_EQ(kb::next_attempt("x,R1/1000000,y\n", "R1"), 1000001);
}

}  // namespace
