// The decode step's stage of `kbench tune gemv` (suite/gemv_tune.h), its
// CPU half: which projections of a model it tunes, the candidates each
// launch serves, and the entry a winner becomes (read back by the table).
#include <gtest/gtest.h>

#include <set>
#include <variant>

#include "kernels/gemv/dispatch.h"
#include "suite/gemv_tune.h"

namespace {

namespace gemv = kb::gemv;

kb::decode::ModelConfig llama() {
  kb::decode::ModelConfig c;
  c.dim = 4096, c.n_layers = 32, c.n_heads = 32, c.n_kv_heads = 32, c.head_dim = 128;
  c.ffn = 11008, c.vocab = 32000;
  return c;
}

kb::decode::ModelConfig mixtral() {
  kb::decode::ModelConfig c = llama();
  c.n_kv_heads = 8, c.ffn = 14336, c.n_experts = 8, c.top_experts = 2;
  return c;
}

TEST(GemvTuneDecode, ADenseModelTunesItsFiveProjectionsAMoeItsFour) {
  const auto d = kb::decode_projections(llama(), true);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].what, "qkv");
  EXPECT_EQ(d[0].rows, 12288);
  EXPECT_EQ(d[2].use, gemv::Use::swiglu);
  EXPECT_EQ(d[2].rows, 2 * 11008);
  EXPECT_EQ(d[3].what, "down");
  EXPECT_EQ(d[3].cols, 11008);
  const auto m = kb::decode_projections(mixtral(), true);
  ASSERT_EQ(m.size(), 4u);  // no o projection: it carries the router's blocks
  EXPECT_EQ(m[0].rows, 4096 + 2 * 1024);
  EXPECT_EQ(m[1].use, gemv::Use::swiglu);
  EXPECT_EQ(m[1].n_sel, 2);
  EXPECT_EQ(m[2].use, gemv::Use::combine);
  EXPECT_EQ(m[3].what, "lm head");
}

TEST(GemvTuneDecode, CandidatesAreGeneralRowBlockAndDp4aKernelsTheLaunchServes) {
  for (const auto& c : {llama(), mixtral()})
    for (const bool int8 : {false, true})
      for (const auto& p : kb::decode_projections(c, int8)) {
        const auto cands = kb::decode_candidates(p);
        EXPECT_GT(cands.size(), 3u) << p.what;
        int row_blocks = 0, dp4a = 0;
        for (const auto& k : cands) {
          const bool rb = std::holds_alternative<gemv::RowBlock>(k);
          const bool dp = std::holds_alternative<gemv::Dp4a>(k);
          row_blocks += rb;
          dp4a += dp;
          EXPECT_TRUE(rb || dp || std::holds_alternative<gemv::General>(k)) << gemv::kernel_name(k);
          if (p.use == gemv::Use::swiglu)
            EXPECT_EQ(gemv::swiglu_refusal(k, int8, p.cols), "") << gemv::kernel_name(k);
          if (p.use == gemv::Use::combine)
            EXPECT_EQ(gemv::combine_refusal(k, int8), "") << gemv::kernel_name(k);
        }
        // RB4 at bf16 rows of a multiple of 512 weights up to 16384, RB8 at 1024; not the combine.
        const bool rb = !int8 && p.use != gemv::Use::combine && p.cols <= 16384;
        EXPECT_EQ(row_blocks, rb ? (p.cols % 512 == 0) + (p.cols % 1024 == 0) : 0) << p.what;
        // dp4a: int8 rows of at most 16384 weights, not the combine; the SwiGLU at 1 or 2 rows a
        // warp (4 of the 6 compiled).
        const bool dp = int8 && p.use != gemv::Use::combine && p.cols <= 16384;
        EXPECT_EQ(dp4a, !dp ? 0 : p.use == gemv::Use::swiglu ? 4 : 6) << p.what;
      }
}

TEST(GemvTuneDecode, TheInt8SwigluIsAlsoSearchedWithBatchesOfOneLoad) {
  // docs/decisions/0059: unroll 1 won the int8 SwiGLU of the Llama step,
  // lost the bf16 one (not compiled).
  for (const auto& c : {llama(), mixtral()})
    for (const bool int8 : {false, true})
      for (const auto& p : kb::decode_projections(c, int8)) {
        if (p.use != gemv::Use::swiglu) continue;
        std::set<int> unrolls;
        for (const auto& k : kb::decode_candidates(p))
          if (const auto* g = std::get_if<gemv::General>(&k)) unrolls.insert(g->unroll);
        const std::set<int> want = int8 ? std::set<int>{1, 2} : std::set<int>{2};
        EXPECT_EQ(unrolls, want) << p.what;
      }
}

TEST(GemvTuneDecode, TheSwigluAndCombineAreSearchedWithTheirRegisterCaps) {
  for (const auto& c : {llama(), mixtral()})
    for (const bool int8 : {false, true})
      for (const auto& p : kb::decode_projections(c, int8)) {
        std::set<int> caps;
        for (const auto& k : kb::decode_candidates(p))
          if (const auto* g = std::get_if<gemv::General>(&k)) caps.insert(g->min_blocks);
        const std::set<int> want = p.use == gemv::Use::swiglu            ? std::set<int>{0, 7, 8}
                                   : int8 && p.use == gemv::Use::combine ? std::set<int>{0, 8}
                                                                         : std::set<int>{0};
        EXPECT_EQ(caps, want) << p.what << (int8 ? " int8" : " bf16");
      }
}

TEST(GemvTuneDecode, AWinnersEntryIsChosenForItsProjectionOnly) {
  for (const auto& p : kb::decode_projections(mixtral(), true)) {
    const auto cands = kb::decode_candidates(p);
    const gemv::Kernel k = cands.back();
    const std::vector<gemv::TableEntry> table = {kb::decode_entry(p, k)};
    gemv::Config got;
    if (p.use == gemv::Use::swiglu)
      got = gemv::swiglu_config_in(table, true, p.rows / 2, p.cols, p.n_sel);
    else if (p.use == gemv::Use::combine)
      got = gemv::combine_config_in(table, true, p.rows, p.cols, p.n_sel);
    else
      got = gemv::choose_in(table, true, p.rows, p.cols, 1, gemv::Use::decode).config;
    EXPECT_EQ(gemv::kernel_name(got.kernel), gemv::kernel_name(k)) << p.what;
    // The bf16 weights' projection of that shape is not the entry's.
    if (p.use == gemv::Use::decode)
      EXPECT_FALSE(
          gemv::choose_in(table, false, p.rows, p.cols, 1, gemv::Use::decode).from_table());
  }
}

}  // namespace
