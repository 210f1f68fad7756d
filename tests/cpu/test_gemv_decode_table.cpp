// The decode step's table entries (kernels/gemv/dispatch.h: `decode`,
// `swiglu` and `combine` uses; core/tuning.h), without a GPU: each takes a
// table's entry only where its launch serves it, and a re-tune of the
// standalone shapes keeps them.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/tuning.h"
#include "kernels/gemv/dispatch.h"

namespace {

namespace gemv = kb::gemv;
using J = nlohmann::ordered_json;

gemv::TableEntry entry(bool int8, bool gather, gemv::Use use, int64_t rows, int64_t row_bytes,
                       const char* kernel) {
  gemv::TableEntry e;
  e.bucket.int8 = int8;
  e.bucket.gather = gather;
  e.bucket.use = use;
  e.bucket.rows_min = e.bucket.rows_max = rows;
  e.bucket.row_bytes_min = e.bucket.row_bytes_max = row_bytes;
  e.kernel = *gemv::parse_kernel(kernel);
  return e;
}

std::string name(const gemv::Config& c) { return gemv::kernel_name(c.kernel); }

TEST(GemvDecodeTable, TheSwigluTakesAnEntryItCanServeAndOnlyForItsShape) {
  // Llama-2-7B's gate/up: F = 11008, K = 4096, rows 2F.
  const std::string rule = name(gemv::tokens_config(false, 22016, 4096, 1, true));
  const auto t = std::vector<gemv::TableEntry>{
      entry(false, false, gemv::Use::swiglu, 22016, 8192, "R2U2W8P1K2")};
  EXPECT_EQ(name(gemv::swiglu_config_in(t, false, 11008, 4096, 1)), "R2U2W8P1K2");
  EXPECT_NE(rule, "R2U2W8P1K2");
  EXPECT_EQ(name(gemv::swiglu_config_in(t, false, 14336, 4096, 1)),
            name(gemv::tokens_config(false, 28672, 4096, 1, true)));
  EXPECT_EQ(name(gemv::swiglu_config_in(t, true, 11008, 4096, 1)),
            name(gemv::tokens_config(true, 22016, 4096, 1, true)));
  // Neither the standalone nor the decode step's plain GEMV of that shape sees it.
  EXPECT_EQ(name(gemv::choose_in(t, false, 22016, 4096, 1, gemv::Use::decode).config),
            name(gemv::general_config(false, 22016, 4096)));
  EXPECT_EQ(gemv::choose_in(t, false, 22016, 4096).source, "generic");
  // One row a warp cannot pair gate and up: refused, the rule runs it.
  const auto bad = std::vector<gemv::TableEntry>{
      entry(false, false, gemv::Use::swiglu, 22016, 8192, "R1U2W4P1K1")};
  EXPECT_EQ(name(gemv::swiglu_config_in(bad, false, 11008, 4096, 1)), rule);
  // The row-block kernel serves the bf16 SwiGLU, dense and gathered, where its rows fit.
  const auto rb =
      std::vector<gemv::TableEntry>{entry(false, false, gemv::Use::swiglu, 22016, 8192, "RB4"),
                                    entry(false, true, gemv::Use::swiglu, 28672, 8192, "RB8")};
  EXPECT_EQ(name(gemv::swiglu_config_in(rb, false, 11008, 4096, 1)), "RB4");
  EXPECT_EQ(name(gemv::swiglu_config_in(rb, false, 14336, 4096, 2)), "RB8");
}

TEST(GemvDecodeTable, GatherAndCombineEntriesKeepTheirLaunchesLimits) {
  // Mixtral int8: gate/up gather 2F = 28672 (2 experts), down 4096x14336.
  const auto t = std::vector<gemv::TableEntry>{
      entry(true, true, gemv::Use::swiglu, 28672, 4096, "R2U2W4P1K1B8"),
      entry(true, true, gemv::Use::combine, 4096, 14336, "R2U1W4P0K2B8")};
  EXPECT_EQ(name(gemv::swiglu_config_in(t, true, 14336, 4096, 2)), "R2U2W4P1K1B8");
  EXPECT_EQ(name(gemv::combine_config_in(t, true, 4096, 14336, 2)), "R2U1W4P0K2B8");
  EXPECT_EQ(name(gemv::combine_config_in({}, true, 4096, 14336, 2)),
            name(gemv::combine_config(true, 4096, 14336)));
  // min_blocks is compiled for the SwiGLU (dense or gather) of at most 4 warps: 7 or 8.
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("R2U2W8P1K1B7"), true, 4096), "");
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("R2U2W4P1K1B9"), true, 4096), "");
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("R2U2W4P1K1B6"), true, 4096), "");
  EXPECT_EQ(gemv::swiglu_refusal(*gemv::parse_kernel("R2U2W4P1K1B8"), true, 4096), "");
  EXPECT_EQ(gemv::swiglu_refusal(*gemv::parse_kernel("R2U2W4P1K1B7"), true, 4096), "");
  // Batches of one load: the int8 SwiGLU's only (docs/decisions/0059).
  EXPECT_EQ(gemv::swiglu_refusal(*gemv::parse_kernel("R2U1W4P1K1B7"), true, 4096), "");
  EXPECT_EQ(gemv::swiglu_refusal(*gemv::parse_kernel("R2U1W4P1K1"), true, 4096), "");
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("R2U1W4P1K1B7"), false, 4096), "");
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("R2U1W4P0K1"), true, 4096), "");
  // The K split as the general kernel's launch takes it: 1, 2, 4 or 8.
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("R2U2W6P1K3"), true, 4096), "");
  // The row-block kernel: bf16 rows of a multiple of 128 · loads weights, at most 16384.
  EXPECT_EQ(gemv::swiglu_refusal(*gemv::parse_kernel("RB4"), false, 4096), "");
  EXPECT_EQ(gemv::swiglu_refusal(*gemv::parse_kernel("RB8"), false, 4096), "");
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("RB4"), true, 4096), "");
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("RB4"), false, 11008), "");
  EXPECT_NE(gemv::swiglu_refusal(*gemv::parse_kernel("RB8"), false, 32768), "");
  EXPECT_NE(gemv::combine_refusal(*gemv::parse_kernel("R2U1W6P0K3"), true), "");
  EXPECT_EQ(gemv::combine_refusal(*gemv::parse_kernel("R2U1W8P0K8"), true), "");
  EXPECT_NE(gemv::combine_refusal(*gemv::parse_kernel("R4U1W4P0K1"), true), "");
  EXPECT_NE(gemv::combine_refusal(*gemv::parse_kernel("R2U1W4P0K2B7"), true), "");
  EXPECT_NE(gemv::combine_refusal(*gemv::parse_kernel("B3W8S2O1R2"), true), "");
}

TEST(GemvDecodeTable, ASwigluOfAnFWhoseRowsOverflowIsRefused) {
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2 + 1;
  const auto t = std::vector<gemv::TableEntry>{
      entry(true, false, gemv::Use::swiglu, 22016, 4096, "R2U1W4P1K1B7")};
  EXPECT_THROW(gemv::swiglu_config_in(t, true, huge, 4096, 1), std::invalid_argument);
  EXPECT_THROW(gemv::swiglu_config_in(t, true, 0, 4096, 1), std::invalid_argument);
  EXPECT_THROW(gemv::gather_swiglu_config(true, huge, 4096), std::invalid_argument);
  EXPECT_EQ(gemv::swiglu_rows(11008), 22016);
}

TEST(GemvDecodeTable, EveryUseReadsBackAndAnUnknownOneIsNamed) {
  J list = J::array();
  for (auto u : {gemv::Use::standalone, gemv::Use::decode, gemv::Use::swiglu, gemv::Use::combine})
    list.push_back(kb::gemv_entry_json(entry(true, false, u, 4096, 4096, "R2U2W4P1K1"), J()));
  J doc = {{"gpu", "NVIDIA H200"}, {"gemv", list}};
  const auto t = kb::parse_gemv_table(kb::parse_tuning_file(doc.dump(2), "x.json").doc, "x.json");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].bucket.use, gemv::Use::standalone);
  EXPECT_EQ(t[1].bucket.use, gemv::Use::decode);
  EXPECT_EQ(t[2].bucket.use, gemv::Use::swiglu);
  EXPECT_EQ(t[3].bucket.use, gemv::Use::combine);
  EXPECT_FALSE(list[0].contains("use"));
  doc["gemv"][1]["use"] = "prefill";
  try {
    kb::parse_gemv_table(kb::parse_tuning_file(doc.dump(2), "x.json").doc, "x.json");
    ADD_FAILURE() << "no error";
  } catch (const kb::TuningError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gemv[1].use"), std::string::npos) << what;
    EXPECT_NE(what.find("\"combine\""), std::string::npos) << what;
  }
}

// The error a gemv section gives, or "".
std::string table_error(const J& list) {
  const J doc = {{"gpu", "G"}, {"gemv", list}};
  try {
    const kb::TuningFile f = kb::parse_tuning_file(doc.dump(2), "x.json");
    kb::parse_gemv_table(f.doc, "x.json", &f.lines);
  } catch (const kb::TuningError& e) {
    return e.what();
  }
  return "";
}

// An entry whose kernel parses but serves none of its bucket's shapes, as
// the dispatch refuses them (core/gemv_refusal.h), is refused when the
// table is read: the dispatch would pass it over at every shape, and the
// generic rule run them while the table says otherwise.
TEST(GemvDecodeTable, AnEntryThatCanNeverRunIsRefusedWhenRead) {
  const auto at = [](const J& e) { return table_error(J::array({e})); };
  const auto int8_rows = [](const char* kernel, J row_bytes) {
    return J{
        {"dtype", "int8"}, {"rows", {1, nullptr}}, {"row_bytes", row_bytes}, {"kernel", kernel}};
  };
  EXPECT_EQ(at(int8_rows("T3", {1024, 4096})),
            "x.json:14: gemv[0].kernel: 'T3' can run none of this entry's shapes: the tile kernel "
            "has blocks of 4 or 8 warps");
  // Whatever the shape: every reason met.
  EXPECT_EQ(at(int8_rows("T3", {1, nullptr})),
            "x.json:14: gemv[0].kernel: 'T3' can run none of this entry's shapes: the tile kernel "
            "has blocks of 4 or 8 warps; the tile kernel needs int8 rows of at most 8 KB");
  // A kernel that serves no shape of this bucket, and one that serves some.
  EXPECT_NE(at(int8_rows("T4", {16384, nullptr})).find("needs int8 rows of at most 8 KB"),
            std::string::npos);
  EXPECT_NE(at({{"dtype", "bfloat16"}, {"kernel", "GM4W4K1"}}).find("the mma kernel needs int8"),
            std::string::npos);
  EXPECT_EQ(at(int8_rows("T4", {1, nullptr})), "");
  EXPECT_EQ(at(int8_rows("one8", {1, nullptr})), "");  // rows of 512, 1024 or 2048 bytes
  // The decode step's SwiGLU and combine, by their own rules.
  EXPECT_NE(at({{"dtype", "int8"}, {"use", "swiglu"}, {"kernel", "R1U2W4P1K1"}})
                .find("'R1U2W4P1K1' can run none of this entry's shapes: the SwiGLU takes"),
            std::string::npos);
  // The row-block SwiGLU: bf16 rows it takes somewhere in the bucket (decision 0064).
  const auto rb_swiglu = [](const char* dtype, J row_bytes) {
    return J{{"dtype", dtype}, {"use", "swiglu"}, {"row_bytes", row_bytes}, {"kernel", "RB4"}};
  };
  EXPECT_EQ(at(rb_swiglu("bfloat16", {8192, 8192})), "");
  EXPECT_EQ(at(rb_swiglu("bfloat16", {1, nullptr})), "");
  EXPECT_NE(at(rb_swiglu("bfloat16", {22016, 22016})).find("the row-block kernel needs bf16 rows"),
            std::string::npos);
  EXPECT_NE(at(rb_swiglu("int8", {4096, 4096})).find("the row-block kernel needs bf16 rows"),
            std::string::npos);
  EXPECT_NE(at({{"dtype", "int8"}, {"use", "combine"}, {"kernel", "R2U1W8P1K2B8"}})
                .find("min_blocks 8 only for int8, 2 rows a warp, at most 4 warps"),
            std::string::npos);
  // A bucket that holds no shape a GEMV can have (nor, at 2^60 rows, any
  // whose bytes an int64_t counts).
  EXPECT_NE(at({{"dtype", "int8"}, {"rows", {int64_t(1) << 60, nullptr}}, {"kernel", "T4"}})
                .find("its bucket holds no shape"),
            std::string::npos);
  EXPECT_NE(at(int8_rows("R2U1W4P1K2", {1, 15})).find("its bucket holds no shape"),
            std::string::npos);
  // Row bytes near the largest int64_t: refused, no sum overflows (a SwiGLU bucket too).
  EXPECT_NE(at(int8_rows("T4", {INT64_MAX - 1, nullptr})).find("its bucket holds no shape"),
            std::string::npos);
  EXPECT_NE(at({{"dtype", "bfloat16"},
                {"use", "swiglu"},
                {"row_bytes", {INT64_MAX - 1, nullptr}},
                {"kernel", "RB4"}})
                .find("can run none of this entry's shapes"),
            std::string::npos);
}

TEST(GemvDecodeTable, AReTuneKeepsTheEntriesItDoesNotMeasure) {
  const J doc = {{"gpu", "NVIDIA H200"},
                 {"gemv",
                  {{{"kernel", "T4"}},
                   {{"use", "standalone"}, {"kernel", "T4"}},
                   {{"use", "decode"}, {"kernel", "R2U1W4P1K2"}},
                   {{"use", "swiglu"}, {"kernel", "R2U2W4P1K1"}},
                   {{"use", "combine"}, {"kernel", "R2U2W4P0K2B8"}}}}};
  const J kept = kb::untuned_gemv_entries(doc);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0]["use"], "decode");
  EXPECT_EQ(kept[2]["kernel"], "R2U2W4P0K2B8");
  EXPECT_TRUE(kb::untuned_gemv_entries(J::object()).empty());
}

}  // namespace

// The shipped H200 table's entries as the decoders and the suite read them:
// each one-token shape takes the kernel its entry names.
TEST(GemvDecodeTable, TheH200TableChoosesWhatItsEntriesMeasured) {
  std::string warning;
  const auto t =
      kb::load_gemv_table(std::string(KBENCH_SOURCE_DIR) + "/targets/tuning/h200-sxm-141gb.json",
                          "NVIDIA H200", &warning);
  ASSERT_FALSE(t.empty()) << warning;
  // Mixtral int8's gate/up gather (2F = 28672, two experts) and Llama's gate/up (decision 0065).
  EXPECT_EQ(name(gemv::swiglu_config_in(t, true, 14336, 4096, 2)), "DP2U2K1W8");
  EXPECT_EQ(name(gemv::swiglu_config_in(t, true, 11008, 4096, 1)), "DP2U2K1W8");
  // The int8 rows of 4 KB on the dp4a kernel but 4097-6144 (not measured); 11008 stays.
  EXPECT_EQ(name(gemv::choose_in(t, true, 4096, 4096).config), "DP1U4K1W8");
  EXPECT_EQ(name(gemv::choose_in(t, true, 6144, 4096).config), "R2U1W4P1K1");
  EXPECT_EQ(name(gemv::choose_in(t, true, 12288, 4096).config), "DP2U2K1W8");
  EXPECT_EQ(name(gemv::choose_in(t, true, 32000, 4096).config), "DP2U2K1W8");
  EXPECT_EQ(name(gemv::choose_in(t, true, 8192, 8192, 2).config), "DP2U2K2W8");
  EXPECT_EQ(name(gemv::choose_in(t, true, 4096, 11008).config), "R2U1W4P1K2");
  EXPECT_EQ(name(gemv::choose_in(t, true, 16384, 16384).config), "BM3W8S2O2R2");
  EXPECT_EQ(name(gemv::swiglu_config_in(t, false, 11008, 4096, 1)), "RB4");  // decision 0064
  // The row-block kernels' bf16 rows (decisions 0061, 0062), and the bulk kernel past them.
  EXPECT_EQ(name(gemv::choose_in(t, false, 4096, 4096).config), "RB4");
  EXPECT_EQ(name(gemv::choose_in(t, false, 8192, 8192).config), "RB4");
  EXPECT_EQ(name(gemv::choose_in(t, false, 6144, 4096).config), "R2U1W4P0K2");
  EXPECT_EQ(name(gemv::choose_in(t, false, 32000, 4096).config), "RB4");  // decision 0063
  // Llama-2-7B's qkv in the decode step, and its lm_head (no decode entry: the general rule).
  EXPECT_EQ(name(gemv::choose_in(t, false, 12288, 4096, 1, gemv::Use::decode).config), "RB4");
  EXPECT_EQ(name(gemv::choose_in(t, false, 32000, 4096, 1, gemv::Use::decode).config),
            name(gemv::general_config(false, 32000, 4096, 1)));
  EXPECT_EQ(name(gemv::choose_in(t, false, 4096, 4096, 2).config), "RB4");
  EXPECT_EQ(name(gemv::choose_in(t, false, 8192, 8192, 2).config), "RB8");
  EXPECT_EQ(name(gemv::choose_in(t, false, 14336, 8192).config), "B3W8S2O1R2");
  EXPECT_EQ(name(gemv::choose_in(t, false, 16384, 16384).config), "RB8");
  EXPECT_EQ(name(gemv::choose_in(t, false, 16384, 16384, 2).config), "RB8");
}
