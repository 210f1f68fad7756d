// gemv_tune (hidden): the GEMV kernel's knobs side by side, for choosing
// gemv::default_config on a GPU. Variant "R2U4W4P1K2" = 2 rows per warp, 4
// loads per row per batch, 4 warps per block, software-pipelined (P0: not),
// 2 warps splitting K per row group; "default" = default_config's choice,
// "general" = gemv::general_config (the general kernel: no one-load, bulk,
// tile or mma), "one" / "one8" = with the one-load kernel, in blocks of 4 /
// 8 warps; "B4W16S1O2" = the bulk-copy kernel with a
// ring of 4 buffers, 16 warps per block, 1 block per SM, rows taken in
// order 2 (Config::bulk_rows; O omitted: 2), "...R1" with one row per
// buffer (Config::bulk_rows_per_buffer; R omitted: 0); "M4W8K2" = the
// int8 tensor-core kernel (Config::mma) with 4 units per batch, 8 warps per
// block, 2 warps per tile splitting K ("...D3": 3 batches in flight);
// "T8" = the whole-tile int8 kernel (Config::tile) in blocks of 8 warps;
// "GM2W8K1" = the mma kernel's diagonal variant (Config::mma_diag);
// "BM3W8S2O2R2" = the bulk kernel with tensor-core consumers
// (Config::bulk_mma: int8, 2 rows per buffer). Run with
// `kbench run --filter gemv_tune`; not part of the nightly suite.
#include <cstdio>

#include "suite/experiments/gemv_case.h"

namespace {

// gemv_tune_seed's gathers (E > 1) select 2 experts, 3 and 5, as the
// gather_gemv experiment; plain points (gemv_tune's, or E = 1) select none.
int selected(const kb::Point& p) { return p.shape.has("E") && p["E"] > 1 ? 2 : 1; }

// The int8 tensor-core variants ("M…", "GM…", "T…"; the tile kernel: rows
// of at most 8192 bytes) at the points they serve; every other variant at all.
bool serves(const kb::Point& p) {
  const char k = p.variant[0];
  if (k == 'T') return p.dtype == kb::DType::i8 && p["K"] <= 8192;
  if (k == 'M' || k == 'G' || p.variant.rfind("BM", 0) == 0) return p.dtype == kb::DType::i8;
  return true;
}

kb::gemv::Config parse(const std::string& v, const kb::Point& p) {
  kb::gemv::Config c;
  int pipe = 0;
  const bool int8 = p.dtype == kb::DType::i8;
  const int64_t N = kb::gemv_experiment::rows_of(p), K = kb::gemv_experiment::cols_of(p);
  const int n_sel = selected(p);
  if (v == "default") return kb::gemv::default_config(int8, N, K, n_sel);  // what the entries pick
  if (v == "general" || v == "one" || v == "one8") {  // without / with the one-load kernel
    c = kb::gemv::general_config(int8, N, K, n_sel);  // never bulk, mma or tile
    c.one_load = v != "general";
    if (v != "general") c.warps_per_block = v == "one8" ? 8 : 4;
    return c;
  }
  if (std::sscanf(v.c_str(), "T%d", &c.warps_per_block) == 1) {
    c.tile = true;
    return c;
  }
  int stages = 0, warps = 0, per_sm = 0, order = 2, rs = 0;
  const bool bulk_mma = v.rfind("BM", 0) == 0;  // "BM3W8S2...": the tensor-core consumers
  if (v[0] == 'B' && std::sscanf(v.c_str() + (bulk_mma ? 2 : 1), "%dW%dS%dO%dR%d", &stages, &warps,
                                 &per_sm, &order, &rs) >= 3) {
    c = kb::gemv::bulk_config(stages, warps, per_sm, order, rs);
    c.bulk_mma = bulk_mma;
    return c;
  }
  if (std::sscanf(v.c_str() + (v[0] == 'G' ? 1 : 0), "M%dW%dK%dD%d", &c.unroll, &c.warps_per_block,
                  &c.k_split, &c.mma_depth) >= 3) {
    c.mma = true;
    c.mma_diag = v[0] == 'G';  // "GM...": the diagonal variant
    return c;
  }
  if (std::sscanf(v.c_str(), "R%dU%dW%dP%dK%d", &c.rows_per_warp, &c.unroll, &c.warps_per_block,
                  &pipe, &c.k_split) != 5)
    throw std::invalid_argument("gemv_tune: bad variant '" + v + "'");
  c.pipeline = pipe != 0;
  return c;
}

}  // namespace

KB_EXPERIMENT(gemv_tune) {
  using kb::Shape;
  return kb::Experiment("gemv_tune")
      .doc("GEMV kernel configurations side by side (rows per warp, unroll, warps per block)")
      .hidden()
      .point(Shape{{"N", 1024}, {"K", 1024}})
      .point(Shape{{"N", 4096}, {"K", 4096}})
      .point(Shape{{"N", 16384}, {"K", 16384}})
      .point(Shape{{"N", 4096}, {"K", 11008}})
      .point(Shape{{"N", 22016}, {"K", 4096}})
      .point(Shape{{"N", 12288}, {"K", 4096}})
      .point(Shape{{"N", 1024}, {"K", 14336}})  // the MLP's down projection at D=1024
      .point(Shape{{"N", 14336}, {"K", 1024}})
      .point(Shape{{"N", 14336}, {"K", 16384}})  // the MLP's up projection at D=16384
      .dtypes({kb::DType::i8, kb::DType::bf16})
      .variants({"default",    "general",    "R1U8W4P0K1", "R1U8W8P0K1", "R1U4W4P0K2", "R1U4W8P0K2",
                 "R1U2W8P0K4", "R2U4W4P0K2", "R2U2W4P0K4", "R1U4W4P1K2", "R2U2W4P1K2", "R2U1W8P1K2",
                 "M4W4K1",     "M4W8K2",     "M8W8K2",     "M2W8K4",     "M4W8K4",     "M2W8K8",
                 "M4W8K8",     "M8W8K8",     "M8W8K4",     "M8W4K4",     "M4W4K4",     "M2W8K8D3",
                 "M4W8K8D3",   "M2W8K4D3",   "M4W8K4D3",   "M4W4K4D3",   "M2W4K2D3",   "M4W8K2D3",
                 "T4",         "T8",         "R2U2W8P0K4", "R2U2W8P0K8", "R4U2W4P0K4", "R2U4W4P0K4",
                 "R2U1W4P0K4", "R4U1W4P0K4", "R2U2W4P1K4", "R4U2W8P0K8", "R2U4W8P0K8", "R1U2W4P0K4",
                 "R1U4W4P0K4", "R4U4W4P0K4", "R2U2W8P1K8", "R2U1W8P1K8", "GM1W8K1",    "GM2W8K1",
                 "GM4W8K1",    "GM2W8K2",    "GM2W4K1",    "GM2W4K2",    "GM2W8K4",    "GM1W8K4",
                 "GM2W8K1D3",  "GM4W4K1"})
      .applies(serves)
      .metrics({kb::Metric::memory_bandwidth})
      .work([](const kb::Point& p) { return kb::gemv_experiment::gemv_work(p, 1); })
      .make([](const kb::Point& p) {
        const kb::gemv::Config c = parse(p.variant, p);
        return std::make_unique<kb::gemv_experiment::GemvCase>(p, 1, 1, std::vector<int32_t>{}, &c);
      });
}

// The seed's shapes at their two ends, plain (E=1) and gathered as the
// gather_gemv experiment (E=8, experts 3 and 5): where the small shapes'
// launch floor and the large int8 shape's conversion work decide.
// `kbench run --filter gemv_tune_seed`.
KB_EXPERIMENT(gemv_tune_seed) {
  using kb::Shape;
  return kb::Experiment("gemv_tune_seed")
      .doc("GEMV configurations at the seed's D=1024 and D=16384, plain and gathered")
      .hidden()
      .point(Shape{{"N", 1024}, {"K", 1024}, {"E", 1}})
      .point(Shape{{"N", 1024}, {"K", 1024}, {"E", 8}})
      .point(Shape{{"N", 4096}, {"K", 4096}, {"E", 1}})
      .point(Shape{{"N", 4096}, {"K", 4096}, {"E", 8}})
      .point(Shape{{"N", 16384}, {"K", 16384}, {"E", 1}})
      .point(Shape{{"N", 16384}, {"K", 16384}, {"E", 8}})
      .dtypes({kb::DType::i8, kb::DType::bf16})
      .variants({"default",     "general",      "one",          "one8",         "B3W8S2O2R2",
                 "B3W8S2O1R2",  "B4W16S1O2R2",  "B4W16S1O2R1",  "B6W16S1O2R1",  "B6W16S1O2R2",
                 "B4W8S2O2R2",  "B4W8S2O2R1",   "B3W16S2O2R2",  "B4W16S1O1R2",  "BM3W8S2O2R2",
                 "BM4W8S1O2R2", "BM3W16S2O2R2", "BM4W16S1O2R2", "BM3W16S1O2R2", "BM3W8S2O1R2",
                 "BM3W8S2O0R2", "M4W8K2",       "M8W8K2",       "M4W8K4",       "M4W4K4",
                 "M4W8K2D3",    "M4W8K4D3",     "M2W8K4D3",     "T4",           "T8",
                 "GM2W8K1",     "GM4W8K1",      "GM2W8K2",      "GM2W4K1"})
      .metrics({kb::Metric::memory_bandwidth})
      .applies([](const kb::Point& p) {  // here: one-load at K = 1024 only, bulk and mma not there
        if (p.variant.rfind("one", 0) == 0) return p["K"] == 1024;
        if (p.variant[0] == 'B') return p["K"] == 16384 && serves(p);
        if (p.variant[0] == 'M' || p.variant[0] == 'G') return serves(p) && p["K"] > 1024;
        return serves(p);
      })
      .work([](const kb::Point& p) { return kb::gemv_experiment::gemv_work(p, selected(p)); })
      .make([](const kb::Point& p) {
        const kb::gemv::Config c = parse(p.variant, p);
        const int n_sel = selected(p);
        return std::make_unique<kb::gemv_experiment::GemvCase>(
            p, static_cast<int>(p["E"]), n_sel,
            n_sel > 1 ? std::vector<int32_t>{3, 5} : std::vector<int32_t>{}, &c);
      });
}
