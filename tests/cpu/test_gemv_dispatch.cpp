// The GEMV dispatch (kernels/gemv/dispatch.h), the `gemv` section of the
// tuning table (suite/tuning.h) and the tuner's buckets (suite/gemv_tune.h),
// without a GPU. The golden file tests/data/gemv_choices_golden.txt holds
// what the rules picked before dispatch became data (commit d5ff324): the
// H100's table and the generic rule must both reproduce it exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/tuning.h"
#include "kernels/gemv/dispatch.h"
#include "suite/gemv_tune.h"

namespace {

namespace fs = std::filesystem;
namespace gemv = kb::gemv;

const std::string kSource = KBENCH_SOURCE_DIR;
const std::string kH100 = "NVIDIA H100 80GB HBM3";

std::vector<gemv::TableEntry> h100_table() {
  std::string warning;
  auto t = kb::load_gemv_table(kSource + "/targets/tuning/h100-sxm5-80gb.json", kH100, &warning);
  EXPECT_EQ(warning, "");
  EXPECT_FALSE(t.empty());
  return t;
}

// The choice for one golden line's use.
std::string chosen(const std::vector<gemv::TableEntry>& table, const std::string& use, bool int8,
                   int64_t N, int64_t K, int n_sel, int tokens) {
  gemv::Config c;
  if (use == "gemv")
    c = gemv::choose_in(table, int8, N, K, n_sel).config;
  else if (use == "decode")
    c = gemv::choose_in(table, int8, N, K, n_sel, gemv::Use::decode).config;
  else if (use == "tokens")
    c = gemv::tokens_config(int8, N, K, tokens, false);
  else if (use == "swiglu")
    c = gemv::tokens_config(int8, N, K, tokens, true);
  else if (use == "gswiglu")
    c = gemv::gather_swiglu_config(int8, N / 2, K);
  else if (use == "combine")
    c = gemv::combine_config(int8, N, K);
  else
    ADD_FAILURE() << "unknown use " << use;
  return gemv::kernel_name(c.kernel);
}

class GoldenChoices : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenChoices, EveryShapeOfTheSuiteAndTheDecodersAsBefore) {
  const bool h100 = std::string(GetParam()) == "h100";
  const auto table = h100 ? h100_table() : std::vector<gemv::TableEntry>{};
  std::ifstream in(kSource + "/tests/data/gemv_choices_golden.txt");
  ASSERT_TRUE(in) << "tests/data/gemv_choices_golden.txt";
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string use, dtype, want;
    int64_t N = 0, K = 0;
    int n_sel = 0, tokens = 0;
    ASSERT_TRUE(ss >> use >> dtype >> N >> K >> n_sel >> tokens >> want) << line;
    // "GENERIC|h100:KERNEL": the H100 table's measured choice differs.
    if (const size_t bar = want.find("|h100:"); bar != std::string::npos)
      want = h100 ? want.substr(bar + 6) : want.substr(0, bar);
    EXPECT_EQ(chosen(table, use, dtype == "int8", N, K, n_sel, tokens), want) << line;
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

INSTANTIATE_TEST_SUITE_P(Tables, GoldenChoices, ::testing::Values("h100", "generic"));

TEST(GemvDispatch, TheH100TableChoosesWhereItHasBuckets) {
  const auto t = h100_table();
  const auto c = gemv::choose_in(t, true, 12288, 4096);
  EXPECT_EQ(gemv::kernel_name(c.config.kernel), "GM4W4K1");
  EXPECT_TRUE(c.from_table());
  EXPECT_NE(c.source.find("h100-sxm5-80gb.json gemv["), std::string::npos) << c.source;
  const auto g = gemv::choose_in(t, false, 12288, 4096);  // bf16: the general kernel's rule
  EXPECT_EQ(g.source, "generic");
  EXPECT_EQ(gemv::kernel_name(g.config.kernel), "R1U2W4P1K4");
}

// The H200's decode step entries read and serve the decoder's launches:
// Llama-2-7B int8's SwiGLU, Mixtral's qkv and the LM head on the dp4a
// kernel (docs/decisions/0065, measured in the step graph).
TEST(GemvDispatch, TheH200TablesDecodeEntriesServeTheStep) {
  std::string warning;
  const auto t =
      kb::load_gemv_table(kSource + "/targets/tuning/h200-sxm-141gb.json", "NVIDIA H200", &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(gemv::kernel_name(gemv::swiglu_config_in(t, true, 11008, 4096, 1).kernel), "DP2U2K1W8");
  EXPECT_EQ(
      gemv::kernel_name(gemv::choose_in(t, true, 6144, 4096, 1, gemv::Use::decode).config.kernel),
      "DP2U2K1W8");
  EXPECT_EQ(
      gemv::kernel_name(gemv::choose_in(t, true, 32000, 4096, 1, gemv::Use::decode).config.kernel),
      "DP2U2K1W8");
  // bf16 keeps its down and qkv entries.
  EXPECT_EQ(
      gemv::kernel_name(gemv::choose_in(t, false, 4096, 11008, 1, gemv::Use::decode).config.kernel),
      "R2U1W4P1K2");
}

TEST(GemvDispatch, AnEntryThatCannotServeAShapeFallsBackToTheGenericRule) {
  gemv::TableEntry e;  // every int8 one-matrix shape: the tile kernel (rows of at most 8 KB)
  e.bucket.int8 = true;
  e.kernel = gemv::Tile{4};
  e.origin = "t.json gemv[0]";
  const auto c = gemv::choose_in({e}, true, 16384, 16384);
  EXPECT_EQ(c.source, "generic");
  EXPECT_EQ(gemv::kernel_name(c.config.kernel), "BM3W8S2O2R2");
  EXPECT_EQ(gemv::choose_in({e}, true, 4096, 4096).source, "t.json gemv[0]");
}

TEST(GemvDispatch, EveryShapeGetsAConfigurationThatServesIt) {
  for (bool int8 : {false, true})
    for (int64_t N : {1, 7, 1000, 4096, 14336, 100000})
      for (int64_t K : {16, 256, 1024, 1040, 4096, 11008, 16384, 32768, 65536})
        for (int n_sel : {1, 2, 3}) {
          if (K % (int8 ? 16 : 8) != 0) continue;
          const auto c = gemv::choose_in({}, int8, N, K, n_sel);
          EXPECT_EQ(gemv::refusal(c.config.kernel, int8, N, K, n_sel), "")
              << gemv::kernel_name(c.config.kernel) << " N=" << N << " K=" << K;
        }
}

TEST(GemvConfig, NamesReadBack) {
  for (const auto& s : kb::gemv_tuning_shapes())
    for (const auto& k : kb::gemv_candidates(s)) {
      const auto back = gemv::parse_kernel(gemv::kernel_name(k));
      ASSERT_TRUE(back.has_value()) << gemv::kernel_name(k);
      EXPECT_EQ(gemv::kernel_name(*back), gemv::kernel_name(k));
    }
  EXPECT_EQ(gemv::kernel_name(*gemv::parse_kernel("B3W8S3")), "B3W8S3O2R0");
  EXPECT_EQ(gemv::kernel_name(*gemv::parse_kernel("one")), "one4");
  EXPECT_EQ(gemv::kernel_name(*gemv::parse_kernel("R2U2W4P0K2B8")), "R2U2W4P0K2B8");
  EXPECT_EQ(gemv::parse_kernel("R2U2W4P0K2B8")->index(), 0u);  // General
  EXPECT_EQ(std::get<gemv::General>(*gemv::parse_kernel("R2U2W4P1K1B7")).min_blocks, 7);
  for (const char* bad : {"", "X", "R1U2W4P2K1", "R1U2W4P1", "T", "B3W8", "GM4W4K1x", "M4W4",
                          "one9x", "BM3W8S2O2R2 ", "R2U2W4P0K2B0", "R2U2W4P0K2B", "R2U2W4P0K2B8x"})
    EXPECT_FALSE(gemv::parse_kernel(bad).has_value()) << bad;
}

// A count of zero or less names no kernel: a tuning table's "B3W0S3" (no
// warps) divided by zero in refusal() and killed kbench tune gemv and the
// run's workers with SIGFPE, no message.
TEST(GemvConfig, ZeroOrNegativeCountsNameNoKernel) {
  for (const char* bad :
       {"B3W0S3", "BM3W0S2O2R2", "B0W8S3", "B3W8S0", "B3W8S3O-1R0", "T0", "T-4", "R0U1W4P1K1",
        "R1U0W4P1K1", "R1U1W0P1K1", "R1U1W4P1K0", "M0W4K1", "M4W0K1", "GM4W4K0", "M4W4K1D0"})
    EXPECT_FALSE(gemv::parse_kernel(bad).has_value()) << bad;
  EXPECT_TRUE(gemv::parse_kernel("B3W8S3O0R0").has_value());  // O0: contiguous rows; R0: by size
  // Built by hand: a reason, not a crash.
  EXPECT_NE(gemv::refusal(gemv::Bulk{3, 0, 1, 2, 0, false}, false, 4096, 4096, 1), "");
  const auto doc = nlohmann::ordered_json::parse(
      R"J({"gpu": "G", "gemv": [{"dtype": "int8", "kernel": "B3W0S3"}]})J");
  try {
    kb::parse_gemv_table(doc, "u.json");
    ADD_FAILURE() << "B3W0S3 read as a kernel";
  } catch (const kb::TuningError& e) {
    EXPECT_TRUE(std::string(e.what()).rfind("u.json: gemv[0].kernel: unknown kernel 'B3W0S3'", 0) ==
                0)
        << e.what();
  }
}

TEST(GemvTune, CandidatesServeTheirShapeAndStartWithTheGenericChoice) {
  const auto shapes = kb::gemv_tuning_shapes();
  EXPECT_GE(shapes.size(), 30u);
  for (const auto& s : shapes) {
    const auto c = kb::gemv_candidates(s);
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(gemv::kernel_name(c[0]),
              gemv::kernel_name(gemv::choose_in({}, s.int8, s.N, s.K, s.n_sel).config.kernel));
    for (const auto& k : c) EXPECT_EQ(gemv::refusal(k, s.int8, s.N, s.K, s.n_sel), "");
  }
}

TEST(GemvTune, BucketsCoverEveryRowCountAndMergeNeighbours) {
  auto tuned = [](int64_t N, const char* k) {
    kb::GemvTuned t;
    t.shape = {true, N, 4096, 1, ""};
    t.best = *gemv::parse_kernel(k);
    return t;
  };
  const auto b = kb::tune_buckets(
      {tuned(22016, "GM4W4K1"), tuned(4096, "T4"), tuned(12288, "GM4W4K1"), tuned(32000, "T8")});
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].bucket.rows_min, 1);
  EXPECT_EQ(b[0].bucket.rows_max, 4096);
  EXPECT_EQ(gemv::kernel_name(b[1].kernel), "GM4W4K1");
  EXPECT_EQ(b[1].bucket.rows_min, 4097);
  EXPECT_EQ(b[1].bucket.rows_max, 22016);
  EXPECT_EQ(b[2].bucket.rows_min, 22017);
  EXPECT_EQ(b[2].bucket.rows_max, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(b[2].bucket.row_bytes_min, 4096);
  EXPECT_EQ(gemv::kernel_name(gemv::choose_in(b, true, 16000, 4096).config.kernel), "GM4W4K1");
  EXPECT_EQ(gemv::choose_in(b, true, 16000, 8192).source, "generic");  // rows of 8 KB: not tuned
}

// --- the gemv section of a tuning file ---

std::string gemv_text(const nlohmann::ordered_json& entries) {
  nlohmann::ordered_json doc;
  doc["gpu"] = kH100;
  doc["gemv"] = entries;
  return doc.dump(2);
}

std::string parse_error(const std::string& text) {
  try {
    const auto f = kb::parse_tuning_file(text, "x.json");
    kb::parse_gemv_table(f.doc, "x.json");
  } catch (const kb::TuningError& e) {
    return e.what();
  }
  return "";
}

TEST(GemvTable, WhatTheTunerWritesReadsBack) {
  gemv::TableEntry e;
  e.bucket.int8 = true;
  e.bucket.gather = true;
  e.bucket.rows_min = 2048;
  e.bucket.row_bytes_min = e.bucket.row_bytes_max = 4096;
  e.bucket.max_bytes = 1 << 25;
  e.kernel = gemv::Mma{4, 8, 1, 2, true};
  const auto f = kb::parse_tuning_file(
      gemv_text(nlohmann::ordered_json::array({kb::gemv_entry_json(e, {{"median_us", 16.2}})})),
      "x.json");
  const auto t = kb::parse_gemv_table(f.doc, "x.json");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(gemv::kernel_name(t[0].kernel), "GM4W8K1");
  EXPECT_TRUE(t[0].bucket.int8 && t[0].bucket.gather);
  EXPECT_EQ(t[0].bucket.rows_min, 2048);
  EXPECT_EQ(t[0].bucket.rows_max, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(t[0].bucket.row_bytes_max, 4096);
  EXPECT_EQ(t[0].bucket.max_bytes, 1 << 25);
  EXPECT_EQ(t[0].origin, "x.json gemv[0]");
}

// A shape's bytes (experts x rows x row bytes) may not fit an int64_t: the
// bounds are compared without forming them, so no absurd shape wraps into
// a bucket, and an empty one is in none.
TEST(GemvTable, BucketBoundsHoldForShapesWhoseBytesPassInt64) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const auto u = gemv::Use::standalone;
  gemv::Bucket capped;
  capped.int8 = true;
  capped.max_bytes = int64_t(1) << 50;
  EXPECT_TRUE(capped.holds(true, int64_t(1) << 40, 1024, 1, u));  // at the cap
  EXPECT_FALSE(capped.holds(true, (int64_t(1) << 40) + 1, 1024, 1, u));
  EXPECT_FALSE(capped.holds(true, int64_t(1) << 62, 4, 1, u));  // 2^64 bytes: 0 wrapped
  EXPECT_FALSE(capped.holds(true, kMax, kMax, 1, u));
  gemv::Bucket gather;
  gather.gather = true;
  gather.max_bytes = int64_t(1) << 50;
  EXPECT_TRUE(gather.holds(false, 1024, 4096, 2, u));
  EXPECT_FALSE(gather.holds(false, int64_t(1) << 61, 2, 2, u));  // 2^65 bytes: 0 wrapped
  EXPECT_FALSE(gather.holds(false, kMax / 3, kMax / 2, 3, u));
  gemv::Bucket open;                                       // bf16, no bound but int64_t's
  EXPECT_TRUE(open.holds(false, kMax, kMax / 2, 1, u));    // rows of kMax - 1 bytes
  EXPECT_FALSE(open.holds(false, 1, kMax / 2 + 1, 1, u));  // rows past int64_t
  EXPECT_FALSE(open.holds(false, 1, kMax, 1, u));
  EXPECT_FALSE(capped.holds(true, 1, 1, 0, u));  // no expert
  EXPECT_FALSE(capped.holds(true, 1, 1, -2, u));
  EXPECT_FALSE(open.holds(false, 1, -kMax, 1, u));
}

TEST(GemvTable, BadEntriesAreNamedByFileAndEntry) {
  using J = nlohmann::ordered_json;
  const J good = {{"dtype", "int8"}, {"rows", {1, nullptr}}, {"kernel", "T4"}};
  auto with = [&](const char* key, J v) {
    J e = good;
    e[key] = v;
    return gemv_text(J::array({good, e}));
  };
  EXPECT_EQ(parse_error(gemv_text(J::array({good}))), "");
  EXPECT_NE(parse_error(with("kernel", "Z9")).find("x.json: gemv[1].kernel: unknown kernel 'Z9'"),
            std::string::npos);
  EXPECT_NE(parse_error(with("dtype", "fp4")).find("x.json: gemv[1].dtype"), std::string::npos);
  EXPECT_NE(parse_error(with("rows", J{4096, 1024})).find("gemv[1].rows: max below min"),
            std::string::npos);
  EXPECT_NE(parse_error(with("row_bytes", J{0, 1024})).find("gemv[1].row_bytes"),
            std::string::npos);
  EXPECT_NE(parse_error(with("experts", "three")).find("gemv[1].experts"), std::string::npos);
  EXPECT_NE(parse_error(with("use", "prefill")).find("gemv[1].use"), std::string::npos);
  EXPECT_NE(parse_error(gemv_text(J::array({1}))).find("gemv[0]: expected an object"),
            std::string::npos);
  EXPECT_NE(parse_error(gemv_text(J::object())).find("gemv: expected a list"), std::string::npos);
  J no_kernel = good;
  no_kernel.erase("kernel");
  EXPECT_NE(parse_error(gemv_text(J::array({no_kernel}))).find("gemv[0].kernel: missing"),
            std::string::npos);
}

struct TempFile {
  std::string path =
      (fs::temp_directory_path() / ("kbench_gemv_" + std::to_string(getpid()) + ".json")).string();
  explicit TempFile(const std::string& text) { std::ofstream(path) << text; }
  ~TempFile() { fs::remove(path); }
};

// A table that does not parse, in any section, stops the run (kbench exits
// 2 before measuring): a night on the generic rule must not pass as one on
// the table's kernels. The message names the file, the line and the entry.
std::string load_error(const std::string& path) {
  try {
    kb::load_gemv_table(path, kH100, nullptr);
  } catch (const kb::TuningError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GemvTable, ABadSectionIsAnErrorNamingFileLineAndEntry) {
  TempFile f(gemv_text(nlohmann::ordered_json::array({{{"dtype", "int8"}, {"kernel", "Q"}}})));
  const std::string e = load_error(f.path);
  EXPECT_EQ(e.rfind(f.path + ":6: gemv[0].kernel: unknown kernel 'Q'", 0), 0u) << e;
  EXPECT_THROW(kb::load_pins(f.path, kH100, nullptr), kb::TuningError);
}

TEST(GemvTable, MalformedFileIsAnErrorAnotherGpusTableIsNotUsed) {
  {
    TempFile f("{ not json");
    EXPECT_NE(load_error(f.path).find(f.path + ":1:4: not valid JSON"), std::string::npos)
        << load_error(f.path);
  }
  {
    TempFile f(gemv_text(nlohmann::ordered_json::array({{{"dtype", "int8"}, {"kernel", "T4"}}})));
    std::string warning;
    EXPECT_TRUE(kb::load_gemv_table(f.path, "NVIDIA H200", &warning).empty());
    EXPECT_NE(warning.find("not this GPU"), std::string::npos) << warning;
    EXPECT_EQ(kb::load_gemv_table(f.path, kH100, &warning).size(), 1u);
  }
  std::string warning;
  EXPECT_TRUE(kb::load_gemv_table("/nonexistent/t.json", kH100, &warning).empty());
  EXPECT_EQ(warning, "");
}

}  // namespace

TEST(GemvTune, PickKeepsTheGenericChoiceUnlessAnotherIsTwoPercentFaster) {
  const kb::GemvShape s{true, 4096, 4096, 1, ""};
  auto t = [](const char* k, double us) {
    return kb::CandidateTime{*gemv::parse_kernel(k), us * 1e-6, 0.01};
  };
  auto within = kb::pick_candidate(s, {t("T4", 10.0), t("R2U1W8P1K2", 9.9), t("one8", 12.0)});
  EXPECT_EQ(gemv::kernel_name(within.best), "T4");
  EXPECT_EQ(within.runner_up, "R2U1W8P1K2");
  auto faster = kb::pick_candidate(s, {t("T4", 10.0), t("one8", 12.0), t("R2U1W8P1K2", 9.0)});
  EXPECT_EQ(gemv::kernel_name(faster.best), "R2U1W8P1K2");
  EXPECT_DOUBLE_EQ(faster.best_us, 9.0);
  EXPECT_EQ(faster.generic, "T4");  // the generic rule's choice at 4096² int8
  EXPECT_DOUBLE_EQ(faster.generic_us, 10.0);
  EXPECT_EQ(faster.runner_up, "T4");
  auto alone = kb::pick_candidate(s, {t("T4", 10.0)});
  EXPECT_EQ(gemv::kernel_name(alone.best), "T4");
  EXPECT_TRUE(alone.runner_up.empty());
}

TEST(GemvTune, FinalistsAreThePresentChoiceTheGenericAndTheScreensFastest) {
  auto t = [](const char* k, double us) {
    return kb::CandidateTime{*gemv::parse_kernel(k), us * 1e-6, 0};
  };
  const std::vector<kb::CandidateTime> screen = {t("T4", 11), t("one8", 14), t("R2U1W8P1K2", 9),
                                                 t("R4U1W4P0K1", 10), t("M4W4K1", 12)};
  auto names = [&](const char* keep, int n) {
    std::vector<std::string> v;
    for (const auto& k : kb::finalists(*gemv::parse_kernel(keep), screen, n))
      v.push_back(gemv::kernel_name(k));
    return v;
  };
  EXPECT_EQ(names("one8", 2), (std::vector<std::string>{"one8", "T4", "R2U1W8P1K2", "R4U1W4P0K1"}));
  EXPECT_EQ(names("T4", 2), (std::vector<std::string>{"T4", "R2U1W8P1K2", "R4U1W4P0K1"}));
  EXPECT_EQ(names("R2U1W8P1K2", 2),
            (std::vector<std::string>{"R2U1W8P1K2", "T4", "R4U1W4P0K1", "M4W4K1"}));
  EXPECT_EQ(names("T4", 10).size(), screen.size());
  EXPECT_EQ(kb::finalists(*gemv::parse_kernel("T4"), {}, 3).size(), 1u);
}

TEST(GemvTune, SearchesEveryCompiledInstantiationAndNothingElse) {
  auto names = [](bool int8) {
    std::vector<std::string> out;
    for (const auto& k : kb::gemv_candidates({int8, 4096, 4096, 1, ""}))
      out.push_back(gemv::kernel_name(k));
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const char* n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  const auto bf16 = names(false), int8 = names(true);
  for (const char* n :
       {"R2U1W8P1K2", "R4U1W4P0K1", "R1U2W8P0K8", "R2U2W8P0K1", "B3W8S2O1R2", "B3W16S3O0R1"})
    EXPECT_TRUE(has(bf16, n)) << n;
  for (const char* n : {"M4W4K1", "GM2W8K4D3", "BM3W8S1O2R2", "T8", "R2U1W4P1K2"})
    EXPECT_TRUE(has(int8, n)) << n;
  // Not compiled: one-token batches of 4 or 8 loads, bulk rings other than 3.
  for (const char* n : {"R1U8W8P0K1", "R2U4W4P0K2", "B4W16S1O2R2", "BM4W8S1O2R2"}) {
    EXPECT_FALSE(has(bf16, n)) << n;
    EXPECT_FALSE(has(int8, n)) << n;
    EXPECT_NE(gemv::refusal(*gemv::parse_kernel(n), true, 4096, 4096, 1), "") << n;
  }
}
